r"""Sample-and-threshold histograms: privacy from Poisson sampling and suppression.

Bharadwaj & Cormode 2022 (Bharadwaj & Cormode, "Sample and Threshold Differential Privacy: Histograms
and applications") studies the following mechanism. Each of ``n`` clients holds one
item (a bucket in :math:`[B]`). Every client joins the sample independently with
probability :math:`p_s` (*Poisson* or *Bernoulli* sampling); the aggregator counts the
sampled items and publishes every bucket whose sampled count :math:`X` is at least the
threshold :math:`\tau`; buckets with :math:`X < \tau` are suppressed (the analyst sees
them as 0). No noise is added: all randomness comes from the sampling.

Neighbouring relation
---------------------
The privacy functions of this module (:func:`delta_exact`, :func:`delta_theorem`,
:func:`delta_simple`) use **add/remove one client** (one copy of one item more or
less). Under Poisson sampling the buckets are independent, so only the bucket of the
changed item differs and the whole histogram's δ equals that bucket's δ.
Replacing one client's item moves *two* buckets; :func:`delta_exact_replace`
computes that case exactly on a grid of counts.

Contents
--------
* the mechanism: :func:`sample_and_threshold` (from client items),
  :func:`sample_and_threshold_counts` (from the true histogram; same law),
  :func:`fixed_size_sample_and_threshold` (the leaky fixed-size variant),
  :func:`contact_size`, :func:`two_stage_sample`, :func:`poisson_overflow_bound`;
* privacy: :func:`c_alpha`, :func:`delta_simple` (Lemma 3.2), :func:`delta_theorem`
  (Theorem 1), :func:`delta_exact`, :func:`delta_exact_profile`,
  :func:`delta_exact_replace`, :func:`ratio_bound` (Lemma 3.1),
  :func:`sampling_rate_for`, :func:`epsilon_for`, :func:`choose_parameters`;
* accuracy: :func:`omission_bound`, :func:`omission_probability`,
  :func:`relative_error_bound`, :func:`relative_error_probability`;
* baselines at the same privacy level on the sampled clients:
  :func:`laplace_histogram` (central), :func:`bernoulli_shuffle_histogram`
  (shuffle model, Balcer & Cheu 2020), :func:`hadamard_response` and
  :func:`hadamard_response_estimate` (local model, Acharya et al. 2019) (the chapter's exercise checker is
  :func:`fedfreq.exercises.check_omission_estimate`).

Lemma numbering: the paper's lemmas are unnumbered in the text; this module calls them,
in order of appearance, Lemma 3.1 (likelihood ratio), Lemma 3.2 (δ = exp(−C_α τ)),
Lemma 3.3 (m + O(√m) contacts), Lemma 3.4 (omission), Lemma 3.5 (relative error).

Caveat: numpy's floating-point samplers illustrate the mechanisms; they are not safe
implementations of them.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import math

import numpy as np
from scipy import special, stats

from ._numerics import fwht, log1mexp
from ._rng import as_generator
from ._validation import EPSILON_MIN, INT_MAX, check_array, check_choice, check_int, check_real
from .baselines import laplace_mechanism
from .trust_models import binomial_noise_probability

__all__ = [
    "sample_and_threshold",
    "sample_and_threshold_counts",
    "fixed_size_sample_and_threshold",
    "contact_size",
    "two_stage_sample",
    "poisson_overflow_bound",
    "ratio_bound",
    "c_alpha",
    "delta_simple",
    "delta_theorem",
    "kl_bernoulli",
    "delta_exact",
    "delta_exact_profile",
    "delta_exact_replace",
    "sampling_rate_for",
    "epsilon_for",
    "choose_parameters",
    "omission_bound",
    "omission_probability",
    "relative_error_bound",
    "relative_error_probability",
    "laplace_histogram",
    "bernoulli_shuffle_histogram",
    "hadamard_response",
    "hadamard_response_estimate",
    "paper_synthetic_counts",
    "compare_mechanisms",
    "top_k_recall",
    "hashed_word_counts",
]


# ---------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------


def _rate(value, name: str = "sampling_rate") -> float:
    return check_real(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


_DENSE = "a dense histogram of n_buckets counts must fit in memory"


def _eps(value) -> float:
    return check_real("epsilon", value, low=0.0, low_open=True)


def _eps_exp(value) -> float:
    """epsilon for the local baselines, which evaluate exp(epsilon) in floating point."""
    return check_real(
        "epsilon",
        value,
        low=EPSILON_MIN,
        high=700.0,
        reason="exp(epsilon) must be finite",
        low_reason="below it exp(epsilon) - 1 loses its precision",
    )


def _tau(value) -> int:
    return check_int("tau", value, low=1, high=10**6, reason="the exact computations sum over counts up to tau")


def _alpha(value) -> float:
    return check_real("alpha", value, low=0.0, high=1.0, low_open=True)


def _items(items, n_buckets: int) -> np.ndarray:
    x = check_array("items", items, ndim=1, integer=True, low=0)
    if x.size and x.max() >= n_buckets:
        raise ValueError(f"items must lie in [0, n_buckets - 1] = [0, {n_buckets - 1}]; got max {x.max()}")
    return x


def sample_and_threshold(items, *, n_buckets: int, sampling_rate: float, tau: int, rng=None) -> np.ndarray:
    r"""Run sample-and-threshold on client items (Bharadwaj & Cormode 2022, Section 3.1).

    Each client is kept independently with probability :math:`p_s`; the kept items are
    counted per bucket; buckets with count :math:`< \tau` are suppressed (reported 0).

    Parameters
    ----------
    items : array_like of int
        One bucket index in ``[0, n_buckets)`` per client (length ``n``).
    n_buckets : int
        Number of buckets :math:`B \ge 1`.
    sampling_rate : float
        :math:`p_s \in (0, 1)`.
    tau : int
        Threshold :math:`\tau \ge 1`; counts equal to τ are published.
    rng : Generator, int or None
        Source of randomness.

    Returns
    -------
    ndarray of int64, shape (n_buckets,)
        Published sampled counts (0 for suppressed buckets).

    Examples
    --------
    >>> h = sample_and_threshold([0] * 100 + [1] * 3, n_buckets=2, sampling_rate=0.5, tau=5, rng=0)
    >>> int(h[1])
    0
    """
    B = check_int("n_buckets", n_buckets, low=1, high=10**8, reason=_DENSE)
    x = _items(items, B)
    p = _rate(sampling_rate)
    t = _tau(tau)
    gen = as_generator(rng)
    keep = gen.random(x.size) < p
    counts = np.bincount(x[keep], minlength=B).astype(np.int64)
    counts[counts < t] = 0
    return counts


def sample_and_threshold_counts(counts, *, sampling_rate: float, tau: int, rng=None) -> np.ndarray:
    r"""Sample-and-threshold from the true histogram: :math:`X_b \sim \mathrm{Bin}(h_b, p_s)`.

    Poisson sampling of clients makes the sampled count of bucket b exactly
    :math:`\mathrm{Bin}(h_b, p_s)`, independently across buckets, so this function has
    the same output law as :func:`sample_and_threshold` at O(B) cost (useful for
    n = 10^6 clients and many repetitions).

    Parameters
    ----------
    counts : array_like of int
        True histogram :math:`h` (non-negative integers, any shape).
    sampling_rate, tau, rng
        As in :func:`sample_and_threshold`.

    Returns
    -------
    ndarray of int64
        Published counts, shape of ``counts``.

    Examples
    --------
    >>> sample_and_threshold_counts([1000, 2], sampling_rate=0.1, tau=20, rng=1)[1]
    np.int64(0)
    """
    h = check_array("counts", counts, integer=True, low=0)
    p = _rate(sampling_rate)
    t = _tau(tau)
    gen = as_generator(rng)
    x = np.asarray(gen.binomial(h, p), dtype=np.int64)
    x[x < t] = 0
    return x


def fixed_size_sample_and_threshold(items, *, n_buckets: int, m: int, tau: int, rng=None) -> np.ndarray:
    r"""The fixed-size variant (Bharadwaj & Cormode 2022, Section 3.2): exactly ``m`` clients without replacement.

    Shown only to exhibit its leak: the published total tells how many sampled items
    were suppressed, so a unique item among otherwise identical ones is detected with
    probability m/n, forcing :math:`\delta \ge m/n`.

    Examples
    --------
    >>> fixed_size_sample_and_threshold([0, 0, 0, 1], n_buckets=2, m=2, tau=1, rng=0).sum()
    np.int64(2)
    """
    B = check_int("n_buckets", n_buckets, low=1, high=10**8, reason=_DENSE)
    x = _items(items, B)
    if x.size == 0:
        raise ValueError("items must contain at least one item")
    mm = check_int("m", m, low=0, high=x.size)
    t = _tau(tau)
    gen = as_generator(rng)
    chosen = gen.choice(x.size, size=mm, replace=False)
    counts = np.bincount(x[chosen], minlength=B).astype(np.int64)
    counts[counts < t] = 0
    return counts


def contact_size(m: float, c: float) -> int:
    r"""Number of clients to contact, :math:`s = \lceil m + c\sqrt m\rceil` (Bharadwaj & Cormode 2022, Lemma 3.3).

    Examples
    --------
    >>> contact_size(10_000, 10)
    11000
    """
    mm = check_real("m", m, low=0.0, low_open=True)
    cc = check_real("c", c, low=0.0)
    size = mm + cc * math.sqrt(mm) - 1e-9
    if not size < INT_MAX:  # also catches the overflow of c * sqrt(m) to inf
        raise ValueError(f"m + c * sqrt(m) must be below 2**63 (a sample size); got m={mm!r} and c={cc!r}")
    return int(math.ceil(size))


def poisson_overflow_bound(c: float) -> float:
    r"""Chernoff bound :math:`\Pr[N > m + c\sqrt m] \le e^{-c^2/3}` (Bharadwaj & Cormode 2022, Lemma 3.3).

    Valid for :math:`N` a sum of independent Bernoulli variables with mean m and
    :math:`c \le \sqrt m`.

    Examples
    --------
    >>> poisson_overflow_bound(10.0) < 1e-14
    True
    """
    cc = check_real("c", c, low=0.0)
    return math.exp(-cc * cc / 3.0)


def two_stage_sample(n: int, m: float, c: float, *, scheme: str = "paper", rng=None) -> np.ndarray:
    r"""Indices of the participating clients under a two-stage contact scheme.

    ``s = contact_size(m, c)`` clients are contacted uniformly at random.

    * ``scheme="paper"`` (Bharadwaj & Cormode 2022, proof of Lemma 3.3): each contacted client joins
      independently with probability m/s. Every client is included with probability
      m/n, but the sample size is :math:`\mathrm{Bin}(s, m/s)`, not the Poisson
      :math:`\mathrm{Bin}(n, m/n)`: it is a different sampling scheme.
    * ``scheme="poisson"``: draw :math:`N \sim \mathrm{Bin}(n, m/n)`; if N ≤ s, a
      uniformly random N of the contacted clients join (this is exactly Poisson
      sampling conditioned on N ≤ s); if N > s the round fails with ValueError
      (probability at most :func:`poisson_overflow_bound`).

    Returns
    -------
    ndarray of int64
        Sorted indices in ``[0, n)`` of the participating clients.

    Examples
    --------
    >>> two_stage_sample(1000, 50, 3, rng=0).size <= contact_size(50, 3)
    True
    """
    nn = check_int("n", n, low=1)
    mm = check_real("m", m, low=0.0, high=nn, low_open=True)
    s = contact_size(mm, c)
    if s == 0:
        raise ValueError(f"the contact size m + c*sqrt(m) must be at least 1; got m={mm!r} and c={c!r}")
    if s > nn:
        raise ValueError(f"contact size m + c*sqrt(m) = {s} must not exceed n = {nn}")
    check_choice("scheme", scheme, {"paper", "poisson"})
    gen = as_generator(rng)
    contacted = gen.choice(nn, size=s, replace=False)
    if scheme == "paper":
        joined = contacted[gen.random(s) < mm / s]
    else:
        N = int(gen.binomial(nn, mm / nn))
        if N > s:
            raise ValueError(f"the Poisson sample size N = {N} exceeds the contact size s = {s}; the round fails")
        joined = contacted[:N]
    return np.sort(joined).astype(np.int64)


# ---------------------------------------------------------------------------
# privacy
# ---------------------------------------------------------------------------


def ratio_bound(sampling_rate: float, k, v):
    r"""Likelihood ratio of seeing count v from k versus k − 1 copies (Bharadwaj & Cormode 2022, Lemma 3.1).

    .. math:: \frac{\binom{k}{v}p_s^v(1-p_s)^{k-v}}{\binom{k-1}{v}p_s^v(1-p_s)^{k-1-v}}
        = \frac{(1-p_s)\,k}{k-v},\qquad 0 \le v < k.

    Examples
    --------
    >>> ratio_bound(0.1, 20, 0)
    0.9
    """
    p = _rate(sampling_rate)
    kk = check_array("k", k, integer=True, low=1)
    vv = check_array("v", v, integer=True, low=0)
    kk, vv = np.broadcast_arrays(kk, vv)
    if np.any(vv >= kk):
        raise ValueError("v must be smaller than k (for v = k the ratio is infinite)")
    out = (1.0 - p) * kk / (kk - vv)
    return float(out) if out.ndim == 0 else out


def c_alpha(alpha):
    r""":math:`C_\alpha = \ln(1/\alpha) - 1/(1+\alpha)` (Bharadwaj & Cormode 2022, Lemma 3.2).

    Positive only for :math:`\alpha < \alpha^\star \approx 0.517`, the root of
    :math:`\ln(1/\alpha) = 1/(1+\alpha)`; for larger α the lemma's δ is at least 1.

    Examples
    --------
    >>> round(c_alpha(1 / 6), 4)
    0.9346
    """
    if np.ndim(alpha) == 0:
        a = _alpha(alpha)
        return math.log(1.0 / a) - 1.0 / (1.0 + a)
    a = check_array("alpha", alpha, low=0.0, high=1.0, low_open=True)
    return np.log(1.0 / a) - 1.0 / (1.0 + a)


def delta_simple(alpha, tau):
    r"""Bharadwaj & Cormode 2022, Lemma 3.2: :math:`\delta = \exp(-C_\alpha\tau)`.

    The lemma holds for the sampling rate :math:`p_s = \alpha(1 - e^{-\varepsilon})`,
    :math:`0 < \alpha \le 1`. When :math:`C_\alpha \le 0` the value is at least 1
    (the lemma says nothing); it is returned unchanged, not clipped.

    Parameters
    ----------
    alpha : float or array_like
        :math:`\alpha \in (0, 1]`.
    tau : int or array_like of int
        Threshold :math:`\tau \ge 1` (broadcast against ``alpha``).

    Examples
    --------
    >>> delta_simple(1 / 6, 20) < 1e-8
    True
    """
    if np.ndim(alpha) == 0 and np.ndim(tau) == 0:
        return math.exp(-c_alpha(alpha) * _tau(tau))
    a = check_array("alpha", alpha, low=0.0, high=1.0, low_open=True)
    t = check_array("tau", tau, integer=True, low=1)
    return np.exp(-c_alpha(a) * t)


def kl_bernoulli(q, p):
    r"""Kullback–Leibler divergence :math:`D(q\,\|\,p)` of Bernoulli(q) from Bernoulli(p), in nats.

    :math:`D(q\,\|\,p) = q\log\frac qp + (1-q)\log\frac{1-q}{1-p}`, with
    :math:`0\log 0 = 0`. It is the exponent of the Chernoff bound
    :math:`\Pr[\mathrm{Bin}(k, p) \ge kq] \le e^{-k D(q\|p)}` for :math:`q \ge p`,
    which is how it enters Theorem 1 of Bharadwaj & Cormode 2022 (:func:`delta_theorem`).

    Parameters
    ----------
    q : float or array_like
        :math:`q \in [0, 1]`.
    p : float or array_like
        :math:`p \in (0, 1)`; broadcast against ``q``.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> round(kl_bernoulli(0.5, 0.25), 6)
    0.143841
    >>> kl_bernoulli(0.3, 0.3)
    0.0
    >>> kl_bernoulli(0.5, 1.0)
    Traceback (most recent call last):
    ...
    ValueError: p entries must lie in (0, 1); got max np.float64(1.0)
    """
    scalar = np.ndim(q) == 0 and np.ndim(p) == 0
    qq = check_array("q", q, low=0.0, high=1.0)
    pp = check_array("p", p, low=0.0, high=1.0, low_open=True, high_open=True)
    out = special.xlogy(qq, qq / pp) + special.xlogy(1.0 - qq, (1.0 - qq) / (1.0 - pp))
    return float(out) if scalar else out


def delta_theorem(sampling_rate, epsilon, tau):
    r"""Bharadwaj & Cormode 2022, Theorem 1: :math:`\delta = \exp(-\frac{\tau}{q} D(q\,\|\,p_s))`.

    With :math:`q = 1 - e^{-\varepsilon}(1-p_s)` and :math:`D` the Bernoulli KL
    divergence. The theorem needs :math:`e^{-\varepsilon} \le 1 - p_s`, i.e.
    :math:`p_s \le 1 - e^{-\varepsilon}`; outside that range it gives no bound and a
    ValueError is raised. (The paper prints "δ ≤ exp(...)"; the mechanism is
    (ε, δ)-DP for every δ *at least* this value.)

    Parameters
    ----------
    sampling_rate : float or array_like
        :math:`p_s \in (0, 1)`.
    epsilon : float or array_like
        ε > 0.
    tau : int or array_like of int
        τ ≥ 1. All three broadcast together.

    Examples
    --------
    >>> 1e-13 < delta_theorem(0.1, 1.0, 20) < 1e-12
    True
    """
    scalar = all(np.ndim(x) == 0 for x in (sampling_rate, epsilon, tau))
    if scalar:
        p, e, t = np.float64(_rate(sampling_rate)), np.float64(_eps(epsilon)), np.float64(_tau(tau))
    else:
        p = check_array("sampling_rate", sampling_rate, low=0.0, high=1.0, low_open=True, high_open=True)
        e = check_array("epsilon", epsilon, low=0.0, low_open=True)
        t = check_array("tau", tau, integer=True, low=1).astype(float)
        p, e, t = np.broadcast_arrays(p, e, t)
    if np.any(p > -np.expm1(-e) * (1 + 1e-12)):
        raise ValueError("sampling_rate must be at most 1 - exp(-epsilon) for Theorem 1 to apply")
    # q = 1 - e^-eps (1 - p) without cancellation (1 - e^-eps rounds to 0 for eps < 1e-16);
    # D(q || p) = q log(q/p) + (1-q) log((1-q)/(1-p)) with (1-q)/(1-p) = e^-eps exactly
    q = -np.expm1(-e) + np.exp(-e) * p
    kl = q * np.log(q / p) - e * np.exp(-e) * (1.0 - p)
    out = np.exp(-t / q * kl)
    return float(out) if scalar else out


def _row_log_pmf(k: np.ndarray, v: np.ndarray, p: float) -> np.ndarray:
    """log Bin(k, p) pmf at v (broadcast), -inf outside 0..k (gammaln form)."""
    k = np.asarray(k, dtype=float)
    v = np.asarray(v, dtype=float)
    inside = (v >= 0) & (v <= k)
    vv = np.where(inside, v, 0.0)
    kk = np.broadcast_to(k, inside.shape)
    out = (
        special.gammaln(kk + 1.0)
        - special.gammaln(vv + 1.0)
        - special.gammaln(kk - vv + 1.0)
        + vv * math.log(p)
        + (kk - vv) * math.log1p(-p)
    )
    return np.where(inside, out, -np.inf)


def _log_suppressed(k: np.ndarray, p: float, tau: int) -> np.ndarray:
    """log Pr[Bin(k, p) <= tau - 1] for each k (exact, via logsumexp of the pmf)."""
    v = np.arange(tau)[None, :]
    return special.logsumexp(_row_log_pmf(k[:, None], v, p), axis=1)


def _log_delta_rows(p: float, eps: float, tau: int, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log δ(k) in both directions: (D has k copies vs k-1) and (k-1 vs k).

    For tau <= v <= k - 1 the log ratio log P_{k-1}(v)/P_k(v) = log((k-v)/((1-p)k))
    is taken from Lemma 3.1 in closed form (no cancellation); v = k has P_{k-1}(k) = 0;
    the suppressed outcome uses the two exact lower tails.
    """
    k = k.astype(np.int64)
    kmax = int(k.max())
    v = np.arange(tau, kmax + 1)[None, :]
    kk = k[:, None]
    lp_k = _row_log_pmf(kk, v, p)  # log P_k(v), v >= tau
    below = v < kk  # v <= k - 1: both laws positive
    with np.errstate(invalid="ignore", divide="ignore"):
        lr = np.where(below, np.log(np.maximum(kk - v, 1)) - np.log((1.0 - p) * kk), 0.0)  # log P_{k-1}/P_k
    lp_km1 = np.where(below, lp_k + lr, -np.inf)
    l0_k = _log_suppressed(k, p, tau)
    l0_km1 = _log_suppressed(k - 1, p, tau)
    # direction 1: P = P_k, Q = P_{k-1}; positive terms where eps + log Q/P < 0
    z1 = np.where(below, eps + lr, -np.inf)  # v = k: Q = 0, the whole P_k(k) counts
    valid1 = np.isfinite(lp_k) & (z1 < 0)
    t1 = np.where(valid1, lp_k + log1mexp(np.where(valid1 & np.isfinite(z1), z1, -1.0)), -np.inf)
    t1 = np.where(valid1 & ~np.isfinite(z1), lp_k, t1)
    z10 = eps + l0_km1 - l0_k
    t10 = np.where(z10 < 0, l0_k + log1mexp(np.minimum(z10, -1e-300)), -np.inf)
    d1 = np.logaddexp(special.logsumexp(t1, axis=1), t10)
    # direction 2: P = P_{k-1}, Q = P_k (Q > 0 wherever P > 0)
    z2 = eps - lr
    valid2 = below & (z2 < 0)
    t2 = np.where(valid2, lp_km1 + log1mexp(np.where(valid2, z2, -1.0)), -np.inf)
    z20 = eps + l0_k - l0_km1
    t20 = np.where(z20 < 0, l0_km1 + log1mexp(np.minimum(z20, -1e-300)), -np.inf)
    d2 = np.logaddexp(special.logsumexp(t2, axis=1), t20)
    return d1, d2


