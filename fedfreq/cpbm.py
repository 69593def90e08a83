r"""The clipped Poisson binomial mechanism (cPBM) and its optimally clipped variant (OcPBM).

The OcPBM paper, Algorithms 1-3, Eq. (3), Theorem 1 and Eq. (5). Each user i maps her histogram
:math:`x_i \in \mathbb R^d` to coefficients :math:`y_i \in \mathbb R^D` of a tight frame U
(Kashin's representation, :mod:`fedfreq.kashin`), clips them to ℓ2 norm C, and sends,
for every coordinate k,

.. math:: Z_i[k] \sim \mathrm{Binom}(m, p_i[k]),\qquad p_i[k] = \frac{\theta}{C}\,y_i[k] + \frac12
   \in \bigl[\tfrac12-\theta, \tfrac12+\theta\bigr]

(Algorithm 3, θ ∈ (0, 1/4]). The server learns only :math:`S = \sum_i Z_i` through secure
summation in :math:`\mathbb Z_M^D`, :math:`M = nm + 1` (:mod:`fedfreq.secagg`), and decodes

.. math:: \hat y = \frac{C}{mn\theta}\Bigl(S - \frac{mn}{2}\mathbf 1\Bigr),\qquad \hat x = U\hat y

(Algorithm 2). :math:`\hat y` is unbiased for the mean of the *clipped* coefficients and
:math:`\mathrm{Var}(\hat y[k]) = \frac{C^2}{m n^2\theta^2}\sum_i p_i[k](1-p_i[k]) \le
\frac{C^2}{4nm\theta^2}` (Eq. 3). The privacy of S is :func:`fedfreq.accounting.cpbm_rdp`.

Floating-point binomial sampling is a simulation, not a safe DP implementation.
"""

from __future__ import annotations

import math

import numpy as np

from . import secagg
from ._rng import as_generator
from ._validation import SCALE_MAX, SCALE_MIN, check_array, check_int, check_ndim, check_real, check_scale
from .kashin import kashin_representation

__all__ = [
    "KASHIN_ETA",
    "KASHIN_NU",
    "clip_l2",
    "cpbm_encode",
    "cpbm_decode",
    "cpbm_variance",
    "cpbm_user",
    "cpbm_server",
    "cpbm_estimate",
    "optimal_quantile",
    "optimal_threshold",
    "clipping_error_bound",
    "ocpbm_estimate",
    "cpbm_error_terms",
    "cpbm_mse",
    "cpbm_mse_minimum",
]

#: Parameters (η, ν) of the Kashin representation every cPBM function uses by default
#: (the OcPBM paper states none); :func:`fedfreq.kashin.kashin_level` gives the
#: level K they guarantee.
KASHIN_ETA = 0.7
KASHIN_NU = 0.3


def _theta(theta) -> float:
    return check_scale("theta", theta, high=0.25)


def _C(C) -> float:
    return check_scale("C", C)


def _matrix(name: str, value) -> np.ndarray:
    arr = check_array(name, value, max_abs=SCALE_MAX)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"{name} must have shape (n, D) with n, D >= 1; got shape {arr.shape}")
    return arr


def clip_l2(y, C: float) -> np.ndarray:
    r"""Scale each row of y to ℓ2 norm at most C: :math:`y \min(1, C/\|y\|_2)` (Alg. 3, line 3).

    Examples
    --------
    >>> clip_l2([[3.0, 4.0], [0.3, 0.4]], 1.0).round(2).tolist()
    [[0.6, 0.8], [0.3, 0.4]]
    """
    Y = _matrix("y", y)
    C = _C(C)
    norms = np.linalg.norm(Y, axis=1, keepdims=True)
    with np.errstate(divide="ignore"):
        factor = np.minimum(1.0, C / norms)
    return Y * factor


def cpbm_encode(y, *, theta: float, C: float, m: int, rng=None) -> np.ndarray:
    r"""cPBM encoder (the OcPBM paper, Algorithm 3), vectorised over users.

    Parameters
    ----------
    y : array_like, shape (n, D) or (D,)
        Representations, one user per row.
    theta : float
        θ in (0, 1/4].
    C : float
        Clipping threshold C > 0.
    m : int
        Binomial trials m >= 1 (bits per coordinate).
    rng : Generator, int or None

    Returns
    -------
    ndarray of int64, shape (n, D)
        :math:`Z_i[k] \sim \mathrm{Binom}(m, \theta y_i[k]/C + 1/2)` after clipping.

    Examples
    --------
    >>> z = cpbm_encode(np.zeros((2, 3)), theta=0.2, C=1.0, m=4, rng=0)
    >>> z.shape, bool(z.min() >= 0 and z.max() <= 4)
    ((2, 3), True)
    """
    th = _theta(theta)
    C_ = _C(C)
    m_ = check_int("m", m, low=1)
    gen = as_generator(rng)
    p = clip_l2(y, C_)
    p *= th / C_
    p += 0.5
    return gen.binomial(m_, p)


