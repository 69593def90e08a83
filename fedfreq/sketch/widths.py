"""Instance-dependent error bounds of count sketches (Proposition 2.1, Theorems 3.1 and 3.2
of Wu et al., 2023), the oracle and minimax width rules, and the two-phase method.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from .._rng import as_generator
from .._validation import SCALE_MAX, check_array, check_int, check_real, check_scale
from .coding import _check_round_frequencies, sketch_estimate_clients
from .hashing import MAX_DOMAIN, MAX_ROWS, MERSENNE_PRIME, _check_items

__all__ = [
    "heterogeneity_vector",
    "tail_energy",
    "minton_price_bound",
    "fresh_sketch_bound",
    "width_objective",
    "oracle_width",
    "minimax_width",
    "polynomial_frequencies",
    "fit_polynomial",
    "TwoPhaseResult",
    "two_phase_width",
]


def heterogeneity_vector(round_frequencies) -> np.ndarray:
    r"""The heterogeneity vector of Wu et al. 2023, Theorem 3.2.

    .. math:: F_i = \frac1M\sqrt{\textstyle\sum_{m=1}^M \bigl(f^{(m)}_i\bigr)^2}
              \;\le\; f_i = \frac1M\sum_m f^{(m)}_i,

    with :math:`F = f/\sqrt M` when all rounds are identical.

    Examples
    --------
    >>> heterogeneity_vector([[0.5, 0.5], [0.5, 0.5]]).round(4).tolist()
    [0.3536, 0.3536]
    """
    F = _check_round_frequencies(round_frequencies)
    return np.sqrt(np.sum(F**2, axis=0)) / F.shape[0]


def tail_energy(values, k: int) -> float:
    r"""Tail energy :math:`\sum_{i > k} (v^*_i)^2` of a non-negative vector sorted decreasingly.

    Examples
    --------
    >>> round(tail_energy([0.1, 0.5, 0.2, 0.2], 2), 6)
    0.05
    """
    v = check_array("values", values, ndim=1, low=0.0, max_abs=SCALE_MAX)
    k = check_int("k", k, low=0)
    s = np.sort(v)[::-1]
    return float(np.sum(s[k:] ** 2))


def minton_price_bound(
    values,
    *,
    width: int,
    rows: int,
    p: float,
    constant: float = 1.0,
    tail_start: int | None = None,
) -> float:
    r"""Instance-dependent count-sketch error bound (Wu et al. 2023, Prop. 2.1 / Thm 3.2).

    .. math:: C\sqrt{\frac{\log(1/p)}{L}\cdot\frac1W\sum_{i>k}(v^*_i)^2},

    with :math:`v = f` for one round (Proposition 2.1) or :math:`v = F` for the hybrid
    sketch (Theorem 3.2). The paper uses :math:`k = W`; Minton & Price's theorem and
    the paper's own proof of Theorem 3.2 need the tail to start at a constant fraction
    of the width (``tail_start``, e.g. :math:`k = \lfloor W/10 \rfloor`), see the
    chapter "Count sketch and the hardness of the instance".

    Examples
    --------
    >>> round(minton_price_bound([0.5, 0.25, 0.25], width=1, rows=1, p=math.exp(-1)), 4)
    0.3536
    """
    width = check_int("width", width, low=1)
    rows = check_int("rows", rows, low=1)
    p = check_real("p", p, low=0.0, high=1.0, low_open=True, high_open=True)
    constant = check_scale("constant", constant)
    k = width if tail_start is None else check_int("tail_start", tail_start, low=0)
    return constant * math.sqrt(math.log(1.0 / p) / rows * tail_energy(values, k) / width)


def fresh_sketch_bound(
    round_frequencies,
    *,
    width: int,
    rows: int,
    p: float,
    constant: float = 1.0,
    tail_start: int | None = None,
) -> float:
    r"""Wu et al. 2023, Theorem 3.1 (FreshSketch): the hybrid bound times :math:`\sqrt{\log(M/p)}`.

    .. math:: C\sqrt{\frac{\log(1/p)\log(M/p)}{L}\cdot\frac1W\sum_{i>k}(F^*_i)^2}.

    Examples
    --------
    >>> b = fresh_sketch_bound([[0.5, 0.5], [0.5, 0.5]], width=1, rows=1, p=0.5, tail_start=0)
    >>> round(b, 4)
    0.4901
    """
    F = heterogeneity_vector(round_frequencies)
    p_ = check_real("p", p, low=0.0, high=1.0, low_open=True, high_open=True)
    M = np.asarray(round_frequencies).shape[0]
    base = minton_price_bound(F, width=width, rows=rows, p=p_, constant=constant, tail_start=tail_start)
    return base * math.sqrt(math.log(M / p_))


def width_objective(freqs, k, tau: float):
    r"""The function :math:`F(k) = k + \tau^{-2}\sum_{i>k}(f^*_i)^2` of the proof of Cor. 2.3.

    Vectorised in ``k``. Its minimum over :math:`k \ge 0` is attained at
    :math:`k^\star = \#\{i: f_i \ge \tau\}` and equals the bracket of Eq. (2).

    Examples
    --------
    >>> width_objective([0.5, 0.3, 0.2], [0, 1, 2, 3], 0.4).round(4).tolist()
    [2.375, 1.8125, 2.25, 3.0]
    """
    f = check_array("freqs", freqs, ndim=1, low=0.0, max_abs=SCALE_MAX)
    tau = check_scale("tau", tau, high=1.0, high_open=True)
    kk = check_array("k", k, integer=True, low=0)
    s = np.sort(f)[::-1] ** 2
    tail = np.concatenate([np.cumsum(s[::-1])[::-1], [0.0]])  # tail[k] = sum_{i>k}
    kk_c = np.minimum(kk, s.size)
    out = kk + tail[kk_c] / tau**2
    return float(out) if np.ndim(k) == 0 else out


def oracle_width(freqs, tau: float, *, constant: float = 1.0, n: int | None = None) -> int:
    r"""Instance-optimal width of Wu et al. 2023, Eq. (2) (Corollary 2.3).

    .. math:: W = \Bigl\lceil C\min\Bigl\{\#\{f_i\ge\tau\} + \tau^{-2}\sum_{f_i<\tau} f_i^2,\ n\Bigr\}\Bigr\rceil

    (at least 1; without ``n`` the minimum is omitted).

    Examples
    --------
    >>> oracle_width([0.5, 0.3, 0.2], 0.4)
    2
    """
    f = check_array("freqs", freqs, ndim=1, low=0.0, min_size=1, max_abs=SCALE_MAX)
    tau = check_scale("tau", tau, high=1.0, high_open=True)
    constant = check_scale("constant", constant)
    val = np.sum(f >= tau) + np.sum(f[f < tau] ** 2) / tau**2
    if n is not None:
        val = min(val, check_int("n", n, low=1))
    return max(1, int(math.ceil(constant * val - 1e-9)))


def minimax_width(tau: float, *, constant: float = 1.0, n: int | None = None) -> int:
    r"""Worst-case width of Wu et al. 2023, Eq. (3): :math:`\lceil C\min\{2/\tau, n\}\rceil`.

    Examples
    --------
    >>> minimax_width(0.01, constant=2.0)
    400
    """
    tau = check_scale("tau", tau, high=1.0, high_open=True)
    constant = check_scale("constant", constant)
    val = 2.0 / tau
    if n is not None:
        val = min(val, check_int("n", n, low=1))
    return max(1, int(math.ceil(constant * val - 1e-9)))


def polynomial_frequencies(alpha: float, beta: float, d: int) -> np.ndarray:
    r"""The truncated polynomial model of the two-phase method (Wu et al. 2023, Sec. 2).

    .. math:: \mathrm{poly}(i;\alpha,\beta) = \beta i^{-\alpha}\ \text{for}\ i \le i^\star,\quad 0\ \text{beyond},

    :math:`i^\star = \max\{i: \sum_{j\le i}\beta j^{-\alpha} \le 1\}`, here also capped at
    ``d``. Entry 0 of the result is :math:`i = 1`.

    Examples
    --------
    >>> polynomial_frequencies(1.0, 0.5, 5).round(3).tolist()
    [0.5, 0.25, 0.167, 0.0, 0.0]
    """
    alpha = check_real("alpha", alpha, low=0.0, low_open=True)
    beta = check_scale("beta", beta)
    d = check_int("d", d, low=1, high=MAX_DOMAIN, reason="a dense frequency vector of d entries must fit in memory")
    v = beta * np.arange(1, d + 1, dtype=float) ** (-alpha)
    keep = np.cumsum(v) <= 1.0 + 1e-12
    return np.where(keep, v, 0.0)


def fit_polynomial(top_values) -> tuple[float, float]:
    r"""Fit :math:`\beta i^{-\alpha}` to the decreasing top-:math:`k` estimates (squared error).

    Minimises :math:`\sum_{i\le k}(\tilde f^*_i - \beta i^{-\alpha})^2` over
    :math:`\alpha, \beta > 0` (Wu et al. 2023, two-phase method step 3), starting from the
    least-squares line through :math:`(\log i, \log \tilde f^*_i)` on positive entries.

    Returns
    -------
    (alpha, beta)

    Examples
    --------
    >>> a, b = fit_polynomial(0.3 * np.arange(1, 21) ** -1.5)
    >>> round(a, 4), round(b, 4)
    (1.5, 0.3)
    """
    y = check_array("top_values", top_values, ndim=1, min_size=2, max_abs=SCALE_MAX)
    y = np.sort(y)[::-1]
    i = np.arange(1, y.size + 1, dtype=float)
    pos = y > 0
    if pos.sum() < 2:
        raise ValueError("top_values must contain at least two positive estimates")
    slope, icpt = np.polyfit(np.log(i[pos]), np.log(y[pos]), 1)
    x0 = np.array([max(-slope, 1e-3), icpt])
    if not (x0[0] <= 50.0 and -50.0 <= x0[1] <= 5.0):
        raise ValueError(
            "top_values lie outside the fitted model b * i**(-a) with a in [1e-6, 50] and log b in [-50, 5]: "
            f"their log-log line has slope {slope:.3g} and intercept {icpt:.3g}"
        )

    def resid(theta):
        a, logb = theta
        return np.exp(logb) * i ** (-a) - y

    sol = optimize.least_squares(resid, x0, bounds=([1e-6, -50.0], [50.0, 5.0]), xtol=1e-12, ftol=1e-12, gtol=1e-12)
    if not sol.success:  # status <= 0: the iteration limit or a numerical failure, not convergence
        raise RuntimeError(f"fit_polynomial: least squares did not converge ({sol.message})")
    return float(sol.x[0]), float(np.exp(sol.x[1]))


@dataclass(frozen=True)
class TwoPhaseResult:
    """Outcome of :func:`two_phase_width`: the width and the fitted model."""

    width: int
    alpha: float
    beta: float
    pilot_clients: int


def two_phase_width(
    items,
    *,
    d: int,
    tau: float,
    pilot_clients: int = 5000,
    pilot_width: int = 100,
    pilot_rows: int = 16,
    top_k: int = 20,
    constant: float = 2.0,
    rng: np.random.Generator | int | None = None,
) -> TwoPhaseResult:
    r"""The two-phase sketch-size selection of Wu et al. 2023, Section 2.

    1. sample ``pilot_clients`` clients without replacement; 2. run a
    ``pilot_rows`` :math:`\times` ``pilot_width`` count sketch on them; 3. fit
    :math:`\beta i^{-\alpha}` to the ``top_k`` largest estimates (:func:`fit_polynomial`);
    4. return the width of Eq. (2) for the fitted model (:func:`oracle_width`, with
    :math:`n` the number of clients and the given constant).

    Examples
    --------
    >>> from fedfreq.sketch import sample_client_items, zipf_frequencies
    >>> rng = np.random.default_rng(0)
    >>> x = sample_client_items(zipf_frequencies(1000, 1.5), 20000, rng=rng)
    >>> res = two_phase_width(x, d=1000, tau=0.01, pilot_clients=2000, rng=rng)
    >>> 1 <= res.width <= 400
    True
    """
    d = check_int("d", d, low=1, high=MERSENNE_PRIME - 1)
    x = _check_items(items, d, min_size=1)
    n = x.size
    pilot_clients = check_int("pilot_clients", pilot_clients, low=1, high=n)
    pilot_width = check_int("pilot_width", pilot_width, low=1, high=MERSENNE_PRIME - 1)
    pilot_rows = check_int("pilot_rows", pilot_rows, low=1, high=MAX_ROWS)
    top_k = check_int("top_k", top_k, low=2, high=d)
    gen = as_generator(rng)
    sample = gen.choice(x, size=pilot_clients, replace=False)
    est = sketch_estimate_clients([sample], d=d, width=pilot_width, rows=pilot_rows, design="shared", rng=gen)
    top = np.sort(est)[::-1][:top_k]
    alpha, beta = fit_polynomial(top)
    model = polynomial_frequencies(alpha, beta, d)
    w = oracle_width(model, tau, constant=constant, n=n)
    return TwoPhaseResult(w, alpha, beta, pilot_clients)
