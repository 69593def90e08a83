"""Claim cells: the one way a chapter records the verdict on a paper's result.

Every chapter ends each verification with a call to :func:`check_claim`. ``passed``
always says whether the paper's statement (or, for a corrected claim, the corrected
statement) holds in the computation. The call prints a one-line verdict; when the
statement does not hold it either prints the verdict the chapter expects in that case
(``otherwise``: refuted, not reproduced at the book's scale, …) or, if the chapter did not
expect it, raises :class:`ClaimFailed`, which fails notebook execution, the book build and
the nbval run. The claims ledger (``book/claims/<chapter>.yml``) lists every claim id with
its verdict; a test checks that each ledger entry is checked by exactly one claim cell and
that the stored output prints the ledger's verdict, so a verdict that changes (a paper's
result that now reproduces, or a check that now fails) is caught.

The verdicts
------------
``verified``
    The paper's statement holds.
``verified with correction``
    The corrected statement on the Errata page holds (the ledger entry has an erratum).
``reproduced under another reading``
    The statement holds under a reading of the paper's parameters other than the literal
    one; the ledger entry names the reading.
``refuted``
    The computation shows the statement is false (the ledger entry has an erratum with
    the evidence).
``not reproduced at the book's scale``
    The statement does not hold at the book's reduced scale; the ledger entry says what
    was reduced and gives the result at the papers' scale (``FEDFREQ_SCALE=full``).
``not reproduced on stand-in data``
    The statement does not hold on the stand-in for the paper's dataset; the ledger entry
    says why the stand-in differs.
``not checkable``
    The statement cannot be checked (the ledger entry says why).

At the papers' scale
--------------------
At ``FEDFREQ_SCALE=full`` a claim that does not hold where the chapter did not expect it
does not stop the chapter: the cell prints ``<id>: does not hold at the papers' scale.
<evidence>`` and the run goes on, so that one long run gives a verdict on every claim.
When the environment variable ``FEDFREQ_CLAIM_LOG`` names a file (``make full`` sets it),
every verdict is also appended to it as one JSON line (id, verdict, whether the statement
held, evidence, scale); ``scripts/full_results.py`` turns these into the book's page of
results at the papers' scale.
"""

from __future__ import annotations

import html
import json
import os
import re

from .scale import current_scale

__all__ = ["VERDICTS", "HOLDS", "FAILS", "FULL_SCALE_FAILURE", "LOG_VAR", "ClaimFailed", "check_claim", "claim_slug"]

#: Verdicts printed when the statement holds.
HOLDS = ("verified", "verified with correction", "reproduced under another reading")
#: Verdicts a chapter may expect when the statement does not hold.
FAILS = (
    "refuted",
    "not reproduced at the book's scale",
    "not reproduced on stand-in data",
    "not checkable",
)
VERDICTS = HOLDS + FAILS
#: Printed at ``FEDFREQ_SCALE=full`` for a claim that does not hold where the chapter
#: did not expect it (at the default scale that case raises :class:`ClaimFailed`).
FULL_SCALE_FAILURE = "does not hold at the papers' scale"
#: Environment variable naming a file that receives every verdict as a JSON line.
LOG_VAR = "FEDFREQ_CLAIM_LOG"
_ID = re.compile(r"^[A-Z][A-Z0-9]*(-[A-Za-z0-9.]+)+$")
#: Where a chapter's page finds the claims ledger in the built book.
LEDGER_URL = "../book/claims_ledger.html"


def claim_slug(claim_id: str) -> str:
    """The HTML-safe form of a claim id, used in the anchors of the built book.

    The ledger's row of a claim is ``#ledger-<slug>``, the claim cell in its chapter is
    ``#claim-<slug>``.

    Examples
    --------
    >>> claim_slug("S1-P2.1")
    's1-p2-1'
    """
    if not isinstance(claim_id, str) or not _ID.match(claim_id):
        raise ValueError(f"claim_id must look like 'S0-L3' or 'F-GAUSS-RDP'; got {claim_id!r}")
    return re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-")


class _Verdict:
    """A verdict line: plain text, and in a notebook a link to the claim's ledger row."""

    def __init__(self, claim_id: str, verdict: str, evidence: str) -> None:
        self.claim_id, self.verdict, self.evidence = claim_id, verdict, evidence

    def __repr__(self) -> str:
        return f"{self.claim_id}: {self.verdict}. {self.evidence}"

    def _repr_html_(self) -> str:
        slug = claim_slug(self.claim_id)
        return (
            f'<p class="claim-verdict"><a href="{LEDGER_URL}#ledger-{slug}" '
            f'title="this claim in the claims ledger">{html.escape(self.claim_id)}</a>: '
            f"<strong>{html.escape(self.verdict)}</strong>. {html.escape(self.evidence)}</p>"
        )


