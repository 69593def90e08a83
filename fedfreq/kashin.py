r"""Tight frames and Kashin's representation (the OcPBM paper, Definition 3, Lemma 1, Appendix B).

A *tight frame* (Parseval frame) of :math:`\mathbb R^d` is a set of :math:`D \ge d`
vectors :math:`u_1, \dots, u_D` with :math:`\sum_k \langle x, u_k\rangle^2 = \|x\|_2^2` for
every x; stacking them as the columns of :math:`U \in \mathbb R^{d\times D}` this is
:math:`U U^\top = I_d`. Every x is then :math:`x = \sum_k y[k] u_k = U y` for many
coefficient vectors y; the *frame coefficients* :math:`y = U^\top x` are the one of
smallest ℓ2 norm. A *Kashin representation at level K* is a y with :math:`x = U y` and
:math:`\|y\|_\infty \le K\|x\|_2/\sqrt D` (Kashin 1977; Lyubarskii & Vershynin 2010): the
energy of x is spread evenly over the D coefficients.

Lyubarskii & Vershynin compute it by repeated truncation. If the frame satisfies the
*uncertainty principle* with parameters (η, ν) -- :math:`\|\sum_{k\in\Omega} b_k u_k\|_2
\le \eta\|b\|_2` whenever :math:`|\Omega| \le \nu D` -- then truncating the frame
coefficients at level :math:`M = \|x\|_2/\sqrt{\nu D}` leaves a residual of norm at most
:math:`\eta\|x\|_2` (at most νD coefficients exceed M). Iterating on the residual with
levels :math:`M, \eta M, \eta^2 M, \dots` gives, after r steps, coefficients bounded by
:math:`K\|x\|_2/\sqrt D`, :math:`K = (1-\eta)^{-1}\nu^{-1/2}`, and a residual of norm at
most :math:`\eta^r\|x\|_2`.

References
----------
- Y. Lyubarskii, R. Vershynin. "Uncertainty principles and vector quantization."
  IEEE Trans. Inf. Theory 56(7), 2010.
- B. Kashin. "Section of some finite-dimensional sets and classes of smooth
  functions." Izv. Akad. Nauk SSSR 41, 1977.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import fft, stats

from ._rng import as_generator
from ._validation import SCALE_MAX, check_array, check_bool, check_choice, check_int, check_real, check_scale

__all__ = [
    "tight_frame",
    "frame_coefficients",
    "kashin_representation",
    "kashin_level",
    "uncertainty_eta",
]


def _check_frame(U) -> np.ndarray:
    U = check_array("U", U, ndim=2)
    d, D = U.shape
    if d < 1 or D < d:
        raise ValueError(f"U must have shape (d, D) with 1 <= d <= D; got {U.shape}")
    if not np.allclose(U @ U.T, np.eye(d), atol=1e-8):
        raise ValueError("U must be a tight frame: U @ U.T must equal the identity (atol 1e-8)")
    return U


def _check_x(x, d: int) -> tuple[np.ndarray, bool]:
    arr = check_array("x", x, max_abs=SCALE_MAX)
    if arr.ndim == 1:
        if arr.shape[0] != d:
            raise ValueError(f"x must have length d = {d}; got shape {arr.shape}")
        return arr[None, :], True
    if arr.ndim != 2 or arr.shape[1] != d:
        raise ValueError(f"x must have shape (d,) or (n, d) with d = {d}; got shape {arr.shape}")
    return arr, False


#: Largest frame size D: both constructions build a dense D×D matrix (512 MB at 8192).
MAX_FRAME_SIZE = 8192


def tight_frame(d: int, D: int, *, kind: str = "orthogonal", rng=None) -> np.ndarray:
    r"""A random tight frame :math:`U \in \mathbb R^{d\times D}` (:math:`U U^\top = I_d`).

    ``kind="orthogonal"`` is the OcPBM paper's recipe (Appendix B): the first d columns of a
    Haar-random D×D orthogonal matrix, transposed (``scipy.stats.ortho_group``).
    ``kind="dct"`` takes d distinct random rows of :math:`H\,\mathrm{diag}(s)`, with H the
    orthonormal DCT-II matrix of size D and s uniform random signs: entries bounded by
    :math:`\sqrt{2/D}` and an O(D log D) transform. Bounded entries alone do not make it
    better conditioned: on the OcPBM paper's i.i.d. count data (d = 50, D = 2d and 4d) its plain
    frame coefficients and its Kashin coefficients were measured to be *less* flat than
    with the random orthogonal frame, which therefore stays the default.

    Parameters
    ----------
    d, D : int
        Data dimension d >= 1 and number of frame vectors D >= d, at most
        ``MAX_FRAME_SIZE`` = 8192 (the frame is built from a dense D×D matrix).
    kind : {"orthogonal", "dct"}
    rng : Generator, int or None

    Returns
    -------
    ndarray of shape (d, D)
        Columns are the frame vectors :math:`u_k`.

    Examples
    --------
    >>> U = tight_frame(3, 8, rng=0)
    >>> U.shape, bool(np.allclose(U @ U.T, np.eye(3)))
    ((3, 8), True)
    """
    d = check_int("d", d, low=1, high=MAX_FRAME_SIZE, reason="the frame is built from a dense D x D matrix")
    D = check_int("D", D, low=d, high=MAX_FRAME_SIZE, reason="the frame is built from a dense D x D matrix")
    check_choice("kind", kind, {"orthogonal", "dct"})
    gen = as_generator(rng)
    if kind == "orthogonal":
        if D == 1:
            return np.array([[1.0 if gen.random() < 0.5 else -1.0]])
        Q = stats.ortho_group.rvs(dim=D, random_state=gen)
        return np.ascontiguousarray(Q.T[:, :d].T)
    H = fft.dct(np.eye(D), norm="ortho", axis=0)  # orthonormal DCT-II matrix
    signs = gen.choice([-1.0, 1.0], size=D)
    rows = gen.choice(D, size=d, replace=False)
    return np.ascontiguousarray((H * signs[None, :])[rows])


def frame_coefficients(x, U) -> np.ndarray:
    r"""Frame coefficients :math:`y = U^\top x` (the minimum-ℓ2 representation, ``x = U y``).

    Examples
    --------
    >>> U = tight_frame(2, 4, rng=1)
    >>> x = np.array([3.0, 4.0])
    >>> bool(np.allclose(U @ frame_coefficients(x, U), x))
    True
    """
    U = _check_frame(U)
    X, single = _check_x(x, U.shape[0])
    Y = X @ U
    return Y[0] if single else Y


def kashin_level(eta: float, nu: float) -> float:
    r"""The level :math:`K = (1-\eta)^{-1}\nu^{-1/2}` certified by the truncation algorithm.

    Examples
    --------
    >>> kashin_level(0.5, 0.25)
    4.0
    """
    eta = check_real("eta", eta, low=0.0, high=1.0, low_open=True, high_open=True)
    nu = check_scale("nu", nu, high=1.0)
    return 1.0 / ((1.0 - eta) * math.sqrt(nu))


def kashin_representation(
    x, U, *, eta: float, nu: float, iterations: int = 20, exact: bool = True, unique: bool = False
):
    r"""Kashin coefficients by Lyubarskii & Vershynin's truncation algorithm (the OcPBM paper, App. B).

    Starting from :math:`y = 0`, residual :math:`r = x` and :math:`M = \|x\|_2/\sqrt{\nu D}`,
    repeat ``iterations`` times:
    :math:`\hat b = t_M(U^\top r)` (each coefficient clipped to [-M, M]),
    :math:`y \leftarrow y + \hat b`, :math:`r \leftarrow r - U\hat b`, :math:`M \leftarrow \eta M`.

    Then :math:`x = U y + r` and :math:`\|y\|_\infty \le K\|x\|_2/\sqrt D` with
    :math:`K` = :func:`kashin_level` (always, by construction), and
    :math:`\|r\|_2 \le \eta^r \|x\|_2` if the frame satisfies the uncertainty principle
    with (η, ν). With ``exact=True`` the final residual is absorbed,
    :math:`y \leftarrow y + U^\top r`, so that :math:`x = U y` to rounding, at the price of
    adding at most :math:`\|r\|_2` to the level.

    The OcPBM paper's printed update is :math:`a \leftarrow a + \sqrt D\,\hat b`; those
    coefficients are :math:`\sqrt D` times the ones returned here and satisfy
    :math:`U a = \sqrt D\, x`, not x (the book's chapter on the cPBM shows it).

    Parameters
    ----------
    x : array_like, shape (d,) or (n, d)
        One vector or one per row (vectorised over rows).
    U : array_like, shape (d, D)
        A tight frame.
    eta : float
        Contraction parameter η in (0, 1).
    nu : float
        Fraction ν in (0, 1]; the first level is :math:`\|x\|_2/\sqrt{\nu D}`.
    iterations : int, default 20
        Number r >= 1 of truncation steps.
    exact : bool, default True
        Absorb the last residual (see above).
    unique : bool, default False
        Compute the representation once per distinct row of x and copy it to the
        rows that repeat it (rows of histograms repeat often: every one-item
        histogram is a unit vector). The result equals the default one up to
        rounding: BLAS may sum a smaller batch in another order, so the last bits
        of a row can differ (by about :math:`10^{-15}\|x\|_2`).

    Returns
    -------
    ndarray, shape (D,) or (n, D)

    Notes
    -----
    The algorithm is positively homogeneous: the representation of :math:`c\,x`,
    :math:`c > 0`, is c times that of x (the levels scale with :math:`\|x\|_2`), up
    to rounding. Rows are independent of each other, so the representations of a
    subset of rows are the corresponding rows of the whole batch (up to rounding).
    Callers that need the representations of the same data again should compute them
    once and pass them on (the ``y=`` arguments of :mod:`fedfreq.cpbm` and
    :mod:`fedfreq.protocols`): for n users this is 2r matrix products of size
    n × d × D, the bulk of a protocol run.

    Examples
    --------
    >>> U = tight_frame(4, 16, rng=2)
    >>> x = np.array([1.0, -2.0, 0.5, 3.0])
    >>> y = kashin_representation(x, U, eta=0.7, nu=0.5)
    >>> bool(np.allclose(U @ y, x))
    True
    >>> X = np.array([[1.0, 0, 0, 0], [0, 2.0, 0, 0], [1.0, 0, 0, 0]])
    >>> Yu = kashin_representation(X, U, eta=0.7, nu=0.5, unique=True)
    >>> bool(np.array_equal(Yu[0], Yu[2]) and np.allclose(Yu, kashin_representation(X, U, eta=0.7, nu=0.5)))
    True
    """
    exact = check_bool("exact", exact)
    unique = check_bool("unique", unique)
    U = _check_frame(U)
    X, single = _check_x(x, U.shape[0])
    eta = check_real("eta", eta, low=0.0, high=1.0, low_open=True, high_open=True)
    nu = check_scale("nu", nu, high=1.0)
    r_ = check_int(
        "iterations", iterations, low=1, high=10_000, reason="the algorithm converges geometrically; 20 suffice"
    )
    if unique and X.shape[0] > 1:
        # rows as opaque byte strings: one sort of n keys, not a field-by-field comparison
        X = np.ascontiguousarray(X)
        keys = X.view(np.dtype((np.void, X.dtype.itemsize * X.shape[1]))).reshape(-1)
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        if first.size < X.shape[0]:
            return _truncation(X[first], U, eta, nu, r_, exact)[inverse.reshape(-1)]
    Y = _truncation(X, U, eta, nu, r_, exact)
    return Y[0] if single else Y


def uncertainty_eta(U, nu: float, *, starts: int = 8, steps: int = 30, rng=None) -> float:
    r"""A lower estimate of the smallest η for which U satisfies the uncertainty principle at ν.

    The exact value :math:`\eta(\nu) = \max_{|\Omega| \le \nu D}\|U_\Omega\|_{2\to2}` is a
    maximum over subsets (NP-hard in general). This alternating search starts from
    ``starts`` random unit vectors v, lets Ω be the :math:`\lfloor \nu D\rfloor` indices
    with the largest :math:`|\langle v, u_k\rangle|`, replaces v by the top left singular
    vector of :math:`U_\Omega`, and repeats ``steps`` times; it returns the largest
    :math:`\|U_\Omega\|_2` met. Every value returned is attained, hence a lower bound
    on η(ν): the frame does *not* satisfy the principle with any smaller η.

    Examples
    --------
    >>> U = tight_frame(8, 32, rng=3)
    >>> 0.0 < uncertainty_eta(U, 0.1, rng=0) <= 1.0
    True
    """
    U = _check_frame(U)
    nu = check_scale("nu", nu, high=1.0)
    starts = check_int("starts", starts, low=1, high=10_000)
    steps = check_int("steps", steps, low=1, high=100_000)
    gen = as_generator(rng)
    d, D = U.shape
    size = max(1, int(math.floor(nu * D)))
    best = 0.0
    for _ in range(starts):
        v = gen.standard_normal(d)
        for _ in range(steps):
            omega = np.argpartition(-np.abs(v @ U), size - 1)[:size]
            left, sv, _ = np.linalg.svd(U[:, omega], full_matrices=False)
            best = max(best, float(sv[0]))
            v = left[:, 0]
    return min(best, 1.0)


#: Rows are processed in blocks of at least ``_BLOCK_ROWS`` rows and about ``_BLOCK_ENTRIES``
#: entries of the (rows, D) coefficient matrix (2 MB): the buffers of a block stay in cache
#: between the two products of a step (measured 20-30 % faster for D <= 200 than one pass
#: over 40 000 rows), the memory of the iteration is bounded for any n, and a block of a
#: few hundred rows or more gives the same bits as the whole batch.
_BLOCK_ENTRIES = 1 << 18
_BLOCK_ROWS = 2048


def _truncation(X: np.ndarray, U: np.ndarray, eta: float, nu: float, iterations: int, exact: bool) -> np.ndarray:
    """Lyubarskii & Vershynin's iteration on validated input, one representation per row of X.

    Rows are independent, so X is split into nearly equal blocks of rows (see
    ``_BLOCK_ENTRIES``); the buffers of one block are reused from step to step.
    """
    n, D = X.shape[0], U.shape[1]
    rows = max(_BLOCK_ROWS, _BLOCK_ENTRIES // D)
    blocks = -(-n // rows)
    if blocks <= 1:
        return _truncation_block(X, U, eta, nu, iterations, exact)
    Y = np.empty((n, D))
    bounds = np.linspace(0, n, blocks + 1).round().astype(int)
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        Y[lo:hi] = _truncation_block(X[lo:hi], U, eta, nu, iterations, exact)
    return Y


def _truncation_block(X: np.ndarray, U: np.ndarray, eta: float, nu: float, iterations: int, exact: bool) -> np.ndarray:
    """One block of rows. The products write into preallocated buffers (no temporary per
    step); the arithmetic, and so every bit of the result, is that of the plain loop
    ``B = clip(R @ U); Y += B; R -= B @ U.T``."""
    D = U.shape[1]
    level = np.linalg.norm(X, axis=1, keepdims=True) / math.sqrt(nu * D)
    Y = np.zeros((X.shape[0], D))
    R = X.copy()
    B = np.empty_like(Y)
    back = np.empty_like(R)
    Ut = U.T
    for _ in range(iterations):
        np.matmul(R, U, out=B)
        np.clip(B, -level, level, out=B)
        Y += B
        np.matmul(B, Ut, out=back)
        R -= back
        level = level * eta
    if exact:
        Y += R @ U
    return Y
