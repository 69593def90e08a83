r"""Privacy audits: exact (ε, δ) of two output laws and Monte Carlo lower bounds on ε.

A mechanism :math:`M` is (ε, δ)-DP when, for every pair of neighbouring datasets
:math:`D, D'` and every event :math:`S`,

.. math:: \Pr[M(D) \in S] \le e^\varepsilon \Pr[M(D') \in S] + \delta

and the same with :math:`D, D'` exchanged. An *audit* measures how far a concrete
pair of output laws :math:`P = \mathcal L(M(D))`, :math:`Q = \mathcal L(M(D'))`
actually goes, and compares it with the claimed (ε, δ). This module provides the
generic tools; it knows nothing of the mechanisms of ``fedfreq``.

* Exact audits, when both laws can be enumerated on a small instance:
  :func:`hockey_stick` (δ at a given ε, both directions) and :func:`exact_epsilon`
  (the smallest ε at a given δ), computed in log space; :func:`product_logpmf`
  (the law of independent releases, for composition), :func:`binned_laplace_logpmf`
  (a Laplace release observed on a partition) and :func:`gaussian_epsilon` /
  :func:`gaussian_hockey_stick` (a Gaussian release whose mean moves by μ noise
  standard deviations, exact by the formula of Balle & Wang 2018).
* Monte Carlo audits, when only samples are available:
  :func:`clopper_pearson`, :func:`epsilon_lower_bound` and
  :func:`threshold_epsilon_lower_bound` turn the frequencies of a rejection event
  under :math:`D` and :math:`D'` into a lower bound on ε that holds with a stated
  confidence (Jagielski, Ullman & Oprea 2020; Nasr et al. 2021).
* :class:`RecordingGenerator`: a :class:`numpy.random.Generator` that records every
  draw a mechanism asks for (so an audit reads the noise law the code really uses)
  and can return prescribed values instead (so an audit can check that the output
  depends on the data only through a noisy statistic).

An exact audit gives the true privacy loss of the enumerated pair; a Monte Carlo audit
gives a statistical lower bound. Either way, a value above the claim refutes the claim
(with probability at most 1 − ``confidence`` of a false alarm in the Monte Carlo case),
and a value at or below it is evidence, not a proof, since only some pairs are tried.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, special, stats

from ._numerics import log1mexp
from ._validation import EPSILON_MAX, check_array, check_int, check_real
from .accounting._checks import _check_log_probs
from .accounting._checks import _check_pair as _check_log_pair
from .accounting.divergences import _hockey_stick_kernel
from .accounting.gaussian import gaussian_delta

__all__ = [
    "hockey_stick",
    "exact_epsilon",
    "product_logpmf",
    "binned_laplace_logpmf",
    "gaussian_hockey_stick",
    "gaussian_epsilon",
    "clopper_pearson",
    "epsilon_lower_bound",
    "threshold_epsilon_lower_bound",
    "Draw",
    "RecordingGenerator",
]

#: Largest number of atoms of an enumerated law (8 bytes each, several copies).
MAX_ATOMS = 10**7
#: Largest number of Monte Carlo runs accepted by the interval and bound functions.
MAX_TRIALS = 10**12
_TRIALS_REASON = "no simulation runs that many times; the limit keeps the beta quantiles accurate"


def _check_size(name: str, log_p) -> None:
    try:
        size = np.size(log_p)
    except ValueError as exc:  # ragged input
        raise ValueError(f"{name} must be a 1-dimensional array of log-probabilities") from exc
    if size > MAX_ATOMS:
        raise ValueError(f"{name} must have at most {MAX_ATOMS} atoms (memory); got {size}")


def _check_logpmf(name: str, log_p) -> np.ndarray:
    _check_size(name, log_p)
    return _check_log_probs(name, log_p)


def _check_pair(log_p, log_q) -> tuple[np.ndarray, np.ndarray]:
    _check_size("log_p", log_p)
    _check_size("log_q", log_q)
    return _check_log_pair(log_p, log_q)


def _one_sided_delta(lp: np.ndarray, lq: np.ndarray, eps: float) -> float:
    return float(_hockey_stick_kernel(lp, lq, np.asarray([eps]))[0])


def hockey_stick(log_p, log_q, epsilon: float) -> float:
    r"""Exact δ(ε) of a pair of discrete laws, in both directions.

    .. math:: \delta(\varepsilon) = \max\Big(\sum_i (p_i - e^\varepsilon q_i)_+,\
              \sum_i (q_i - e^\varepsilon p_i)_+\Big),

    the smallest δ for which the pair satisfies the (ε, δ) inequality for every event
    (Dwork & Roth 2014, Definition 2.4). Terms are formed in log space.

    Parameters
    ----------
    log_p, log_q : array_like, shape (k,)
        Log-probabilities of the two laws on a common list of outcomes (``-inf`` for an
        outcome a law cannot produce); each must sum to one.
    epsilon : float
        ε >= 0.

    Returns
    -------
    float
        δ(ε) in [0, 1].

    Examples
    --------
    >>> lp, lq = np.log([0.75, 0.25]), np.log([0.25, 0.75])
    >>> round(hockey_stick(lp, lq, 0.0), 12)
    0.5
    >>> hockey_stick(lp, lq, math.log(3.0))
    0.0
    """
    lp, lq = _check_pair(log_p, log_q)
    eps = check_real("epsilon", epsilon, low=0.0)
    return max(_one_sided_delta(lp, lq, eps), _one_sided_delta(lq, lp, eps))


def _one_sided_epsilon(lp: np.ndarray, lq: np.ndarray, delta: float) -> float:
    """Smallest eps >= 0 with sum_i (p_i - e^eps q_i)_+ <= delta."""
    keep = np.isfinite(lp)
    lp, lq = lp[keep], lq[keep]
    loss = lp - lq  # +inf where q = 0 < p
    inf = loss == np.inf
    # mass of P on outcomes Q cannot produce: no finite eps covers more than delta of it
    inf_mass = float(np.exp(special.logsumexp(lp[inf]))) if inf.any() else 0.0
    if inf_mass > delta:
        return math.inf
    lp, lq, loss = lp[~inf], lq[~inf], loss[~inf]
    # group equal losses; u holds the distinct losses, largest first
    u, inv = np.unique(-loss, return_inverse=True)
    u = -u
    gp = np.full(u.size, -np.inf)
    gq = np.full(u.size, -np.inf)
    np.logaddexp.at(gp, inv, lp)
    np.logaddexp.at(gq, inv, lq)
    J = int(np.count_nonzero(u > 0))

    group_loss = gp - gq  # equals u up to the rounding of the grouped sums

    def delta_at(eps: float) -> float:  # delta(eps) from the groups with loss > eps, in log space
        # a group whose summed loss rounds to at most eps contributes nothing (log1mexp of a
        # non-negative number would be NaN, and a NaN would silently misdirect the search)
        sel = (u > eps) & (group_loss > eps)
        if not sel.any():
            return inf_mass
        return inf_mass + float(np.exp(special.logsumexp(gp[sel] + log1mexp(eps - group_loss[sel]))))

    if J == 0 or delta_at(0.0) <= delta:
        return 0.0
    # delta(u_j) is non-decreasing in j and delta(u_0) = inf_mass <= delta: find the first
    # j with delta(u_j) > delta (j = J if none); the answer lies in [u_j, u_{j-1}], where
    # delta(eps) = inf_mass + P_j - e^eps Q_j with P_j, Q_j the masses of the first j groups
    lo, hi = 0, J
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if delta_at(float(u[mid])) > delta:
            hi = mid
        else:
            lo = mid
    j = hi
    log_P = float(special.logsumexp(gp[:j]))
    log_Q = float(special.logsumexp(gq[:j]))
    eps = math.log(inf_mass + math.exp(log_P) - delta) - log_Q
    left = float(u[j]) if j < J else 0.0
    return float(min(max(eps, left), float(u[j - 1])))


def exact_epsilon(log_p, log_q, delta: float = 0.0) -> float:
    r"""Smallest ε >= 0 for which a pair of discrete laws is (ε, δ)-indistinguishable.

    The inverse of :func:`hockey_stick`: the smallest ε with δ(ε) <= ``delta`` in both
    directions. δ(ε) is continuous and decreasing, and between two consecutive values of
    the privacy loss :math:`\log(p_i/q_i)` it equals :math:`P_k - e^\varepsilon Q_k`
    (the masses of the outcomes with the larger losses), so ε is found by bisection over
    the sorted losses and then in closed form, :math:`\varepsilon = \log((P_k-\delta)/Q_k)`.
    With ``delta = 0`` this is the largest absolute log-ratio,
    :math:`\max_i |\log(p_i/q_i)|`. ``inf`` if one law puts more than δ of its mass
    where the other has none.

    Parameters
    ----------
    log_p, log_q : array_like, shape (k,)
        Log-probabilities on a common list of outcomes; each must sum to one.
    delta : float
        δ in [0, 1).

    Examples
    --------
    >>> lp, lq = np.log([0.75, 0.25]), np.log([0.25, 0.75])
    >>> round(exact_epsilon(lp, lq), 6) == round(math.log(3.0), 6)
    True
    >>> round(exact_epsilon(lp, lq, delta=0.25), 6)   # (0.75 - 0.25) / 0.25 = 2
    0.693147
    """
    lp, lq = _check_pair(log_p, log_q)
    d = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    if d == 0.0:  # pure DP: the largest absolute log-ratio, inf on a support mismatch
        if not np.array_equal(np.isfinite(lp), np.isfinite(lq)):
            return math.inf
        both = np.isfinite(lp)
        return float(np.max(np.abs(lp[both] - lq[both])))
    return max(_one_sided_epsilon(lp, lq, d), _one_sided_epsilon(lq, lp, d))


def product_logpmf(*log_pmfs) -> np.ndarray:
    r"""Log-pmf of independent releases observed together.

    :math:`\log p(a, b, \dots) = \log p_1(a) + \log p_2(b) + \dots`:

    the joint law of several independent mechanisms run on the same dataset (their
    composition), flattened in C order, so that two such joint laws built in the same
    order can be passed to :func:`hockey_stick` or :func:`exact_epsilon`.

    Parameters
    ----------
    *log_pmfs : array_like
        One or more 1-D log-pmfs, each summing to one; at most
        :data:`MAX_ATOMS` atoms in total.

    Examples
    --------
    >>> np.exp(product_logpmf(np.log([0.5, 0.5]), np.log([0.1, 0.9]))).round(3).tolist()
    [0.05, 0.45, 0.05, 0.45]
    """
    if not log_pmfs:
        raise ValueError("log_pmfs must hold at least one log-pmf; got none")
    parts = [_check_logpmf(f"log_pmfs[{i}]", p) for i, p in enumerate(log_pmfs)]
    size = math.prod(p.size for p in parts)
    if size > MAX_ATOMS:
        raise ValueError(f"log_pmfs must have at most {MAX_ATOMS} joint atoms (memory); got {size}")
    out = parts[0]
    for p in parts[1:]:
        out = np.add.outer(out, p).ravel()
    return out


def _laplace_log_cdf_pair(x: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """log F(x) and log(1 - F(x)) of Laplace(0, scale), accurate in both tails."""
    z = x / scale
    log_half = math.log(0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_cdf = np.where(z < 0, log_half + z, np.log1p(-0.5 * np.exp(-np.abs(z))))
        log_sf = np.where(z >= 0, log_half - z, np.log1p(-0.5 * np.exp(-np.abs(z))))
    return log_cdf, log_sf


def binned_laplace_logpmf(loc: float, scale: float, edges) -> np.ndarray:
    r"""Law of a Laplace release :math:`\mathrm{loc} + \mathrm{Lap}(\mathrm{scale})` observed on a partition.

    The cells are :math:`(-\infty, e_0), [e_0, e_1), \dots, [e_{K-1}, \infty)` for the
    increasing ``edges`` :math:`e_0 < \dots < e_{K-1}`; observing a release through a
    partition is post-processing, so the ε of two binned laws never exceeds the ε of the
    releases, and it equals :math:`|\mathrm{loc} - \mathrm{loc}'|/\mathrm{scale}` as soon
    as a cell lies beyond both locations. Cell probabilities are differences of the CDF
    formed in log space, so far tails keep their relative accuracy.

    Parameters
    ----------
    loc : float
    scale : float
        Laplace scale b > 0.
    edges : array_like, shape (K,)
        Strictly increasing finite cell boundaries, K >= 1.

    Returns
    -------
    ndarray, shape (K + 1,)

    Examples
    --------
    >>> np.exp(binned_laplace_logpmf(0.0, 1.0, [0.0])).tolist()
    [0.5, 0.5]
    >>> lp = binned_laplace_logpmf(0.0, 1.0, [-1.0, 0.0, 1.0, 2.0])
    >>> lq = binned_laplace_logpmf(1.0, 1.0, [-1.0, 0.0, 1.0, 2.0])
    >>> round(exact_epsilon(lp, lq), 9)   # shift 1 / scale 1
    1.0
    """
    mu = check_real("loc", loc)
    b = check_real("scale", scale, low=0.0, low_open=True)
    e = check_array("edges", edges, ndim=1, min_size=1)
    if np.any(np.diff(e) <= 0):
        raise ValueError("edges must be strictly increasing")
    if e.size + 1 > MAX_ATOMS:
        raise ValueError(f"edges must have fewer than {MAX_ATOMS} entries; got {e.size}")
    log_cdf, log_sf = _laplace_log_cdf_pair(e - mu, b)
    out = np.empty(e.size + 1)
    out[0], out[-1] = log_cdf[0], log_sf[-1]
    lo, hi = e[:-1] - mu, e[1:] - mu
    # a cell below loc: F(hi) - F(lo) = F(hi) (1 - e^{(lo - hi)/b}); above loc: the same with
    # the survival function; a cell holding loc: 1 - F(lo) - S(hi)
    below = hi <= 0
    above = lo >= 0
    width = (lo - hi) / b
    with np.errstate(divide="ignore", invalid="ignore"):
        mid = np.log1p(-0.5 * np.exp(np.minimum(lo, 0) / b) - 0.5 * np.exp(-np.maximum(hi, 0) / b))
        out[1:-1] = np.where(below, log_cdf[1:] + log1mexp(width), np.where(above, log_sf[:-1] + log1mexp(width), mid))
    return out - special.logsumexp(out)  # remove the last-bit drift of the sum


def gaussian_hockey_stick(epsilon: float, mu: float) -> float:
    r"""Exact δ(ε) of :math:`\mathcal N(0, 1)` against :math:`\mathcal N(\mu, 1)` (Balle & Wang 2018, Thm 8).

    .. math:: \delta(\varepsilon) = \Phi\Big(\frac\mu2 - \frac\varepsilon\mu\Big)
              - e^\varepsilon\,\Phi\Big(-\frac\mu2 - \frac\varepsilon\mu\Big),

    the same in both directions. A Gaussian release whose mean moves by a vector of
    ℓ2 norm Δ under noise :math:`\mathcal N(0, \sigma^2 I)` has μ = Δ/σ, and so has
    any adaptive sequence of Gaussian releases whose means move by :math:`\Delta_t`
    with :math:`\sum_t \Delta_t^2/\sigma_t^2 = \mu^2` (Dong, Roth & Su 2022).

    Both terms nearly cancel when μ is small, where a difference of the two normal
    CDFs returns 0 or a value far below the truth; the value is therefore
    :func:`fedfreq.accounting.gaussian_delta` at Δ/σ = μ, the certified,
    cancellation-free upper bound (relative excess about 1e-13 at ordinary μ).

    Parameters
    ----------
    epsilon : float
        ε >= 0.
    mu : float
        μ = 0 (which gives δ = 0) or μ in [1e-300, 1e300].

    Examples
    --------
    >>> round(gaussian_hockey_stick(0.0, 1.0), 6)   # total variation 2 Phi(1/2) - 1
    0.382925
    """
    eps = check_real("epsilon", epsilon, low=0.0)
    m = _check_gaussian_mu(mu)
    if m == 0.0:
        return 0.0
    return float(gaussian_delta(eps, sensitivity=m, sigma=1.0))


def _check_gaussian_mu(mu) -> float:
    """μ = 0 or μ in [1e-300, 1e300], the range of :func:`fedfreq.accounting.gaussian_delta`."""
    m = check_real("mu", mu, low=0.0, high=1e300, reason="the Gaussian privacy profile is evaluated up to it")
    if 0.0 < m < 1e-300:
        raise ValueError(
            f"mu must be 0 or lie in [1e-300, 1e300] (the range in which the Gaussian privacy profile is "
            f"evaluated); got {mu!r}"
        )
    return m


def gaussian_epsilon(delta: float, mu: float) -> float:
    r"""Smallest ε >= 0 with :func:`gaussian_hockey_stick` (ε, μ) <= δ.

    Parameters
    ----------
    delta : float
        δ in (0, 1).
    mu : float
        μ = 0 or μ in [1e-300, 1e300]. An ε above 1e6 raises ValueError.

    Examples
    --------
    >>> e = gaussian_epsilon(1e-5, 0.25)
    >>> round(gaussian_hockey_stick(e, 0.25) / 1e-5, 6)
    1.0
    """
    d = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    m = _check_gaussian_mu(mu)
    if gaussian_hockey_stick(0.0, m) <= d:
        return 0.0
    hi = 1.0
    while gaussian_hockey_stick(hi, m) > d:
        hi *= 2.0
        if hi > EPSILON_MAX:
            raise ValueError(
                f"the epsilon at which mu={m!r} reaches delta={d!r} exceeds {EPSILON_MAX:g}, the largest epsilon "
                "the Gaussian privacy profile is checked at"
            )
    return float(optimize.brentq(lambda e: gaussian_hockey_stick(e, m) - d, 0.0, hi, xtol=1e-13, rtol=1e-13))


def clopper_pearson(successes: int, trials: int, confidence: float) -> tuple[float, float]:
    r"""Two-sided Clopper–Pearson interval for a binomial proportion.

    With :math:`\alpha = 1 - \mathrm{confidence}`, the interval is
    :math:`[B^{-1}(\alpha/2;\,k,\,n-k+1),\ B^{-1}(1-\alpha/2;\,k+1,\,n-k)]` with
    :math:`B^{-1}` the beta quantile (0 and 1 at the ends). It covers the true
    proportion with probability at least ``confidence`` for every proportion; each end
    alone is a one-sided bound at level :math:`1 - \alpha/2`.

    Parameters
    ----------
    successes : int
        k, 0 <= k <= n.
    trials : int
        n >= 1.
    confidence : float
        In (0, 1).

    Examples
    --------
    >>> lo, hi = clopper_pearson(0, 100, 0.95)
    >>> lo, round(hi, 4)
    (0.0, 0.0362)
    """
    n = check_int("trials", trials, low=1, high=MAX_TRIALS, reason=_TRIALS_REASON)
    k = check_int("successes", successes, low=0, high=n)
    c = check_real("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    alpha = 1.0 - c
    lo = 0.0 if k == 0 else float(stats.beta.ppf(alpha / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return lo, hi


def epsilon_lower_bound(
    successes_p: int, trials_p: int, successes_q: int, trials_q: int, *, delta: float, confidence: float
) -> float:
    r"""Lower bound on ε from the frequencies of one event under two neighbouring datasets.

    If the mechanism is (ε, δ)-DP then :math:`p \le e^\varepsilon q + \delta` for the
    event's probabilities p (under D) and q (under D'), so
    :math:`\varepsilon \ge \log((p - \delta)/q)`. With :math:`\underline p` the lower
    and :math:`\overline q` the upper end of Clopper–Pearson intervals
    (:func:`clopper_pearson`) at confidence :math:`1 - \alpha/2` each
    (:math:`\alpha = 1 - \mathrm{confidence}`), the returned
    :math:`\max\big(0, \log((\underline p - \delta)/\overline q)\big)` exceeds the
    pair's true ε with probability at most α, by the union bound over the two
    intervals (Jagielski, Ullman & Oprea 2020). 0 means the samples show nothing.

    The event must be chosen before looking at the samples it is evaluated on.

    Parameters
    ----------
    successes_p, trials_p : int
        How often the event occurred in ``trials_p`` independent runs on D.
    successes_q, trials_q : int
        The same on D'.
    delta : float
        The claimed δ in [0, 1).
    confidence : float
        In (0, 1); 1 − confidence bounds the probability of a false alarm.

    Examples
    --------
    >>> round(epsilon_lower_bound(900, 1000, 100, 1000, delta=0.0, confidence=0.99), 3)
    1.929
    >>> epsilon_lower_bound(500, 1000, 500, 1000, delta=0.0, confidence=0.99)
    0.0
    """
    n_p = check_int("trials_p", trials_p, low=1, high=MAX_TRIALS, reason=_TRIALS_REASON)
    k_p = check_int("successes_p", successes_p, low=0, high=n_p)
    n_q = check_int("trials_q", trials_q, low=1, high=MAX_TRIALS, reason=_TRIALS_REASON)
    k_q = check_int("successes_q", successes_q, low=0, high=n_q)
    d = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    c = check_real("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    successes_p, trials_p, successes_q, trials_q = k_p, n_p, k_q, n_q
    inner = 1.0 - (1.0 - c) / 2.0
    p_lo, _ = clopper_pearson(successes_p, trials_p, 2 * inner - 1)
    _, q_hi = clopper_pearson(successes_q, trials_q, 2 * inner - 1)
    if p_lo <= d:
        return 0.0
    return max(0.0, math.log(p_lo - d) - math.log(q_hi))


def threshold_epsilon_lower_bound(samples_p, samples_q, thresholds, *, delta: float, confidence: float) -> float:
    r"""Monte Carlo lower bound on ε from scalar outputs, over a family of threshold events.

    For each threshold t the events :math:`\{x > t\}` and :math:`\{x \le t\}` are tried
    in both directions (D against D' and D' against D) with :func:`epsilon_lower_bound`;
    the :math:`4|T|` tests share the error budget by the union bound (each runs at
    confidence :math:`1 - \alpha/(4|T|)`), so the largest of their bounds exceeds the
    true ε of the pair with probability at most :math:`\alpha = 1 - \mathrm{confidence}`.

    The thresholds must not be chosen from ``samples_p`` or ``samples_q`` (take them from
    the claimed law, a fixed grid or a separate pilot run).

    Parameters
    ----------
    samples_p, samples_q : array_like, shape (n_p,), (n_q,)
        Independent outputs (or a scalar statistic of them) of the mechanism on D and on
        D'.
    thresholds : array_like, shape (T,)
        The candidate thresholds, at most 10 000.
    delta : float
        The claimed δ in [0, 1).
    confidence : float
        In (0, 1).

    Examples
    --------
    >>> g = np.random.default_rng(0)
    >>> x, y = g.laplace(0.0, 1.0, 20_000), g.laplace(1.0, 1.0, 20_000)
    >>> lb = threshold_epsilon_lower_bound(x, y, [-2.0, 0.0, 2.0], delta=0.0, confidence=0.99)
    >>> bool(0.5 < lb <= 1.0)   # the pair's true eps is 1
    True
    """
    x = check_array("samples_p", samples_p, ndim=1, min_size=1)
    y = check_array("samples_q", samples_q, ndim=1, min_size=1)
    t = check_array("thresholds", thresholds, ndim=1, min_size=1)
    if t.size > 10_000:
        raise ValueError(f"thresholds must hold at most 10000 values (union bound); got {t.size}")
    d = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
    c = check_real("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    each = 1.0 - (1.0 - c) / (4 * t.size)
    nx, ny = x.size, y.size
    best = 0.0
    for thr in t:
        ax, ay = int(np.count_nonzero(x > thr)), int(np.count_nonzero(y > thr))
        for kp, np_, kq, nq in (
            (ax, nx, ay, ny),
            (ay, ny, ax, nx),
            (nx - ax, nx, ny - ay, ny),
            (ny - ay, ny, nx - ax, nx),
        ):
            best = max(best, epsilon_lower_bound(kp, np_, kq, nq, delta=d, confidence=each))
    return best


@dataclass(frozen=True)
class Draw:
    """One call a mechanism made to a :class:`RecordingGenerator`.

    Attributes
    ----------
    method : str
        The :class:`numpy.random.Generator` method, e.g. ``"laplace"``.
    args : tuple
        Its positional arguments.
    kwargs : dict
        Its keyword arguments.
    replayed : bool
        True if the value returned was a prescribed one, not a random draw.
    """

    method: str
    args: tuple
    kwargs: dict = field(default_factory=dict)
    replayed: bool = False


#: The Generator methods a RecordingGenerator records (and can replay).
RECORDED_METHODS = (
    "random",
    "integers",
    "choice",
    "laplace",
    "normal",
    "standard_normal",
    "exponential",
    "binomial",
    "poisson",
    "multinomial",
    "geometric",
)


class RecordingGenerator(np.random.Generator):
    r"""A :class:`numpy.random.Generator` that records the draws asked of it and can replay prescribed ones.

    Every call to one of :data:`RECORDED_METHODS` is appended to ``calls`` as a
    :class:`Draw` (method name and arguments), so an audit reads the noise law a
    mechanism actually uses: the scale of its Laplace draw, the probabilities it hands to
    ``choice``. With ``replay={"laplace": [0.0, 1.5]}`` the first two ``laplace`` calls
    return 0.0 and 1.5 (shaped like the request) instead of random values; an audit
    uses this to evaluate a mechanism at chosen noise values. Everything else behaves
    as ``numpy.random.default_rng`` with the same ``seed``.

    Parameters
    ----------
    seed : int
        Seed of the underlying PCG64 bit generator (>= 0).
    replay : dict of str to sequence, optional
        Values to return, per method, in order; once a method's values are used up its
        calls draw at random again.

    Examples
    --------
    >>> g = RecordingGenerator(0, replay={"laplace": [0.25]})
    >>> float(g.laplace(0.0, 2.0)), g.calls[0].method, g.calls[0].args
    (0.25, 'laplace', (0.0, 2.0))
    >>> bool(g.laplace(0.0, 2.0) != 0.25), len(g.calls)
    (True, 2)
    """

    calls: list[Draw]

    def __init__(self, seed: int = 0, *, replay: dict[str, Sequence[Any]] | None = None) -> None:
        s = check_int("seed", seed, low=0)
        super().__init__(np.random.PCG64(s))
        self.calls = []
        self._replay: dict[str, list[Any]] = {}
        for name, values in (replay or {}).items():
            if name not in RECORDED_METHODS:
                raise ValueError(f"replay keys must be among {RECORDED_METHODS}; got {name!r}")
            self._replay[name] = list(values)

    def draws(self, method: str) -> list[Draw]:
        """The recorded calls of one method, in order.

        Examples
        --------
        >>> g = RecordingGenerator(1)
        >>> _ = g.normal(0.0, 3.0, size=2)
        >>> [d.args for d in g.draws("normal")]
        [(0.0, 3.0)]
        """
        if method not in RECORDED_METHODS:
            raise ValueError(f"method must be one of {RECORDED_METHODS}; got {method!r}")
        return [d for d in self.calls if d.method == method]


def _recording(name: str) -> Callable[..., Any]:
    parent = getattr(np.random.Generator, name)

    def method(self: RecordingGenerator, *args: Any, **kwargs: Any) -> Any:
        queue = self._replay.get(name)
        if queue:
            value = queue.pop(0)
            self.calls.append(Draw(name, args, dict(kwargs), replayed=True))
            size = kwargs.get("size")
            return np.broadcast_to(np.asarray(value), size).copy() if size is not None else value
        self.calls.append(Draw(name, args, dict(kwargs)))
        return parent(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"Record the call, then ``numpy.random.Generator.{name}`` (or the next replayed value)."
    return method


for _name in RECORDED_METHODS:
    setattr(RecordingGenerator, _name, _recording(_name))
del _name