def cpbm_decode(sums, *, n: int, theta: float, C: float, m: int) -> np.ndarray:
    r"""Server rescaling (the OcPBM paper, Algorithm 2, line 3): :math:`\hat y = \frac{C}{mn\theta}(S - mn/2)`.

    Examples
    --------
    >>> cpbm_decode([20, 24], n=10, theta=0.25, C=1.0, m=4).tolist()
    [0.0, 0.4]
    """
    S = check_array("sums", sums, ndim=1, low=0.0)
    n_ = check_int("n", n, low=1)
    th = _theta(theta)
    C_ = _C(C)
    m_ = check_int("m", m, low=1)
    if np.any(S > n_ * m_):
        raise ValueError(f"sums must lie in [0, n m] = [0, {n_ * m_}]; got max {S.max()!r}")
    return C_ / (m_ * n_ * th) * (S - m_ * n_ / 2.0)


def cpbm_variance(y, *, theta: float, C: float, m: int) -> np.ndarray:
    r"""Exact per-coordinate variance of :math:`\hat y`: :math:`\frac{C^2}{mn^2\theta^2}\sum_i p_i(1-p_i)`.

    Never larger than :math:`C^2/(4nm\theta^2)` (Eq. 3).

    Examples
    --------
    >>> cpbm_variance(np.zeros((10, 2)), theta=0.25, C=1.0, m=4).tolist()
    [0.1, 0.1]
    """
    th = _theta(theta)
    C_ = _C(C)
    m_ = check_int("m", m, low=1)
    Y = clip_l2(y, C_)
    p = th * Y / C_ + 0.5
    n = Y.shape[0]
    return C_**2 / (m_ * n**2 * th**2) * np.sum(p * (1.0 - p), axis=0)


def cpbm_user(
    x,
    U,
    *,
    theta: float,
    C: float,
    m: int,
    eta: float = KASHIN_ETA,
    nu: float = KASHIN_NU,
    iterations: int = 20,
    rng=None,
) -> np.ndarray:
    r"""User protocol (the OcPBM paper, Algorithm 1): Kashin representation of x, then cPBM.

    ``eta``, ``nu`` and ``iterations`` are passed to
    :func:`fedfreq.kashin.kashin_representation` (the paper does not state them).

    Returns
    -------
    ndarray of int64, shape (n, D)

    Examples
    --------
    >>> from fedfreq.kashin import tight_frame
    >>> U = tight_frame(3, 6, rng=0)
    >>> cpbm_user(np.eye(3), U, theta=0.2, C=1.0, m=2, rng=1).shape
    (3, 6)
    """
    Y = kashin_representation(_matrix("x", x), U, eta=eta, nu=nu, iterations=iterations)
    return cpbm_encode(Y, theta=theta, C=C, m=m, rng=rng)


def cpbm_server(sums, U, *, n: int, theta: float, C: float, m: int) -> np.ndarray:
    r"""Server protocol (the OcPBM paper, Algorithm 2): :math:`\hat x = U\hat y`, the estimated mean histogram.

    Examples
    --------
    >>> from fedfreq.kashin import tight_frame
    >>> U = tight_frame(2, 4, rng=0)
    >>> cpbm_server([10, 10, 10, 10], U, n=5, theta=0.2, C=1.0, m=4).tolist()
    [0.0, 0.0]
    """
    U = check_array("U", U, ndim=2)
    y_hat = cpbm_decode(sums, n=n, theta=theta, C=C, m=m)
    if y_hat.shape[0] != U.shape[1]:
        raise ValueError(f"sums must have length D = {U.shape[1]}; got {y_hat.shape[0]}")
    return U @ y_hat