_LOG_NEGLIGIBLE = -60.0 * math.log(2.0)  # a certified remainder below 2^-60 of the sum is dropped


def _log_pmf_prefix(k: int, p: float, v_hi: int) -> np.ndarray:
    """log Pr[Bin(k, p) = v] for v = 0, ..., v_hi (v_hi <= k).

    Cumulates the exact log ratios log[(k - v + 1) p / (v (1 - p))] from
    log Pr[Bin(k, p) = 0] = k log(1 - p); accurate even for k ~ 1e12, where differences
    of gammaln values would lose digits.
    """
    v = np.arange(1, v_hi + 1, dtype=float)
    steps = np.log(float(k) - v + 1.0) - np.log(v) + (math.log(p) - math.log1p(-p))
    out = np.empty(v_hi + 1)
    out[0] = k * math.log1p(-p)
    out[1:] = out[0] + np.cumsum(steps)
    return out


def _log_add_at(p: float, eps: float, tau: int, k: int) -> float:
    r"""log H_ε(V_k ‖ V_{k-1}) for one count k ≥ τ.

    The optimal event is {X_k ≥ m}, m = max(τ, ⌊kq⌋ + 1), and each of its outcomes
    contributes P_k(v) - e^ε P_{k-1}(v) = e^ε P_k(v) (v/k - q)/(1 - p_s) ≥ 0. The terms are
    log-concave in v (their ratio [(k-v)p_s/((v+1)(1-p_s))]·[(v+1-kq)/(v-kq)] decreases),
    so the sum stops at the first window whose geometric remainder bound is below 2^-60
    of the partial sum.
    """
    # Each term is P_k(v) f(v) with f(v) = 1 - (k - v)/s, s = k e^{-eps}(1 - p_s) = k(1 - q),
    # positive exactly for v > kq. Small q: use v - kq (kq is about tau, no cancellation);
    # q > 1/2: use s directly (k(1 - q) would lose every digit once e^{-eps} < 1e-16).
    q = p + (1.0 - p) * -math.expm1(-eps)
    log_s = math.log(k) - eps + math.log1p(-p)
    if q <= 0.5:
        kq = k * q
        m = max(tau, math.floor(kq) + 1)
    else:
        s = math.exp(log_s)
        m = max(tau, k - max(math.ceil(s), 1) + 1)  # v = k always counts: P_{k-1}(k) = 0
    width = 64 + 8 * math.isqrt(m)
    while True:
        hi = min(k, m + width)
        v = np.arange(m, hi + 1, dtype=float)
        if q <= 0.5:
            gap = v - kq
            log_f = np.log(gap) - log_s
        else:
            gap = s - (float(k) - v)
            log_f = np.log1p(-(float(k) - v) / s) if s > 0 else np.zeros(v.size)  # s = 0 only if v = k alone
        terms = _log_pmf_prefix(k, p, hi)[m:] + log_f
        total = float(special.logsumexp(terms))
        if hi == k:
            return total
        rho = (k - hi) * p / ((hi + 1.0) * (1.0 - p)) * (gap[-1] + 1.0) / gap[-1]
        if rho < 1.0 and terms[-1] + math.log(rho) - math.log1p(-rho) <= total + _LOG_NEGLIGIBLE:
            return total
        width *= 2


