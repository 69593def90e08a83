"""Claim cells: the one way a chapter records the verdict on a paper's result.

Every chapter ends each verification with a call to :func:`check_claim`. The call
prints a one-line verdict and raises :class:`ClaimFailed` when the computation does
not support the claim, so a failing claim fails notebook execution, the book build
and the nbval run. The claims ledger (``book/claims.yml``) lists every claim id; a
test checks that each ledger entry is checked by exactly one claim cell.
"""

from __future__ import annotations

import re

VERDICTS = ("verified", "verified with correction", "not reproducible")
_ID = re.compile(r"^[A-Z][A-Z0-9]*(-[A-Za-z0-9.]+)+$")


class ClaimFailed(AssertionError):
    """Raised by :func:`check_claim` when the evidence does not support a claim."""


def check_claim(claim_id: str, *, passed: bool, evidence: str, verdict: str = "verified") -> None:
    """Record the verdict on one ledger claim.

    Prints the line ``<id>: <verdict>. <evidence>`` and returns nothing, so that a
    claim cell shows exactly one line of output.

    Parameters
    ----------
    claim_id : str
        Ledger id, e.g. ``"S0-L3"`` (seed 000, Lemma 3) or ``"F-GAUSS-RDP"``
        (a background result checked in the Foundations chapter).
    passed : bool
        Outcome of the check (an exact comparison, or a Monte Carlo test with a
        CLT-based tolerance). Must be a real boolean, not an array.
    evidence : str
        One line with the numbers behind the verdict (error, tolerance, trials).
    verdict : {"verified", "verified with correction", "not reproducible"}
        What the ledger says about the paper's statement when ``passed`` holds.
        ``"verified with correction"`` means the check passes for the corrected
        statement documented on the Errata page; ``"not reproducible"`` means the
        check establishes that the paper's statement cannot be reproduced.

    Raises
    ------
    ClaimFailed
        If ``passed`` is false.
    ValueError
        For a malformed id, an unknown verdict or a non-boolean ``passed``.

    Examples
    --------
    >>> check_claim("F-DEMO", passed=True, evidence="1 == 1")
    F-DEMO: verified. 1 == 1
    """
    if not isinstance(claim_id, str) or not _ID.match(claim_id):
        raise ValueError(f"claim_id must look like 'S0-L3' or 'F-GAUSS-RDP'; got {claim_id!r}")
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}; got {verdict!r}")
    if type(passed).__name__ not in ("bool", "bool_"):
        raise ValueError(f"passed must be a boolean; got {type(passed).__name__}")
    evidence = " ".join(str(evidence).split())
    if not passed:
        raise ClaimFailed(f"{claim_id}: CHECK FAILED. {evidence}")
    print(f"{claim_id}: {verdict}. {evidence}")