def cpbm_estimate(
    x,
    U,
    *,
    theta: float,
    C: float,
    m: int,
    rng=None,
    eta: float = KASHIN_ETA,
    nu: float = KASHIN_NU,
    iterations: int = 20,
    neighbours: int | None = 1,
) -> np.ndarray:
    r"""The whole cPBM protocol: Algorithm 1 per user, secure sum in :math:`\mathbb Z_M^D`, Algorithm 2.

    The modulus is :func:`fedfreq.secagg.modulus_for` ``(n, m)`` = nm + 1, so the
    modular sum is the integer sum.

    Returns
    -------
    ndarray, shape (d,)
        :math:`\hat x`, an estimate of the mean histogram :math:`\bar x` (of the clipped
        representations, mapped back through U).

    Examples
    --------
    >>> from fedfreq.kashin import tight_frame
    >>> U = tight_frame(2, 4, rng=0)
    >>> cpbm_estimate(np.ones((50, 2)), U, theta=0.25, C=3.0, m=8, rng=1).shape
    (2,)
    """
    gen = as_generator(rng)
    X = _matrix("x", x)
    m_ = check_int("m", m, low=1)
    Z = cpbm_user(X, U, theta=theta, C=C, m=m_, eta=eta, nu=nu, iterations=iterations, rng=gen)
    n = Z.shape[0]
    M = secagg.modulus_for(n, m_)
    S = secagg.secure_sum(Z, modulus=M, max_entry=m_, rng=gen, neighbours=neighbours)
    return cpbm_server(S, U, n=n, theta=theta, C=C, m=m_)


def optimal_quantile(*, D: int, m: int, n: int, theta: float) -> float:
    r"""The clipping quantile that minimises the Theorem 1 bound (the OcPBM paper, Eq. 5).

    :math:`\mathcal E(C; D) = \frac1n\sum_i \max(0, \|y_i\|_2 - C) + C s` with
    :math:`s = \sqrt{D/(4mn\theta^2)}` is convex and piecewise linear in C; its right
    derivative is :math:`s - \#\{i: \|y_i\|_2 > C\}/n`, so the minimiser is the
    :math:`(1 - s)`-quantile of the norms. If :math:`s \ge 1` the bound increases in C
    and the minimiser is C = 0 (quantile 0): θ, m or n are too small for clipping to
    pay (the paper's remark that θ "cannot be too small").

    Examples
    --------
    >>> round(optimal_quantile(D=100, m=30, n=10_000, theta=0.2), 6)
    0.954356
    """
    D_ = check_int("D", D, low=1)
    m_ = check_int("m", m, low=1)
    n_ = check_int("n", n, low=1)
    th = _theta(theta)
    s = math.sqrt(D_ / (4.0 * m_ * n_ * th * th))
    return max(0.0, 1.0 - s)


def optimal_threshold(norms, *, D: int, m: int, theta: float) -> float:
    r"""The exact minimiser of :math:`\mathcal E(C; D)` over C >= 0 for the given norms.

    The smallest order statistic :math:`a_{(j)}` with :math:`\#\{i: a_i > a_{(j)}\}/n \le s`
    (0 if :math:`s \ge 1`); n = len(norms).

    Examples
    --------
    >>> optimal_threshold(np.arange(1.0, 11.0), D=1, m=1, theta=0.25)  # s = 0.63: 6 of 10 above
    4.0
    """
    a = np.sort(check_array("norms", norms, ndim=1, low=0.0, min_size=1))
    n = a.size
    s = math.sqrt(check_int("D", D, low=1) / (4.0 * check_int("m", m, low=1) * n * _theta(theta) ** 2))
    if s >= 1.0:
        return 0.0
    above = n - np.searchsorted(a, a, side="right")  # #{i: a_i > a_(j)}
    j = int(np.argmax(above <= s * n + 1e-12))
    return float(a[j])