def _log_remove_at(p: float, eps: float, tau: int, k: int) -> float:
    r"""log H_ε(V_{k-1} ‖ V_k) for one count k ≥ τ (−inf when it is 0).

    The optimal event is empty or {X ≤ M} (the suppressed output together with the
    published values below ak), M = max(τ - 1, ⌈ak⌉ - 1), a = 1 - e^ε(1 - p_s); each
    outcome contributes P_{k-1}(v) - e^ε P_k(v) = P_k(v)(a - v/k)/(1 - p_s). Terms of both
    signs occur only when M = τ - 1 ≥ ak; positive and negative parts are summed
    separately in log space.
    """
    if eps >= -math.log1p(-p):  # a <= 0 (also avoids overflow of e^eps)
        return -math.inf
    a = -math.expm1(eps) * (1.0 - p) + p
    if a <= 0.0:
        return -math.inf
    M = min(k, max(tau - 1, math.ceil(a * k) - 1))
    v = np.arange(M + 1, dtype=float)
    w = a - v / float(k)
    base = _log_pmf_prefix(k, p, M) - math.log1p(-p)
    with np.errstate(divide="ignore"):
        lw = np.log(np.abs(w))
    lpos = float(special.logsumexp(np.where(w > 0, base + lw, -np.inf)))
    lneg = float(special.logsumexp(np.where(w < 0, base + lw, -np.inf)))
    if not lpos > lneg:
        return -math.inf
    return lpos + float(log1mexp(np.array(lneg - lpos))) if lneg > -np.inf else lpos


