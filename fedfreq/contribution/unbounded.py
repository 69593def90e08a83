"""Unbounded domains (Liu et al., 2023, Section 5): Algorithm 3, its threshold and exact δ,
its exact conditional error, the surrogate V(C), Theorem 5.2's bounds and Algorithm 4.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._rng import as_generator
from .._validation import check_array, check_int, check_real, check_scale
from ._checks import _delta, _epsilon, _finite_loss, _histograms, _out, _threshold, _thresholds
from .clipping import _rand_clip_column_sums, _sums_by_size

__all__ = [
    "unbounded_threshold",
    "unbounded_histogram",
    "unbounded_exact_delta",
    "unbounded_expected_error",
    "surrogate_error",
    "theorem52_bounds",
    "exponential_mechanism_probabilities",
    "select_threshold_exponential",
]


# Algorithm 3 (unbounded domain)
def unbounded_threshold(C: float, *, epsilon: float, delta: float) -> float:
    r"""Release threshold of Algorithm 3: :math:`t = C + \frac{C}{\varepsilon}\log\frac{C}{2\delta}`.

    Examples
    --------
    >>> round(unbounded_threshold(10, epsilon=1.0, delta=1e-3), 4)
    95.1719
    """
    c = _threshold(C)
    t = c + (c / _epsilon(epsilon)) * math.log(c / (2.0 * _delta(delta)))
    if not math.isfinite(t):
        raise ValueError(
            f"unbounded_threshold: C / epsilon * log(C / (2 delta)) overflows double precision for C={C!r}, "
            f"epsilon={epsilon!r}, delta={delta!r}; the threshold must stay below 1.8e308"
        )
    return t


def unbounded_histogram(histograms, *, C: int, epsilon: float, delta: float, rng=None) -> np.ndarray:
    r"""Algorithm 3 of Liu et al. 2023: rand-clip, Laplace noise on non-zero counts, threshold.

    :math:`h_i = \text{rand-clip}(N_i, C)`, :math:`\widetilde N_j = \sum_i h_{ij} + \mathrm{Lap}(C/\varepsilon)`
    for the items with :math:`\overline N_j > 0`, and
    :math:`\widehat N_j = \widetilde N_j\,\mathbf 1\{\widetilde N_j > t\}` with
    t of :func:`unbounded_threshold`. Items never held by anyone, and items below
    the threshold, get 0. (ε, δ)-DP for add/remove neighbours (Lemma 5.1).
    The run time is linear in the number of items with non-zero counts.

    The noise is drawn with numpy's floating-point sampler: a simulation of the
    mechanism's law for measuring accuracy, not a deployable release (a float sampler
    has a support gap; integer counts are released safely by
    :func:`fedfreq.deploy.release_counts`).

    Returns
    -------
    ndarray, shape (d,)

    Examples
    --------
    >>> unbounded_histogram([[0, 3], [0, 2]], C=2, epsilon=1.0, delta=0.1, rng=0).tolist()[0]
    0.0
    """
    N = _histograms(histograms)
    c = check_int("C", C, low=1)
    eps = _epsilon(epsilon)
    t = unbounded_threshold(c, epsilon=eps, delta=delta)
    gen = as_generator(rng)
    support = np.flatnonzero(N.sum(axis=0) > 0)
    # rand-clip only needs the columns that occur; its column sums are formed
    # without materialising the clipped (n, d) matrix
    sub = N if support.size == N.shape[1] else N[:, support]
    hbar = _rand_clip_column_sums(sub, c, gen).astype(float)
    noisy = hbar + gen.laplace(0.0, c / eps, size=support.size)
    out = np.zeros(N.shape[1])
    out[support] = np.where(noisy > t, noisy, 0.0)
    return out


def unbounded_exact_delta(C: int, *, epsilon: float, delta: float, t: float | None = None) -> float:
    r"""Exact δ of Algorithm 3 at level ε for one added user holding only new items (add/remove).

    If a user holding :math:`c_1, \dots, c_k` copies of items no one else holds
    (:math:`\sum c_j \le C` after rand-clip) joins, every other output keeps its
    law up to a factor :math:`e^{\varepsilon}`, and each new item is released
    with probability :math:`p_j = \tfrac12 e^{-\varepsilon(t - c_j)/C}` (:math:`c_j \le t`).
    The hockey-stick divergence of the pair (with, without) at ε is then exactly
    :math:`1 - \prod_j (1 - p_j)`; this function maximises it over all integer
    partitions of at most C units. ``t`` defaults to :func:`unbounded_threshold`;
    a different ``t`` audits a modified threshold.

    Examples
    --------
    >>> unbounded_exact_delta(4, epsilon=1.0, delta=1e-3) <= 1e-3
    True
    """
    c = check_int("C", C, low=1, high=40)
    eps = _epsilon(epsilon)
    dl = _delta(delta)
    tt = unbounded_threshold(c, epsilon=eps, delta=dl) if t is None else check_real("t", t, low=float(c))
    best = 0.0

    # the divergence grows with every unit, so only partitions of exactly C matter
    def partitions(total, max_part):
        if total == 0:
            yield []
            return
        for first in range(min(total, max_part), 0, -1):
            for rest in partitions(total - first, first):
                yield [first] + rest

    for parts in partitions(c, c):
        logp = math.log(0.5) - eps * (tt - np.asarray(parts, dtype=float)) / c
        val = -math.expm1(float(np.sum(np.log1p(-np.exp(logp)))))
        best = max(best, val)
    return best


def _laplace_tail_moments(u: np.ndarray, mu: np.ndarray, b: float) -> tuple[np.ndarray, np.ndarray]:
    """(P[X > u], E[X 1{X > u}]) for X ~ Laplace(mu, b), elementwise."""
    with np.errstate(over="ignore"):  # |z| = inf gives e = 0, the exact limit
        z = (u - mu) / b
    upper = z >= 0
    e = np.exp(-np.abs(z))
    p = np.where(upper, 0.5 * e, 1.0 - 0.5 * e)
    m = np.where(upper, 0.5 * e * (u + b), mu - 0.5 * e * (u - b))
    return p, m


def unbounded_expected_error(hbar, Nbar, *, C: float, epsilon: float, delta: float, per_item: bool = False):
    r"""Exact :math:`\mathbb E[\|\widehat N - \overline N\|_1 \mid \bar h]` of Algorithm 3 given the clipped sums.

    For each item with :math:`\overline N_j > 0` and :math:`X = \bar h_j + Z`,
    :math:`Z \sim \mathrm{Lap}(C/\varepsilon)`:
    :math:`\mathbb E|X\mathbf 1\{X > t\} - \overline N_j|
    = \overline N_j \Pr[X \le t] + \mathbb E[|X - \overline N_j|\mathbf 1\{X > t\}]`,
    in closed form from the Laplace tail moments. The expectation over rand-clip
    is left to the caller (average over draws of ``hbar``).

    Parameters
    ----------
    hbar : array_like, shape (..., d)
        Clipped sums :math:`\bar h_j = \sum_i h_{ij}` (one or several draws).
    Nbar : array_like, shape (d,)
        True totals; items with :math:`\overline N_j = 0` are ignored.
    per_item : bool
        Return the error of every item (shape of ``hbar``, 0 where
        :math:`\overline N_j = 0`) instead of their sum.

    Examples
    --------
    >>> round(unbounded_expected_error([100.0], [100.0], C=1, epsilon=1.0, delta=0.01), 4)
    1.0
    """
    if not isinstance(per_item, bool | np.bool_):
        raise ValueError(f"per_item must be True or False; got {per_item!r}")
    h = check_array("hbar", hbar, low=0.0)
    Nb = check_array("Nbar", Nbar, ndim=1, low=0.0)
    if h.ndim == 0 or h.shape[-1] != Nb.size:
        raise ValueError(f"hbar must have last axis {Nb.size} (the size of Nbar); got shape {h.shape}")
    c = _threshold(C)
    eps = _epsilon(epsilon)
    t = unbounded_threshold(c, epsilon=eps, delta=delta)
    b = c / eps
    keep = Nb > 0
    h = h[..., keep]
    Nv = np.broadcast_to(Nb[keep], h.shape)
    mt = np.maximum(t, Nv)
    p_t, m_t = _laplace_tail_moments(np.full(h.shape, t), h, b)
    p_m, m_m = _laplace_tail_moments(mt, h, b)
    with np.errstate(over="ignore", invalid="ignore"):
        err = Nv * (1.0 - p_t) + (m_m - Nv * p_m) + (Nv * (p_t - p_m) - (m_t - m_m))
        if per_item:
            full = np.zeros(err.shape[:-1] + (Nb.size,))
            full[..., keep] = err
            return _finite_loss(full, "hbar, Nbar, C and epsilon")
        out = _finite_loss(err.sum(axis=-1), "hbar, Nbar, C and epsilon")
    return _out(out)


def surrogate_error(histograms, C, *, epsilon: float, delta: float):
    r"""The surrogate :math:`V(C)` of Algorithm 4 (Liu et al. 2023, Sec. 5).

    .. math:: V(C) ={}& 2\sum_i (\|N_i\|_1 - C)_+ \\
       &+ \sum_{j:\overline N_j > 0} \min\Big(\sum_i \frac{C N_{ij}}{\max(C, \|N_i\|_1)},\
       C + \frac{C}{\varepsilon}\log\frac{C}{2\delta}\Big)

    Vectorised over an array of thresholds ``C``. Both sums depend on a user only
    through its size, so the users are summed by size once (see :func:`clip_l1_sum`)
    and each threshold costs a product with the (sizes × items) table.

    Examples
    --------
    >>> surrogate_error([[4, 0], [1, 1]], 2.0, epsilon=1.0, delta=0.1)
    8.0
    """
    N = _histograms(histograms)
    Cs, scalar = _thresholds(C)
    eps = _epsilon(epsilon)
    dl = _delta(delta)
    sizes, count, by_size = _sums_by_size(N)
    keep = by_size.sum(axis=0) > 0
    A = by_size[:, keep].astype(float)
    s = sizes.astype(float)
    w = Cs[:, None] / np.maximum(Cs[:, None], np.maximum(s, 1.0)[None, :])
    eh = w @ A  # expected clipped sums, one row per threshold
    t = np.array([unbounded_threshold(c, epsilon=eps, delta=dl) for c in Cs])
    excess = np.maximum(s[None, :] - Cs[:, None], 0.0) @ count.astype(float)  # sum_i (||N_i||_1 - C)_+
    out = 2.0 * excess + np.minimum(eh, t[:, None]).sum(axis=1)
    return _out(out[0]) if scalar else out


def theorem52_bounds(
    histograms, hbar_draws, C: float, *, epsilon: float, delta: float, C_max: float
) -> tuple[float, float, float]:
    r"""The two sides of Liu et al. 2023, Theorem 5.2 (Eq. 1), and a corrected upper bound.

    With :math:`E_j = \mathbb E[\min(\bar h_j, t)]` estimated by the mean over the
    rand-clip draws ``hbar_draws`` (shape (R, d)) and :math:`B = \sum_i (\|N_i\|_1 - C)_+`:

    * lower :math:`= B/2 + \sum_j E_j / (12\log(C_m/2\delta))`;
    * upper (paper) :math:`= 2B + \sum_j E_j`;
    * corrected upper :math:`= 2B + \sum_j E_j + (t + C/\varepsilon)\sum_{j:\bar h_j \le t} q_j`,
      :math:`q_j = \tfrac12 e^{-\varepsilon(t - \bar h_j)/C}` (averaged over the draws): the
      probability that an item below the threshold is released anyway, times a bound
      on the error it then causes. Valid when :math:`t \ge 2C/\varepsilon`.

    Only items with :math:`\overline N_j > 0` count. Returns ``(lower, upper, corrected_upper)``.

    Examples
    --------
    >>> lo, up, fixed = theorem52_bounds([[1]], [[1]], 1, epsilon=1.0, delta=0.01, C_max=1)
    >>> bool(lo <= up <= fixed)
    True
    """
    N = _histograms(histograms)
    h = check_array("hbar_draws", hbar_draws, ndim=2, low=0.0)
    if h.shape[1] != N.shape[1]:
        raise ValueError(f"hbar_draws must have shape (R, {N.shape[1]}); got {h.shape}")
    c = _threshold(C)
    eps = _epsilon(epsilon)
    dl = _delta(delta)
    cm = check_real("C_max", C_max, low=c)
    t = unbounded_threshold(c, epsilon=eps, delta=dl)
    keep = N.sum(axis=0) > 0
    h = h[:, keep]
    B = float(np.maximum(N.sum(axis=1) - c, 0.0).sum())
    Ej = float(np.minimum(h, t).sum(axis=1).mean())
    q = np.where(h <= t, 0.5 * np.exp(-eps * (t - np.minimum(h, t)) / c), 0.0).sum(axis=1).mean()
    lower = B / 2 + Ej / (12.0 * math.log(cm / (2.0 * dl)))
    upper = 2 * B + Ej
    return lower, upper, upper + (t + c / eps) * float(q)


def exponential_mechanism_probabilities(scores, *, epsilon: float, sensitivity: float) -> np.ndarray:
    r"""Output law of the exponential mechanism minimising ``scores``:
    :math:`p_k \propto e^{-\varepsilon V_k/(2\Delta)}`.

    Computed with logsumexp, so large scores neither overflow nor underflow.

    Examples
    --------
    >>> exponential_mechanism_probabilities([0.0, 2.0], epsilon=1.0, sensitivity=1.0).round(4).tolist()
    [0.7311, 0.2689]
    """
    v = check_array("scores", scores, ndim=1, min_size=1)
    eps = _epsilon(epsilon)
    sens = check_real("sensitivity", sensitivity, low=0.0, low_open=True)
    with np.errstate(over="ignore"):
        logits = -eps * v / (2.0 * sens)
    if not np.all(np.isfinite(logits)):
        raise ValueError(
            "epsilon * scores / (2 sensitivity) must stay finite (below 1.8e308 in magnitude); got epsilon="
            f"{eps!r}, sensitivity={sens!r} and max |scores| = {float(np.max(np.abs(v))):g}"
        )
    return np.exp(logits - special.logsumexp(logits))


def select_threshold_exponential(
    histograms, grid, *, epsilon: float, delta: float, epsilon_prime: float, C_max: float, rng=None
) -> float:
    r"""Algorithm 4 of Liu et al. 2023: private threshold for Algorithm 3 by the exponential mechanism.

    Scores :math:`V(C)` (:func:`surrogate_error`) on ``grid`` ⊆ [1, C_m], sensitivity
    :math:`5C_m/2` as in the paper, privacy ε'. The paper's bound on the
    sensitivity assumes every user holds at most :math:`C_m` items.

    Examples
    --------
    >>> c = select_threshold_exponential(
    ...     [[3, 1], [1, 1]], [1, 2, 4], epsilon=1.0, delta=0.1, epsilon_prime=1.0, C_max=4, rng=0
    ... )
    >>> c in (1, 2, 4)
    True
    """
    N = _histograms(histograms)
    check_array("grid", grid, ndim=1, min_size=1)
    g, _ = _thresholds(grid, name="grid")
    cm = check_scale("C_max", C_max)
    _epsilon(epsilon_prime, "epsilon_prime")
    if g.max() > cm:
        raise ValueError(f"grid must lie in (0, C_max]; got max {g.max()!r} > {cm!r}")
    if N.sum(axis=1).max() > cm:
        raise ValueError("C_max must bound every user's ||N_i||_1 (the sensitivity 5 C_max / 2 relies on it)")
    gen = as_generator(rng)
    v = surrogate_error(N, g, epsilon=epsilon, delta=delta)
    p = exponential_mechanism_probabilities(np.atleast_1d(v), epsilon=epsilon_prime, sensitivity=2.5 * cm)
    return float(g[gen.choice(g.size, p=p)])