def clipping_error_bound(norms, C, *, D: int, m: int, theta: float) -> np.ndarray | float:
    r""":math:`\mathcal E(C; D) = \frac1n\sum_i \max(0, \|y_i\|_2 - C) + C\sqrt{D/(4mn\theta^2)}` (Theorem 1).

    Vectorised over C. (Theorem 1 multiplies it by √d; the book's chapter on optimal
    clipping shows that the factor 1 suffices for a tight frame.)

    Examples
    --------
    >>> round(clipping_error_bound([1.0, 3.0], 2.0, D=4, m=1, theta=0.25), 6)
    6.156854
    """
    a = check_array("norms", norms, ndim=1, low=0.0, min_size=1)
    scalar = check_ndim("C", C) == 0
    Cs = np.atleast_1d(check_array("C", C, low=0.0, max_abs=SCALE_MAX))
    n = a.size
    s = math.sqrt(check_int("D", D, low=1) / (4.0 * check_int("m", m, low=1) * n * _theta(theta) ** 2))
    # sum_i max(0, a_i - C) from sorted norms and suffix sums: O((n + len(C)) log n) time and memory
    srt = np.sort(a)
    suffix = np.concatenate([np.cumsum(srt[::-1])[::-1], [0.0]])  # suffix[j] = sum of srt[j:]
    c = Cs.reshape(-1)
    j = np.searchsorted(srt, c, side="right")  # srt[j:] > C
    excess = (suffix[j] - c * (n - j)) / n
    out = excess + c * s
    return float(out[0]) if scalar else out.reshape(np.shape(C))


def _representation(X: np.ndarray, U, y, *, eta: float, nu: float, iterations: int) -> np.ndarray:
    """Kashin representations of the rows of X, or the precomputed ``y`` after a shape check."""
    if y is None:
        return kashin_representation(X, U, eta=eta, nu=nu, iterations=iterations)
    U = check_array("U", U, ndim=2)
    Y = _matrix("y", y)
    if Y.shape != (X.shape[0], U.shape[1]):
        raise ValueError(
            f"y must have shape {(X.shape[0], U.shape[1])} (one representation per row of x); got {Y.shape}"
        )
    return Y


def ocpbm_estimate(
    x,
    U,
    *,
    theta: float,
    m: int,
    quantile: float | None = None,
    rng=None,
    eta: float = KASHIN_ETA,
    nu: float = KASHIN_NU,
    iterations: int = 20,
    y=None,
) -> tuple[np.ndarray, float]:
    r"""OcPBM with a non-private quantile: C = the ``quantile`` of the users' ‖y_i‖₂, then cPBM.

    With ``quantile=None`` the Eq. (5) optimum :func:`optimal_quantile` is used. The
    quantile is computed from the raw norms (not privately): the private estimate is
    the OcPBM paper's Section 4, not implemented here. ``y`` (shape (n, D)) may pass
    precomputed representations of the rows of x, as in :func:`cpbm_error_terms`.

    Returns
    -------
    (x_hat, C) : ndarray of shape (d,), float

    Examples
    --------
    >>> from fedfreq.kashin import tight_frame
    >>> U = tight_frame(2, 4, rng=0)
    >>> est, C = ocpbm_estimate(np.ones((100, 2)), U, theta=0.25, m=8, quantile=0.9, rng=1)
    >>> est.shape, C > 0
    ((2,), True)
    """
    X = _matrix("x", x)
    Y = _representation(X, U, y, eta=eta, nu=nu, iterations=iterations)
    n, D = Y.shape
    m_ = check_int("m", m, low=1)
    q = (
        optimal_quantile(D=D, m=m_, n=n, theta=theta)
        if quantile is None
        else check_real("quantile", quantile, low=0.0, high=1.0)
    )
    norms = np.linalg.norm(Y, axis=1)
    C = float(np.quantile(norms, q))
    if C <= 0:
        raise ValueError(f"the {q}-quantile of the norms is 0; choose a larger quantile")
    gen = as_generator(rng)
    Z = cpbm_encode(Y, theta=theta, C=C, m=m_, rng=gen)
    M = secagg.modulus_for(n, m_)
    S = secagg.secure_sum(Z, modulus=M, max_entry=m_, rng=gen)
    return cpbm_server(S, U, n=n, theta=theta, C=C, m=m_), C