def _peak_count(tau: int, rate: float) -> int:
    """max(τ, ⌈(τ - 1)/rate⌉): the count at which one direction of δ(k) peaks."""
    x = (tau - 1) / rate
    if not x < 1e300:
        raise ValueError("delta_exact: sampling_rate or epsilon too close to 0 (worst count k beyond 1e300)")
    return max(tau, math.ceil(x))


def _delta_exact_log(p: float, eps: float, tau: int) -> tuple[float, int]:
    """(log δ_exact, the smallest k attaining it), from the unimodality of δ(k)."""
    q = p + (1.0 - p) * -math.expm1(-eps)
    a = -math.expm1(eps) * (1.0 - p) + p if eps < -math.log1p(-p) else 0.0
    cands = []
    k1 = _peak_count(tau, q)
    cands += [(k, _log_add_at(p, eps, tau, k)) for k in (k1 - 1, k1, k1 + 1) if k >= tau]
    if a > 0.0:
        k2 = _peak_count(tau, a)
        cands += [(k, _log_remove_at(p, eps, tau, k)) for k in (k2 - 1, k2, k2 + 1) if k >= tau]
    best, arg = -math.inf, tau
    for k, val in sorted(cands):
        if val > best:
            best, arg = val, k
    return best, arg


def delta_exact(sampling_rate: float, epsilon: float, tau: int) -> float:
    r"""Exact smallest δ of one histogram cell under add/remove of one copy of its item.

    With :math:`X_k \sim \mathrm{Bin}(k, p_s)` and the published value
    :math:`V_k = X_k\,\mathbb 1[X_k \ge \tau]` (0 meaning suppressed),

    .. math:: \delta(\varepsilon) = \sup_{k \ge 1}\ \max\bigl\{
        \delta_+(k),\ \delta_-(k)\bigr\},\\
        \delta_+(k) = H_\varepsilon(V_k\,\|\,V_{k-1}),\quad
        \delta_-(k) = H_\varepsilon(V_{k-1}\,\|\,V_k),

    where :math:`H_\varepsilon(P\|Q) = \sum_y [P(y) - e^\varepsilon Q(y)]_+`. Under
    Poisson sampling the other cells have the same law on both datasets and are
    independent of this one, so this is the exact δ of the whole histogram under
    add/remove of one client.

    **No enumeration of k is needed.** With :math:`q = 1 - e^{-\varepsilon}(1-p_s)` and
    :math:`a = 1 - e^{\varepsilon}(1-p_s)`, both directions are unimodal in k:
    :math:`\delta_+` is non-decreasing for :math:`\tau \le k \le k_+ = \max(\tau,
    \lceil(\tau-1)/q\rceil)` and non-increasing after; :math:`\delta_- \equiv 0` if
    :math:`a \le 0` (Theorem 1's regime), otherwise it is non-decreasing up to
    :math:`k_- = \max(\tau, \lceil(\tau-1)/a\rceil)` and non-increasing after. (For
    :math:`k < \tau` both outputs are 0.) Hence
    :math:`\delta(\varepsilon) = \max\{\delta_+(k_+), \delta_-(k_-)\}`; the code also
    evaluates :math:`k_\pm \pm 1` to be safe against rounding of the ceiling.

    *Proof.* The likelihood ratio :math:`P_k(v)/P_{k-1}(v) = (1-p_s)k/(k-v)` (Lemma 3.1)
    increases in v, and the suppressed output's ratio is an average of the ratios at
    :math:`v < \tau`, so the optimal events are upper sets :math:`\{X \ge m\}` with
    :math:`m \ge \tau` (for :math:`\delta_+`; the suppressed output has ratio ≤ 1) and
    lower sets :math:`\{X \le M\}`, :math:`M \ge \tau - 1` (for :math:`\delta_-`).
    (i) While :math:`kq < \tau - 1` the best upper set is :math:`\{X \ge \tau\}`, and
    :math:`y(k) = \Pr[X_k \ge \tau] - e^\varepsilon\Pr[X_{k-1} \ge \tau]` has increment
    :math:`y(k+1) - y(k) = p_s P_k(\tau-1)[1 - e^\varepsilon(k-\tau+1)/((1-p_s)k)]`,
    which is ≥ 0 iff :math:`kq \le \tau - 1`. Likewise
    :math:`z(k) = \Pr[X_{k-1} < \tau] - e^\varepsilon \Pr[X_k < \tau]` has increment
    :math:`p_s P_k(\tau-1)[e^\varepsilon - (k-\tau+1)/((1-p_s)k)]`, ≥ 0 iff
    :math:`ak \le \tau - 1`. (ii) Once :math:`kq \ge \tau - 1` (resp. :math:`ak \ge
    \tau - 1`) the optimal event for the *unthresholded* pair
    :math:`\mathrm{Bin}(k, p_s)`, :math:`\mathrm{Bin}(k-1, p_s)` is :math:`\{X > kq\}`
    (resp. :math:`\{X < ak\}`, up to a zero term), which the thresholded output still
    determines; by post-processing the thresholded divergence equals the unthresholded
    one, :math:`\frac{e^\varepsilon}{1-p_s}E[(\bar X_k - q)_+]` (resp.
    :math:`\frac{1}{1-p_s}E[(a - \bar X_k)_+]`), with :math:`\bar X_k = X_k/k`. These
    are non-increasing in k: :math:`\bar X_{k+1}` is the average of the k + 1
    leave-one-out means, each distributed as :math:`\bar X_k`, so
    :math:`E\varphi(\bar X_{k+1}) \le E\varphi(\bar X_k)` for convex φ (Jensen). If
    :math:`a \le 0`, the unthresholded :math:`\delta_-` is already 0. ∎

    Each of the (at most six) evaluations is a sum of non-negative log-space terms
    (signed only at :math:`k_- - 1`); the upper tail of :math:`\delta_+` is truncated only
    where a geometric bound certifies the rest is below :math:`2^{-60}` of the sum. The
    cost does not grow with k, so p_s and ε may be tiny (k in the billions).
    ``tests/test_sample_threshold.py`` checks the result against the former enumeration
    over k and against a brute-force hockey-stick divergence.

    Parameters
    ----------
    sampling_rate : float
        :math:`p_s \in (0, 1)` (any value; Theorem 1's condition is not needed).
    epsilon : float
        ε > 0.
    tau : int
        τ ≥ 1.

    Returns
    -------
    float
        δ in (0, 1] (may underflow to 0.0 below about 1e-308).

    Examples
    --------
    >>> d = delta_exact(0.1, 1.0, 20)
    >>> d < delta_theorem(0.1, 1.0, 20)
    True
    >>> round(delta_exact(0.3, 0.5, 1), 12)  # tau = 1: the worst count is k = 1, delta = p_s
    0.3
    """
    p = _rate(sampling_rate)
    e = _eps(epsilon)
    t = _tau(tau)
    return math.exp(_delta_exact_log(p, e, t)[0])