def _emit(claim_id: str, verdict: str, evidence: str) -> None:
    """Print the verdict line; in a notebook, display it with the link to the ledger."""
    line = _Verdict(claim_id, verdict, evidence)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of the book
        get_ipython = None
    shell = get_ipython() if get_ipython is not None else None
    if shell is None or not hasattr(shell, "kernel"):
        print(repr(line))
        return
    from IPython.display import display

    display(line)


class ClaimFailed(AssertionError):
    """Raised by :func:`check_claim` when the evidence does not support a claim."""


def check_claim(
    claim_id: str,
    *,
    passed: bool,
    evidence: str,
    verdict: str = "verified",
    otherwise: str | None = None,
) -> None:
    """Record the verdict on one ledger claim.

    Prints the line ``<id>: <verdict>. <evidence>`` and returns nothing, so that a
    claim cell shows exactly one line of output. In a notebook the line is displayed
    (plain text, and HTML in which the id links to the claim's row of the claims
    ledger).

    Parameters
    ----------
    claim_id : str
        Ledger id, e.g. ``"S0-L3"`` (the OcPBM paper, Lemma 3) or ``"F-GAUSS-RDP"``
        (a background result checked in the Foundations chapter).
    passed : bool
        Whether the paper's statement (as corrected, for ``"verified with correction"``)
        holds in the computation: an exact comparison, or a Monte Carlo test with a
        CLT-based tolerance. Must be a real boolean, not an array.
    evidence : str
        One line with the numbers behind the verdict (error, tolerance, trials).
    verdict : str
        One of :data:`HOLDS`: the verdict printed when ``passed`` is true.
    otherwise : str, optional
        One of :data:`FAILS`: the verdict printed when ``passed`` is false. Without it, a
        false ``passed`` raises :class:`ClaimFailed`.

    Raises
    ------
    ClaimFailed
        If ``passed`` is false and ``otherwise`` is not given, at the default scale (at
        the papers' scale the line says the claim does not hold, and the run goes on).
    ValueError
        For a malformed id, an unknown verdict or a non-boolean ``passed``.

    Examples
    --------
    >>> check_claim("F-DEMO", passed=True, evidence="1 == 1")
    F-DEMO: verified. 1 == 1
    >>> check_claim("F-DEMO", passed=False, evidence="2 != 3", otherwise="refuted")
    F-DEMO: refuted. 2 != 3
    """
    if not isinstance(claim_id, str) or not _ID.match(claim_id):
        raise ValueError(f"claim_id must look like 'S0-L3' or 'F-GAUSS-RDP'; got {claim_id!r}")
    if verdict not in HOLDS:
        raise ValueError(f"verdict must be one of {HOLDS}; got {verdict!r}")
    if otherwise is not None and otherwise not in FAILS:
        raise ValueError(f"otherwise must be one of {FAILS} or None; got {otherwise!r}")
    if type(passed).__name__ not in ("bool", "bool_"):
        raise ValueError(f"passed must be a boolean; got {type(passed).__name__}")
    if not isinstance(evidence, str):
        raise ValueError(f"evidence must be a string; got {type(evidence).__name__}")
    evidence = " ".join(evidence.split())
    scale = current_scale()
    if passed:
        printed = verdict
    elif otherwise is not None:
        printed = otherwise
    elif scale == "full":
        printed = FULL_SCALE_FAILURE
    else:
        raise ClaimFailed(f"{claim_id}: CHECK FAILED. {evidence}")
    _log(claim_id, printed, bool(passed), evidence, scale)
    _emit(claim_id, printed, evidence)


def _log(claim_id: str, verdict: str, passed: bool, evidence: str, scale: str) -> None:
    """Append the verdict to the file named by ``FEDFREQ_CLAIM_LOG``, if set."""
    target = os.environ.get(LOG_VAR, "").strip()
    if not target:
        return
    record = {"id": claim_id, "verdict": verdict, "passed": passed, "evidence": evidence, "scale": scale}
    with open(target, "a", encoding="utf-8") as stream:
        stream.write(json.dumps(record) + "\n")