def cpbm_error_terms(
    x,
    U,
    C: float,
    *,
    theta: float,
    m: int,
    y=None,
    eta: float = KASHIN_ETA,
    nu: float = KASHIN_NU,
    iterations: int = 20,
) -> tuple[float, float]:
    r"""Exact squared bias and variance of the cPBM estimate :math:`\hat x` of :math:`\bar x`.

    With :math:`\bar y_C` the mean clipped representation and :math:`v_k` the exact
    variance of :math:`\hat y[k]` (:func:`cpbm_variance`),

    .. math::

        \mathbb E\|\bar x - \hat x\|_2^2 = \|\bar x - U\bar y_C\|_2^2 + \sum_{k=1}^D v_k\,\|u_k\|_2^2,

    because :math:`\hat x = U\hat y` has mean :math:`U\bar y_C` and independent coordinates
    :math:`\hat y[k]`. Since :math:`\sum_k\|u_k\|_2^2 = \mathrm{tr}(UU^\top) = d`, the variance
    term is at most :math:`d\,C^2/(4nm\theta^2)`.

    ``y`` (shape (n, D)) may pass precomputed representations of the rows of x
    (with ``x = y @ U.T``); otherwise they are computed with
    :func:`fedfreq.kashin.kashin_representation` and ``eta``, ``nu``, ``iterations``.

    Returns
    -------
    (bias_sq, variance) : tuple of float
        Their sum is the mean squared ℓ2 error; its square root bounds
        :math:`\mathbb E\|\bar x - \hat x\|_2` (Jensen).

    Examples
    --------
    >>> from fedfreq.kashin import tight_frame
    >>> U = tight_frame(2, 4, rng=0)
    >>> b, v = cpbm_error_terms(np.ones((10, 2)), U, 100.0, theta=0.25, m=4)
    >>> round(b, 12), bool(v <= 2 * 100.0**2 / (4 * 10 * 4 * 0.25**2))
    (0.0, True)
    """
    X = _matrix("x", x)
    U = check_array("U", U, ndim=2)
    Y = _representation(X, U, y, eta=eta, nu=nu, iterations=iterations)
    C_ = _C(C)
    Yc = clip_l2(Y, C_)
    bias = X.mean(axis=0) - U @ Yc.mean(axis=0)
    v = cpbm_variance(Yc, theta=theta, C=C_, m=m)
    return float(bias @ bias), float(v @ np.sum(U * U, axis=0))


def _mse_prefix_sums(x, U, *, theta: float, m: int, y, eta: float, nu: float, iterations: int):
    r"""Sorted norms and the prefix sums from which the exact MSE at any threshold follows.

    With the users sorted by the norm :math:`a_i = \|y_i\|_2` and j users unclipped, the bias
    is :math:`P_j - C\,O_j` and the variance :math:`\|w\|_1C^2/(4mn\theta^2) - (G_j + C^2H_j)/(mn^2)`,
    where :math:`w_k = \|u_k\|_2^2`, :math:`q_i = \sum_k w_k y_i[k]^2`, :math:`P_j` is the mean
    minus the unclipped users' share, :math:`O_j = \frac1n\sum_{i\ge j} Uy_i/a_i`,
    :math:`G_j = \sum_{i<j} q_i` and :math:`H_j = \sum_{i\ge j} q_i/a_i^2`.
    """
    X = _matrix("x", x)
    U = check_array("U", U, ndim=2)
    th = _theta(theta)
    m_ = check_int("m", m, low=1)
    Y = _representation(X, U, y, eta=eta, nu=nu, iterations=iterations)
    n = Y.shape[0]
    order = np.argsort(np.linalg.norm(Y, axis=1), kind="stable")
    Y = Y[order]
    a = np.linalg.norm(Y, axis=1)
    w = np.sum(U * U, axis=0)  # ||u_k||^2
    q = (Y**2) @ w
    pos = a > 0  # a zero representation is never clipped and adds nothing below
    inner = np.vstack([np.zeros(U.shape[0]), np.cumsum(Y @ U.T, axis=0)]) / n
    zs = np.divide(Y, a[:, None], out=np.zeros_like(Y), where=pos[:, None]) @ U.T
    outer = np.vstack([np.cumsum(zs[::-1], axis=0)[::-1], np.zeros(U.shape[0])]) / n
    G = np.concatenate([[0.0], np.cumsum(q)])
    h = np.divide(q, a**2, out=np.zeros_like(q), where=pos)
    H = np.concatenate([np.cumsum(h[::-1])[::-1], [0.0]])
    P = X.mean(axis=0) - inner
    return a, P, outer, G, H, float(w.sum()), n, th, m_