def delta_exact_profile(sampling_rate: float, epsilon: float, tau: int, k) -> dict:
    r"""δ(k) of :func:`delta_exact` for given item counts k, both directions separately.

    Returns
    -------
    dict
        ``"add"``: :math:`H_\varepsilon(V_k\|V_{k-1})` (the dataset with k copies first),
        ``"remove"``: :math:`H_\varepsilon(V_{k-1}\|V_k)`; arrays matching ``k``; plus
        ``"argmax"``, the k attaining :func:`delta_exact`.

    Examples
    --------
    >>> prof = delta_exact_profile(0.1, 1.0, 5, [5, 10])
    >>> prof["add"].shape
    (2,)
    """
    p = _rate(sampling_rate)
    e = _eps(epsilon)
    t = _tau(tau)
    kk = check_array("k", k, ndim=1, integer=True, low=1, min_size=1)
    d1 = np.zeros(kk.size)
    d2 = np.zeros(kk.size)
    big = kk >= t
    if np.any(big):
        l1, l2 = _log_delta_rows(p, e, t, kk[big])
        d1[big], d2[big] = np.exp(l1), np.exp(l2)
    return {"add": d1, "remove": d2, "argmax": _delta_exact_log(p, e, t)[1]}


def delta_exact_replace(sampling_rate: float, epsilon: float, tau: int, k_max: int) -> float:
    r"""Exact δ when one client's item is *replaced*: two cells move, maximised over counts.

    Cell a goes from k to k − 1 copies, cell b from j to j + 1. The cells are
    independent, so the output pair has law :math:`V_k \otimes V_j` versus
    :math:`V_{k-1} \otimes V_{j+1}`. Returns the largest hockey-stick divergence (both
    directions) over :math:`1 \le k \le` ``k_max`` and :math:`0 \le j <` ``k_max``.
    This is a lower bound on the replace-one δ (exact when the worst counts lie inside
    the grid; the chapter checks that enlarging the grid does not change it). Cost
    grows like ``k_max**4``: keep ``k_max`` ≤ 60 or so.

    Examples
    --------
    >>> delta_exact_replace(0.3, 1.0, 2, 12) >= delta_exact(0.3, 1.0, 2)
    True
    """
    p = _rate(sampling_rate)
    e = _eps(epsilon)
    t = _tau(tau)
    K = check_int("k_max", k_max, low=t, high=200)
    # log law of V_k for k = 0..K on the support {0 (suppressed), tau, ..., K}
    ks = np.arange(0, K + 2)
    v = np.arange(t, K + 2)[None, :]
    body = _row_log_pmf(ks[:, None], v, p)
    zero = _log_suppressed(ks, p, t)[:, None]
    law = np.concatenate([zero, body], axis=1)  # (K+2, S)
    best = -np.inf
    for k in range(max(t, 1), K + 1):
        A, Ap = law[k], law[k - 1]  # cell a: k -> k-1
        # cell b: j -> j+1 for all j at once; joint log-probs (J, S, S)
        Bj, Bj1 = law[0:K], law[1 : K + 1]
        P = A[None, :, None] + Bj[:, None, :]
        Q = Ap[None, :, None] + Bj1[:, None, :]
        for X, Y in ((P, Q), (Q, P)):
            with np.errstate(invalid="ignore"):
                z = e + Y - X
                pos = np.isfinite(X) & (z < 0)
                terms = np.where(pos, X + log1mexp(np.where(pos, z, -1.0)), -np.inf)
            best = max(best, float(special.logsumexp(terms.reshape(terms.shape[0], -1), axis=1).max()))
    return math.exp(best)