def cpbm_mse(
    x,
    U,
    C,
    *,
    theta: float,
    m: int,
    y=None,
    eta: float = KASHIN_ETA,
    nu: float = KASHIN_NU,
    iterations: int = 20,
) -> np.ndarray | float:
    r"""Exact mean squared error of the cPBM estimate at every threshold in C at once.

    The same quantity as the sum of :func:`cpbm_error_terms`, computed in closed form from
    prefix sums over the users sorted by the norm :math:`a_i = \|y_i\|_2`. With the users
    :math:`i < j` unclipped at C, :math:`w_k = \|u_k\|_2^2` and
    :math:`q_i = \sum_k w_k y_i[k]^2`, the squared bias and the variance term are, in turn,

    .. math::

        \Bigl\|\bar x - \frac1n\sum_{i<j}Uy_i - \frac Cn\sum_{i\ge j}\frac{Uy_i}{a_i}\Bigr\|_2^2

        \frac{C^2\sum_k w_k}{4mn\theta^2} - \frac{1}{mn^2}\Bigl(\sum_{i<j}q_i + C^2\sum_{i\ge j}\frac{q_i}{a_i^2}\Bigr).

    A grid of thresholds costs one sort and a few cumulative sums instead of one pass over
    the users per threshold.

    Returns
    -------
    float if C is a scalar, else ndarray of the shape of C

    Examples
    --------
    >>> from fedfreq.kashin import tight_frame
    >>> U = tight_frame(2, 4, rng=0)
    >>> x = np.array([[1.0, 0.0], [0.0, 3.0], [2.0, 2.0]])
    >>> b, v = cpbm_error_terms(x, U, 1.5, theta=0.25, m=4)
    >>> bool(abs(cpbm_mse(x, U, 1.5, theta=0.25, m=4) - (b + v)) < 1e-12)
    True
    """
    a, P, outer, G, H, wsum, n, th, m_ = _mse_prefix_sums(
        x, U, theta=theta, m=m, y=y, eta=eta, nu=nu, iterations=iterations
    )
    C_arr = check_array("C", C, low=SCALE_MIN, high=SCALE_MAX, min_size=1)
    Cf = np.atleast_1d(C_arr).ravel().astype(float)
    j = np.searchsorted(a, Cf, side="right")  # users i < j are not clipped
    bias = P[j] - Cf[:, None] * outer[j]
    var = wsum * Cf**2 / (4 * m_ * n * th**2) - (G[j] + Cf**2 * H[j]) / (m_ * n**2)
    out = np.sum(bias**2, axis=1) + var
    return float(out[0]) if C_arr.ndim == 0 else out.reshape(C_arr.shape)


def cpbm_mse_minimum(
    x,
    U,
    *,
    theta: float,
    m: int,
    y=None,
    eta: float = KASHIN_ETA,
    nu: float = KASHIN_NU,
    iterations: int = 20,
) -> tuple[float, float]:
    r"""The threshold C > 0 that minimises the exact MSE of the cPBM estimate, and that MSE.

    Between two consecutive user norms the set of clipped users is fixed and the MSE of
    :func:`cpbm_mse` is a quadratic :math:`c_0 + c_1C + c_2C^2` in C (:math:`c_2 > 0`: it
    contains the noise term). Its minimum on each of the n + 1 intervals is at the vertex or
    at an end, so the global minimum is exact, with no grid.

    Returns
    -------
    (C_min, mse) : tuple of float

    Examples
    --------
    >>> from fedfreq.kashin import tight_frame
    >>> U = tight_frame(2, 4, rng=0)
    >>> x = np.array([[1.0, 0.0], [0.0, 3.0], [2.0, 2.0]])
    >>> C, e = cpbm_mse_minimum(x, U, theta=0.25, m=4)
    >>> grid = np.linspace(0.01, 5, 2000)
    >>> bool(e <= cpbm_mse(x, U, grid, theta=0.25, m=4).min() + 1e-12)
    True
    """
    a, P, outer, G, H, wsum, n, th, m_ = _mse_prefix_sums(
        x, U, theta=theta, m=m, y=y, eta=eta, nu=nu, iterations=iterations
    )
    c0 = np.sum(P * P, axis=1) - G / (m_ * n**2)
    c1 = -2 * np.sum(P * outer, axis=1)
    c2 = np.sum(outer**2, axis=1) + wsum / (4 * m_ * n * th**2) - H / (m_ * n**2)
    lo, hi = np.concatenate([[0.0], a]), np.concatenate([a, [np.inf]])
    keep = hi > 0  # intervals that contain some C > 0
    lo, hi, c0, c1, c2 = lo[keep], hi[keep], c0[keep], c1[keep], c2[keep]
    C_v = np.clip(-c1 / (2 * c2), np.maximum(lo, 1e-12), hi)  # vertex, kept in the interval
    mse = c0 + c1 * C_v + c2 * C_v**2
    k = int(np.argmin(mse))
    return float(C_v[k]), float(mse[k])