def sampling_rate_for(epsilon, alpha):
    r""":math:`p_s = \alpha(1 - e^{-\varepsilon})` (Bharadwaj & Cormode 2022, Section 3.1).

    Examples
    --------
    >>> round(sampling_rate_for(1.0, 1 / 6), 4)
    0.1054
    """
    e = _eps(epsilon)
    a = _alpha(alpha)
    return a * -math.expm1(-e)


def epsilon_for(sampling_rate, alpha):
    r"""Inverse of :func:`sampling_rate_for`: :math:`\varepsilon = \ln\frac{\alpha}{\alpha - p_s}`.

    Requires :math:`p_s < \alpha`.

    Examples
    --------
    >>> round(epsilon_for(sampling_rate_for(0.7, 0.2), 0.2), 12)
    0.7
    """
    p = _rate(sampling_rate)
    a = _alpha(alpha)
    if p >= a:
        raise ValueError(f"sampling_rate must be smaller than alpha = {a}; got {p}")
    return math.log(a / (a - p))


def choose_parameters(epsilon: float, delta: float, *, alpha: float = 1 / 6, method: str = "lemma") -> dict:
    r"""From a target (ε, δ) to (p_s, τ): :math:`p_s = \alpha(1-e^{-\varepsilon})` and the smallest τ.

    ``method="lemma"``: :math:`\tau = \lceil \ln(1/\delta)/C_\alpha\rceil` (Lemma 3.2);
    ``"theorem"``: smallest τ with :func:`delta_theorem` ≤ δ; ``"exact"``: smallest τ
    with :func:`delta_exact` ≤ δ. Each δ is decreasing in τ, so the search walks down
    from the lemma's τ (or up, if the lemma is vacuous).

    Returns
    -------
    dict with keys ``"sampling_rate"``, ``"tau"``, ``"delta"`` (the achieved δ by the
    chosen method), ``"method"``.

    Examples
    --------
    >>> choose_parameters(1.0, 1e-8)["tau"]
    20
    """
    e = _eps(epsilon)
    d = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    a = _alpha(alpha)
    check_choice("method", method, {"lemma", "theorem", "exact"})
    p = sampling_rate_for(e, a)
    C = c_alpha(a)
    if method == "lemma":
        if C <= 0:
            raise ValueError(f"alpha must make C_alpha positive (alpha below about 0.517); got alpha={a}")
        tau = max(1, int(math.ceil(math.log(1.0 / d) / C - 1e-12)))
        return {"sampling_rate": p, "tau": tau, "delta": delta_simple(a, tau), "method": method}
    f = (lambda t: delta_theorem(p, e, t)) if method == "theorem" else (lambda t: delta_exact(p, e, t))
    tau = max(1, int(math.ceil(math.log(1.0 / d) / C))) if C > 0 else 1
    if f(tau) > d:
        while f(tau) > d:
            tau += 1
            if tau > 100_000:  # pragma: no cover
                raise ValueError("no threshold up to 1e5 reaches the target delta")
    else:
        while tau > 1 and f(tau - 1) <= d:
            tau -= 1
    return {"sampling_rate": p, "tau": tau, "delta": f(tau), "method": method}


# ---------------------------------------------------------------------------
# accuracy
# ---------------------------------------------------------------------------


def omission_bound(W, *, n: float, m: float, tau: int):
    r"""Bharadwaj & Cormode 2022, Lemma 3.4: an item with W copies is omitted w.p. at most
    :math:`\exp(-(w-\tau)^2/(2w))`, :math:`w = Wm/n`, provided w > τ.

    Examples
    --------
    >>> omission_bound(1000, n=1e6, m=1e5, tau=20) == math.exp(-32)
    True
    """
    nn = check_real("n", n, low=0.0, low_open=True)
    mm = check_real("m", m, low=0.0, high=nn, low_open=True)
    t = _tau(tau)
    scalar = np.ndim(W) == 0
    WW = check_array("W", W, low=0.0, low_open=True)
    with np.errstate(over="ignore"):
        w = WW * mm / nn
    w = np.where(np.isfinite(w), w, WW * (mm / nn))  # m <= n: no overflow this way
    if np.any(w <= t):
        raise ValueError("W must make the expected sampled count w = W m / n exceed tau")
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.exp(-((w - t) ** 2) / (2.0 * w))
    # for a huge w, (w - t)^2 overflows: the same exponent as (w - t)/2 * ((w - t)/w)
    out = np.where(np.isnan(out), np.exp(-0.5 * (w - t) * ((w - t) / w)), out)
    return float(out) if scalar else out


def omission_probability(W, *, sampling_rate: float, tau: int):
    r"""Exact probability that an item with W copies is suppressed: :math:`\Pr[\mathrm{Bin}(W,p_s) < \tau]`.

    Examples
    --------
    >>> omission_probability(1000, sampling_rate=0.1, tau=20) < math.exp(-32)
    True
    """
    p = _rate(sampling_rate)
    t = _tau(tau)
    scalar = np.ndim(W) == 0
    WW = check_array("W", W, integer=True, low=0)
    out = np.exp(stats.binom.logcdf(t - 1, WW, p))
    return float(out) if scalar else out


def relative_error_bound(mu, gamma):
    r"""Bharadwaj & Cormode 2022, Lemma 3.5: :math:`\Pr[|X-\mu| > \gamma\mu] \le 2\exp(-\gamma^2\mu/3)`, 0 < γ < 1.

    Examples
    --------
    >>> round(relative_error_bound(300, 10 ** -0.5) / math.exp(-10), 6)
    2.0
    """
    g = check_real("gamma", gamma, low=0.0, high=1.0, low_open=True, high_open=True)
    scalar = np.ndim(mu) == 0
    mu_ = check_array("mu", mu, low=0.0, low_open=True)
    out = 2.0 * np.exp(-g * g * mu_ / 3.0)
    return float(out) if scalar else out


def relative_error_probability(count: int, *, sampling_rate: float, gamma: float) -> float:
    r"""Exact :math:`\Pr[|X - \mu| > \gamma\mu]` for :math:`X \sim \mathrm{Bin}(\text{count}, p_s)`, μ = count·p_s.

    Examples
    --------
    >>> relative_error_probability(3000, sampling_rate=0.1, gamma=10 ** -0.5) < 2 * math.exp(-10)
    True
    """
    c = check_int("count", count, low=1)
    p = _rate(sampling_rate)
    g = check_real("gamma", gamma, low=0.0, high=1.0, low_open=True, high_open=True)
    mu = c * p
    lo = math.ceil(mu - g * mu) - 1  # X <= lo  <=>  X < mu - g mu
    hi = math.floor(mu + g * mu)  # X > hi  <=>  X > mu + g mu
    left = stats.binom.cdf(lo, c, p) if lo >= 0 else 0.0
    return float(left + stats.binom.sf(hi, c, p))


# ---------------------------------------------------------------------------
# baselines at the same privacy level on the sampled clients
# ---------------------------------------------------------------------------


def laplace_histogram(counts, *, epsilon: float, rng=None) -> np.ndarray:
    r"""Central baseline: :math:`h + \mathrm{Lap}(1/\varepsilon)` per bucket (ε-DP, add/remove).

    Thin wrapper over :func:`fedfreq.baselines.laplace_mechanism` with sensitivity 1.

    Examples
    --------
    >>> laplace_histogram([5, 7], epsilon=1.0, rng=0).shape
    (2,)
    """
    h = check_array("counts", counts, low=0.0)
    return laplace_mechanism(h, sensitivity=1.0, epsilon=epsilon, rng=rng)


@functools.lru_cache(maxsize=256)
def _shuffle_rate(m: int, eps: float, delta: float) -> float:
    return binomial_noise_probability(m, epsilon=eps, delta=delta)


def bernoulli_shuffle_histogram(
    counts, *, m: int, epsilon: float, delta: float, calibration_m: int | None = None, rng=None
) -> np.ndarray:
    r"""Shuffle-model baseline in the style of Balcer & Cheu (2020): Bernoulli noise per bucket.

    Each of the ``m`` participating clients sends its item and, for every bucket, one
    extra message with probability r; the shuffler releases the per-bucket message
    counts :math:`h_b + \mathrm{Bin}(m, r)` and the analyst subtracts m r. The noise
    rate r is the one found by :func:`fedfreq.trust_models.binomial_noise_probability`
    that makes a sensitivity-1 count plus :math:`\mathrm{Bin}(m_c, r)` exactly
    (ε, δ)-DP, with :math:`m_c` = ``calibration_m`` (default ``m``). Any
    :math:`m_c \le m` is valid: the extra :math:`m - m_c` Bernoulli messages are
    independent noise added afterwards (post-processing). One cell changes by one when
    one item is added or removed, the number of noise senders being public. Balcer &
    Cheu's own constants are looser.

    Examples
    --------
    >>> est = bernoulli_shuffle_histogram([100, 0], m=20000, epsilon=1.0, delta=1e-8, rng=0)
    >>> est.shape
    (2,)
    """
    h = check_array("counts", counts, integer=True, low=0)
    mm = check_int("m", m, low=1)
    mc = mm if calibration_m is None else check_int("calibration_m", calibration_m, low=1, high=mm)
    e = _eps(epsilon)
    d = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    try:
        r = _shuffle_rate(mc, e, d)
    except ValueError as exc:
        name = "m" if calibration_m is None else "calibration_m"
        raise ValueError(f"{name}={mc} is too small for epsilon={e!r} and delta={d!r}: {exc}") from exc
    gen = as_generator(rng)
    return h + gen.binomial(mm, r, size=h.shape) - mm * r


def _hr_size(n_buckets: int) -> int:
    return 1 << int(math.ceil(math.log2(n_buckets + 1)))


def hadamard_response(items, *, n_buckets: int, epsilon: float, rng=None) -> np.ndarray:
    r"""Local baseline: Hadamard response (Acharya, Sun & Zhang 2019), high-privacy form.

    With :math:`K = 2^{\lceil\log_2(B+1)\rceil}` and :math:`C_x = \{y < K:
    \langle x+1, y\rangle \equiv 0 \pmod 2\}` (the +1 entries of row x + 1 of the
    Sylvester–Hadamard matrix, :math:`|C_x| = K/2`), a client holding x reports a uniform
    element of :math:`C_x` with probability :math:`e^\varepsilon/(1+e^\varepsilon)`
    and a uniform element of its complement otherwise: ε-LDP. This is the variant
    ``pure_ldp`` uses for ε ≤ 1; it is used here at every ε (still ε-LDP).

    Returns
    -------
    ndarray of int64
        One report in ``[0, K)`` per client.

    Examples
    --------
    >>> bool(hadamard_response([0, 1, 2], n_buckets=3, epsilon=1.0, rng=0).max() < 4)
    True
    """
    B = check_int("n_buckets", n_buckets, low=1, high=10**8, reason=_DENSE)
    x = _items(items, B)
    e = _eps_exp(epsilon)
    K = _hr_size(B)
    gen = as_generator(rng)
    row = x + 1
    y = gen.integers(0, K, size=x.size)
    in_c = (np.bitwise_count(row & y) % 2) == 0
    keep = gen.random(x.size) < math.exp(e) / (1.0 + math.exp(e))
    # flipping the highest set bit of row flips the parity, mapping C_x onto its complement
    top = 1 << (np.floor(np.log2(row)).astype(np.int64))
    want_in = keep
    out = np.where(in_c == want_in, y, y ^ top)
    return out.astype(np.int64)


def hadamard_response_estimate(reports, *, n_buckets: int, epsilon: float) -> np.ndarray:
    r"""Unbiased count estimates from Hadamard-response reports.

    With :math:`S_x` the number of reports in :math:`C_x` among N reports,
    :math:`\mathbb E S_x = c_x\frac{e^\varepsilon}{1+e^\varepsilon} + (N-c_x)\frac12`,
    so :math:`\hat c_x = \frac{2(1+e^\varepsilon)S_x - (1+e^\varepsilon)N}{e^\varepsilon-1}`.
    The :math:`S_x` for all x come from one fast Walsh–Hadamard transform of the
    report histogram.

    Examples
    --------
    >>> r = hadamard_response([1] * 4000, n_buckets=3, epsilon=1.0, rng=2)
    >>> est = hadamard_response_estimate(r, n_buckets=3, epsilon=1.0)
    >>> bool(abs(est[1] - 4000) < 400)
    True
    """
    B = check_int("n_buckets", n_buckets, low=1, high=10**8, reason=_DENSE)
    e = _eps_exp(epsilon)
    K = _hr_size(B)
    r = check_array("reports", reports, ndim=1, integer=True, low=0)
    if r.size and r.max() >= K:
        raise ValueError(f"reports must lie in [0, {K - 1}]; got max {r.max()}")
    N = r.size
    hist = np.bincount(r, minlength=K).astype(float)
    t = fwht(hist)  # t[i] = sum_y (-1)^{<i,y>} hist[y] = 2 S_i - N
    S = (t[1 : B + 1] + N) / 2.0
    ee = math.exp(e)
    return (2.0 * (1.0 + ee) * S - (1.0 + ee) * N) / (ee - 1.0)


# ---------------------------------------------------------------------------
# the paper's experiment (Section 5)
# ---------------------------------------------------------------------------


def paper_synthetic_counts(kind: str, *, n: int, n_buckets: int, rng=None) -> np.ndarray:
    r"""True histogram of ``n`` clients drawn from Bharadwaj & Cormode's (2022) synthetic distributions.

    ``"binomial"``: each client's bucket is :math:`\mathrm{Bin}(B-1, 1/2)` (the paper
    says Bin(B, 1/2), which has B + 1 values; B − 1 trials keep the values in
    ``[0, B)``). ``"geometric"``: each client draws :math:`G \sim
    \mathrm{Geom}(1/\sqrt B)` on {1, 2, ...} and takes bucket G − 1; values beyond the
    last bucket (probability :math:`(1-1/\sqrt B)^B \approx e^{-\sqrt B}`) are put in
    bucket B − 1. The counts are one multinomial draw, the exact law of n i.i.d. clients.

    Examples
    --------
    >>> int(paper_synthetic_counts("geometric", n=1000, n_buckets=64, rng=0).sum())
    1000
    """
    check_choice("kind", kind, {"binomial", "geometric"})
    nn = check_int("n", n, low=1)
    B = check_int("n_buckets", n_buckets, low=2, high=10**8, reason=_DENSE)
    gen = as_generator(rng)
    v = np.arange(B)
    if kind == "binomial":
        pmf = stats.binom.pmf(v, B - 1, 0.5)
    else:
        g = 1.0 / math.sqrt(B)
        pmf = stats.geom.pmf(v + 1, g)
        pmf[-1] += stats.geom.sf(B, g)
    pmf = pmf / pmf.sum()
    return gen.multinomial(nn, pmf).astype(np.int64)


def compare_mechanisms(
    counts, *, epsilon: float, alpha: float = 1 / 6, tau: int = 20, delta: float = 1e-8, rng=None
) -> dict:
    r"""One run of Bharadwaj & Cormode's (2022) comparison (Section 5): four estimates of the frequency vector.

    Clients are Poisson-sampled at :math:`p_s = \alpha(1-e^{-\varepsilon})`; on the
    sampled histogram X the four mechanisms are sample-and-threshold (suppress X < τ),
    central Laplace (:func:`laplace_histogram`), shuffle-model Bernoulli noise
    (:func:`bernoulli_shuffle_histogram` at (ε, δ), m = number of sampled clients, noise
    calibrated for m rounded down to a multiple of 1000) and
    local Hadamard response (:func:`hadamard_response`, ε-LDP per sampled client).
    Frequencies are counts divided by the expected sample size :math:`m = p_s n`.

    Returns
    -------
    dict
        ``"truth"`` (h / n) and one frequency vector per mechanism: ``"sample_threshold"``,
        ``"laplace"``, ``"shuffle"``, ``"hadamard"``; plus ``"m"``.

    Examples
    --------
    >>> out = compare_mechanisms(np.array([60000, 30000, 10000]), epsilon=1.0, rng=0)
    >>> sorted(out)
    ['hadamard', 'laplace', 'm', 'sample_threshold', 'shuffle', 'truth']
    """
    h = check_array("counts", counts, ndim=1, integer=True, low=0, min_size=1)
    e = _eps(epsilon)
    gen = as_generator(rng)
    n = int(h.sum())
    p = sampling_rate_for(e, alpha)
    m = p * n
    x = gen.binomial(h, p).astype(np.int64)
    st_out = x.copy()
    st_out[st_out < _tau(tau)] = 0
    lap = laplace_histogram(x, epsilon=e, rng=gen)
    senders = int(x.sum())
    if senders == 0:
        raise ValueError(
            f"no user was sampled (sampling rate {p:.3g} from alpha={alpha!r} and epsilon={e!r}, n = {n} users): "
            "alpha or the counts must be larger"
        )
    # calibrate on a round lower bound of the number of senders (valid by post-processing; cached)
    shuf = bernoulli_shuffle_histogram(
        x,
        m=senders,
        epsilon=e,
        delta=delta,
        calibration_m=max(1, senders // 1000 * 1000) if senders >= 1000 else senders,
        rng=gen,
    )
    items = np.repeat(np.arange(h.size), x)
    hr = hadamard_response_estimate(
        hadamard_response(items, n_buckets=h.size, epsilon=e, rng=gen), n_buckets=h.size, epsilon=e
    )
    return {
        "truth": h / n,
        "sample_threshold": st_out / m,
        "laplace": lap / m,
        "shuffle": shuf / m,
        "hadamard": hr / m,
        "m": m,
    }


def top_k_recall(estimate, truth, k: int) -> float:
    r"""Fraction of the true top-k buckets among the estimated top-k (ties broken by bucket index).

    Examples
    --------
    >>> top_k_recall([3, 2, 0, 1], [4, 3, 1, 0], 2)
    1.0
    """
    est = check_array("estimate", estimate, ndim=1, min_size=1)
    tru = check_array("truth", truth, ndim=1, shape=(est.size,))
    kk = check_int("k", k, low=1, high=est.size)
    top_true = np.argsort(-tru, kind="stable")[:kk]
    top_est = np.argsort(-est, kind="stable")[:kk]
    return float(np.intersect1d(top_true, top_est).size / kk)


def _bucket_of(word: str, n_buckets: int) -> int:
    digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") % n_buckets


def hashed_word_counts(words, *, n_buckets: int) -> np.ndarray:
    r"""Histogram of word occurrences hashed consistently into ``n_buckets`` buckets.

    Bharadwaj & Cormode's (2022) Shakespeare experiment treats every word occurrence as a client and maps
    each distinct word to a bucket. The map used here is a unkeyed BLAKE2b hash
    (64-bit digest, little-endian, modulo B), so it is the same on every machine and
    Python run (unlike Python's salted ``hash``). Different words may share a bucket.

    Parameters
    ----------
    words : iterable of str
        The word occurrences (e.g. all words of :func:`fedfreq.datasets.shakespeare_roles`).
    n_buckets : int
        Number of buckets B ≥ 1.

    Returns
    -------
    ndarray of int64, shape (n_buckets,)

    Examples
    --------
    >>> hashed_word_counts(["to", "be", "or", "not", "to", "be"], n_buckets=4).sum()
    np.int64(6)
    """
    B = check_int("n_buckets", n_buckets, low=1, high=10**8, reason=_DENSE)
    if words is None or isinstance(words, str | bytes | dict) or not hasattr(words, "__iter__"):
        raise ValueError(f"words must be a sequence of strings; got {type(words).__name__}")
    counter = collections.Counter(words)
    if not all(isinstance(w, str) for w in counter):
        raise ValueError("words must be strings")
    buckets = np.fromiter((_bucket_of(w, B) for w in counter), dtype=np.int64, count=len(counter))
    weights = np.fromiter(counter.values(), dtype=np.int64, count=len(counter))
    return np.bincount(buckets, weights=weights, minlength=B).astype(np.int64)
