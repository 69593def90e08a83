r"""Bit pushing: numeric aggregation from one (private) bit per client (Cormode & Markov 2021).

Every client holds a non-negative ``b``-bit integer :math:`x_i = \sum_{j<b} 2^j x_i^{(j)}`.
In *basic bit pushing* (Cormode & Markov 2021, Sec. 3.1, Algorithm 1) a fraction :math:`p_j` of the
``n`` clients reports bit ``j`` of its value; the server averages the reports of each
bit into :math:`m_j` and returns :math:`\hat x = \sum_j 2^j m_j`. Because the binary
expansion is linear in the bits, :math:`\hat x` is unbiased for the mean
:math:`\bar x = \sum_j 2^j \bar x^{(j)}`, where :math:`\bar x^{(j)}` is the *fraction of
clients whose bit j is one* (the paper calls it "the j'th bit of the mean"; see the
Errata page).

The module contains

* the protocols: :func:`bit_push` (Algorithm 1: server-assigned quasi-Monte Carlo or
  client-random bit selection, ``b_send`` bits per client, optional randomized
  response per bit), :func:`adaptive_bit_push` (Algorithm 2, with and without
  caching, with optional bit squashing under DP);
* the analysis: :func:`estimator_variance` (Lemma 1 / Corollary 2 / Sec. 3.3),
  :func:`finite_population_variance` (the exact variance for a fixed population),
  :func:`optimal_probabilities` (Lemma 3), :func:`weighted_probabilities`
  (:math:`p_j \propto 2^{\alpha j}`), :func:`rr_report_variance`;
* extensions (Sec. 3.4): :func:`signed_mean_shift`, :func:`signed_mean_split`,
  :func:`variance_estimate` (both estimators of Lemma 5), :func:`moment_estimate`,
  :func:`geometric_mean_estimate`;
* the baselines of Sec. 2 and 4 at the same ε: :func:`laplace_mean`,
  :func:`randomized_rounding_mean`, :func:`piecewise_mean`, :func:`dithering_mean`
  (each reusing :mod:`fedfreq.baselines` for the Laplace noise and randomized response);
* the synthetic distributions of Sec. 4.1 (:func:`synthetic_integers`) (the exercise
  checkers are in :mod:`fedfreq.exercises`).

All samplers are floating-point simulations of the mechanisms, not side-channel-safe
DP implementations. The privacy unit is one client's value; the LDP guarantee holds
for any two values of the same client (replace-one at the local level).

References
----------
- [CM21] G. Cormode, I. L. Markov. "Bit-efficient Numerical Aggregation and Stronger
  Privacy for Trust in Federated Analytics." arXiv:2108.01521, 2021 (Cormode & Markov 2021).
- [DJW18] J. C. Duchi, M. I. Jordan, M. J. Wainwright. "Minimax optimal procedures
  for locally private estimation." JASA 113(521), 2018.
- [WXY+19] N. Wang et al. "Collecting and analyzing multidimensional data with local
  differential privacy." ICDE 2019 (the piecewise mechanism).
- [BMV20] R. Ben-Basat, M. Mitzenmacher, S. Vargaftik. "How to send a real number
  using a single bit (and some shared randomness)." arXiv:2010.02331, 2020.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._rng import as_generator
from ._validation import check_array, check_bool, check_choice, check_epsilon, check_int, check_real, check_scale
from .baselines import laplace_mechanism, randomized_response, rr_count_variance, rr_debias_count

__all__ = [
    "BitPushResult",
    "to_bits",
    "bit_means",
    "bitwise_variances",
    "weighted_probabilities",
    "qmc_counts",
    "assign_bits",
    "bit_push",
    "adaptive_bit_push",
    "estimator_variance",
    "finite_population_variance",
    "finite_population_mse",
    "client_random_bias",
    "client_random_variance",
    "optimal_probabilities",
    "rr_report_variance",
    "squash_mask",
    "signed_mean_shift",
    "signed_mean_split",
    "variance_estimate",
    "moment_estimate",
    "geometric_mean_estimate",
    "laplace_mean",
    "randomized_rounding_mean",
    "piecewise_mean",
    "piecewise_variance",
    "dithering_mean",
    "synthetic_integers",
]

MAX_BITS = 62  # 2**62 still fits in int64 together with the sign
# The piecewise mechanism uses e^(eps/2): finite up to eps of about 1419; beyond 1000 there is
# no privacy to speak of, and the mechanism is the identity to machine precision.
_MAX_PIECEWISE_EPSILON = 1000.0
_EXP_LIMIT = "the piecewise mechanism evaluates exp(epsilon / 2) in floating point"


# ---------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------


def _check_b(b) -> int:
    return check_int("b", b, low=1, high=MAX_BITS)


def _check_values(values, b: int, *, name: str = "values") -> np.ndarray:
    x = check_array(name, values, ndim=1, integer=True, min_size=1)
    if x.min() < 0 or x.max() >= 2**b:
        raise ValueError(
            f"{name} must be integers in [0, 2**b - 1] = [0, {2**b - 1}] for b = {b}; "
            f"got min {x.min()} and max {x.max()}"
        )
    return x


def _check_probs(probs, b: int | None = None, *, name: str = "probs") -> np.ndarray:
    p = check_array(name, probs, ndim=1, low=0.0, high=1.0, min_size=1)
    if b is not None and p.size != b:
        raise ValueError(f"{name} must have b = {b} entries (one per bit); got {p.size}")
    if abs(p.sum() - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1 (within 1e-9); got sum {p.sum()!r}")
    return p


def _check_epsilon(epsilon) -> float | None:
    if epsilon is None:
        return None
    return check_epsilon("epsilon", epsilon)


def _rr_noise(eps: float | None) -> float:
    """Per-report variance e^ε/(e^ε-1)^2 that debiased randomized response adds (0 without DP)."""
    if eps is None:
        return 0.0
    return rr_count_variance(1, epsilon=eps)


# ---------------------------------------------------------------------------
# bits of integers
# ---------------------------------------------------------------------------


def to_bits(values, *, b: int) -> np.ndarray:
    r"""Binary expansion: the ``(n, b)`` array of bits :math:`x_i^{(j)}` (least significant first).

    Examples
    --------
    >>> to_bits([5, 2], b=3).tolist()
    [[1, 0, 1], [0, 1, 0]]
    """
    b_ = _check_b(b)
    x = _check_values(values, b_)
    return ((x[:, None] >> np.arange(b_)) & 1).astype(np.int8)


def bit_means(values, *, b: int) -> np.ndarray:
    r"""Fractions :math:`\bar x^{(j)} = \frac1n\sum_i x_i^{(j)}` of clients whose bit ``j`` is one.

    These are the quantities the paper writes :math:`\bar x^{(j)}`; note
    :math:`\sum_j 2^j \bar x^{(j)} = \bar x` exactly.

    Examples
    --------
    >>> bit_means([1, 2, 3, 0], b=2).tolist()
    [0.5, 0.5]
    """
    b_ = _check_b(b)
    x = _check_values(values, b_)
    return np.array([np.count_nonzero((x >> j) & 1) for j in range(b_)], dtype=float) / x.size


def bitwise_variances(means) -> np.ndarray:
    r""":math:`\beta_j = 4^j\,\bar x^{(j)}(1-\bar x^{(j)})` of Cormode & Markov 2021, Eq. (3).

    Examples
    --------
    >>> bitwise_variances([0.5, 0.5]).tolist()
    [0.25, 1.0]
    """
    m = check_array("bit_means", means, ndim=1, low=0.0, high=1.0, min_size=1)
    return 4.0 ** np.arange(m.size) * m * (1.0 - m)


def weighted_probabilities(b: int, alpha: float = 1.0) -> np.ndarray:
    r"""Sampling probabilities :math:`p_j \propto 2^{\alpha j}` (Cormode & Markov 2021, Sec. 3.1).

    ``alpha = 0`` is uniform, ``alpha = 1`` the choice :math:`p_j = 2^j/(2^b-1)` behind
    bound (1). Computed as :math:`2^{\alpha (j-b+1)}` so that no power overflows.

    Examples
    --------
    >>> weighted_probabilities(3, 1.0).round(4).tolist()
    [0.1429, 0.2857, 0.5714]
    """
    b_ = _check_b(b)
    a = check_real("alpha", alpha, low=-64.0, high=64.0)
    w = np.exp2(a * (np.arange(b_) - (b_ - 1)))
    return w / w.sum()


# ---------------------------------------------------------------------------
# assignment of bits to clients
# ---------------------------------------------------------------------------


def qmc_counts(probs, total: int) -> np.ndarray:
    r"""Integer counts :math:`c_j \approx p_j \cdot \mathrm{total}` summing to ``total``.

    Largest-remainder rounding: :math:`\lfloor p_j T\rfloor`, then the leftover units go
    to the largest fractional parts (ties to the higher bit). This is the
    quasi-Monte Carlo allocation "exactly :math:`n p_j` clients per bit" of Cormode & Markov 2021,
    Sec. 3.1, made integral.

    Examples
    --------
    >>> qmc_counts([0.25, 0.25, 0.5], 10).tolist()
    [2, 3, 5]
    """
    return _qmc_counts(_check_probs(probs), check_int("total", total, low=0))


def _qmc_counts(p: np.ndarray, t: int) -> np.ndarray:
    """:func:`qmc_counts` of checked arguments (the inner loops call it once per round)."""
    raw = p * t
    base = np.floor(raw).astype(np.int64)
    left = t - int(base.sum())
    if left > 0:
        frac = raw - base
        order = np.lexsort((-np.arange(p.size), -frac))  # largest fraction, then higher bit
        base[order[:left]] += 1
    return base


def assign_bits(n: int, probs, *, b_send: int = 1, design: str = "server", rng=None) -> np.ndarray:
    r"""Bit indices each client reports: an ``(n, b_send)`` int array.

    ``design="server"`` (the paper's default, central randomness, QMC): bit ``j`` is
    assigned to exactly :math:`c_j` = :func:`qmc_counts` ``(probs, n*b_send)`` report
    slots; the sorted list of slots is dealt column-wise so that no client gets the same
    bit twice (this needs :math:`c_j \le n`, i.e. :math:`b_\text{send}\,p_j \lesssim 1`),
    and the clients are randomly permuted. ``design="client"`` (local randomness): every
    client draws its bit i.i.d. from ``probs`` (only ``b_send = 1``).

    Raises
    ------
    ValueError
        If a bit would need more than ``n`` reports (``b_send * p_j`` too large), or
        ``design="client"`` with ``b_send > 1``.

    Examples
    --------
    >>> np.bincount(assign_bits(8, [0.25, 0.75], rng=0)[:, 0]).tolist()
    [2, 6]
    """
    n_ = check_int("n", n, low=1, high=10**9, reason="one bit index per client is held in memory")
    p = _check_probs(probs)
    k = check_int("b_send", b_send, low=1, high=p.size)
    check_choice("design", design, {"server", "client"})
    return _assign_bits(n_, p, k, design, as_generator(rng))


def _assign_bits(n_: int, p: np.ndarray, k: int, design: str, gen: np.random.Generator) -> np.ndarray:
    """:func:`assign_bits` of checked arguments (the protocols call it once per round)."""
    if design == "client":
        if k != 1:
            raise ValueError("b_send must be 1 with design='client' (client-random selection of one bit)")
        return gen.choice(p.size, size=(n_, 1), p=p)
    counts = _qmc_counts(p, n_ * k)
    if counts.max() > n_:
        raise ValueError(
            f"b_send = {k} is too large for probs: bit {int(counts.argmax())} would need "
            f"{int(counts.max())} > n = {n_} reports; need b_send * max(probs) <= 1"
        )
    slots = np.repeat(np.arange(p.size), counts).reshape(k, n_).T
    return slots[gen.permutation(n_)]


# ---------------------------------------------------------------------------
# Algorithm 1
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BitPushResult:
    """Outcome of a bit-pushing run.

    Attributes
    ----------
    estimate : float
        :math:`\\hat x = \\sum_j w_j m_j` (``w_j = 2^j`` for plain values).
    means : ndarray
        Per-bit estimates :math:`m_j` (debiased under DP; 0 for bits with no report).
    sums : ndarray
        Per-bit sums :math:`s_j` of the *reported* bits (after randomized response).
    counts : ndarray
        Per-bit numbers of reports :math:`c_j`.
    probs : ndarray
        The sampling probabilities used (round 2 for the adaptive protocol).
    """

    estimate: float
    means: np.ndarray
    sums: np.ndarray
    counts: np.ndarray
    probs: np.ndarray


def _debias_means(sums: np.ndarray, counts: np.ndarray, eps: float | None) -> np.ndarray:
    """Per-bit means from sums and counts; randomized response is debiased; 0 where no report."""
    safe = np.where(counts > 0, counts, 1)
    if eps is None:
        return np.where(counts > 0, sums / safe, 0.0)
    q = 1.0 / (1.0 + math.exp(eps)) if eps < 700 else 0.0
    pmq = -math.expm1(-eps) / (1.0 + math.exp(-eps))
    return np.where(counts > 0, (sums / safe - q) / pmq, 0.0)


def _report(x: np.ndarray, idx: np.ndarray, nbits: int, eps, gen) -> tuple[np.ndarray, np.ndarray]:
    """Reported bits of clients ``x`` at indices ``idx``; returns per-bit (sums, counts)."""
    bits = ((x[:, None] >> idx) & 1).ravel()
    if eps is not None:
        bits = randomized_response(bits, epsilon=eps, rng=gen)
    flat = idx.ravel()
    sums = np.bincount(flat, weights=bits, minlength=nbits).astype(float)
    counts = np.bincount(flat, minlength=nbits).astype(np.int64)
    return sums, counts


def bit_push(
    values,
    *,
    b: int,
    probs=None,
    alpha: float = 1.0,
    b_send: int = 1,
    design: str = "server",
    epsilon: float | None = None,
    rng=None,
) -> BitPushResult:
    r"""Basic bit pushing (Cormode & Markov 2021, Algorithm 1; Corollary 2 for ``b_send > 1``; Sec. 3.3 for DP).

    Client ``i`` reports bit(s) :math:`j` of :math:`x_i` (chosen by :func:`assign_bits`),
    optionally through randomized response at level ``epsilon``; the server forms
    :math:`m_j = s_j / c_j` (debiased as :math:`(m_j - q)/(p - q)` under DP) and returns
    :math:`\hat x = \sum_j 2^j m_j`. Bits with no report contribute 0 (a bias of at most
    :math:`2^j\bar x^{(j)}`; with the server design this happens only when
    :math:`n p_j < 1/2`).

    Parameters
    ----------
    values : array_like of int, shape (n,)
        Client values in :math:`[0, 2^b - 1]`.
    b : int
        Bit depth, 1 to 62.
    probs : array_like, shape (b,), optional
        Sampling probabilities (sum to 1). Default :func:`weighted_probabilities` ``(b, alpha)``.
    alpha : float
        Exponent of the default weights :math:`p_j \propto 2^{\alpha j}`.
    b_send : int
        Bits per client (distinct bits; server design only).
    design : {"server", "client"}
        Quasi-Monte Carlo server assignment or client-random selection.
    epsilon : float, optional
        If given, every reported bit goes through randomized response (ε-LDP per
        report, :math:`b_\text{send}\,\varepsilon` per client).
    rng : Generator, int or None

    Examples
    --------
    >>> x = np.arange(1024)
    >>> round(bit_push(x, b=10, rng=1).estimate, 1)   # true mean 511.5
    515.5
    """
    b_ = _check_b(b)
    x = _check_values(values, b_)
    p = weighted_probabilities(b_, alpha) if probs is None else _check_probs(probs, b_)
    eps = _check_epsilon(epsilon)
    gen = as_generator(rng)
    k = check_int("b_send", b_send, low=1, high=p.size)
    check_choice("design", design, {"server", "client"})
    idx = _assign_bits(x.size, p, k, design, gen)
    sums, counts = _report(x, idx, b_, eps, gen)
    means = _debias_means(sums, counts, eps)
    est = float(np.sum(np.exp2(np.arange(b_)) * means))
    return BitPushResult(est, means, sums, counts, p)


# ---------------------------------------------------------------------------
# Algorithm 2
# ---------------------------------------------------------------------------


def squash_mask(means, counts, *, epsilon: float, threshold: float, unit: str = "sd") -> np.ndarray:
    r"""Bits the squashing heuristic keeps (Cormode & Markov 2021, Sec. 4.4, Fig. 5).

    Under randomized response a bit that is zero for every client still has a noisy
    debiased mean with standard deviation :math:`\sqrt{v_\varepsilon / c_j}`,
    :math:`v_\varepsilon = e^\varepsilon/(e^\varepsilon-1)^2`. A bit is *squashed*
    (treated as all-zero) when :math:`m_j < \tau\sqrt{v_\varepsilon/c_j}`, with
    :math:`\tau` = ``threshold`` the multiple of the DP noise; bits with no report are
    squashed. Returns a boolean keep-mask.

    The paper measures the threshold "as a multiple of the expected amount of DP noise"
    without defining that unit. ``unit="sd"`` (the default) is the standard deviation
    :math:`\sqrt{v_\varepsilon/c_j}` of the bit's debiased mean above;
    ``unit="subtrahend"`` is the amount :math:`q/(p-q) = 1/(e^\varepsilon-1)` that
    debiasing subtracts from every report (the "DP subtrahend" of Sec. 4.4), the same for
    every bit whatever its number of reports.

    Examples
    --------
    >>> squash_mask([0.4, 0.001], [1000, 1000], epsilon=1.0, threshold=1.0).tolist()
    [True, False]
    >>> squash_mask([0.2, 0.1], [10, 10**6], epsilon=2.0, threshold=1.0, unit="subtrahend").tolist()
    [True, False]
    """
    m = check_array("means", means, ndim=1, min_size=1)
    c = check_array("counts", counts, ndim=1, shape=(m.size,), integer=True, low=0)
    eps = check_epsilon("epsilon", epsilon)
    tau = check_real("threshold", threshold, low=0.0)
    check_choice("unit", unit, {"sd", "subtrahend"})
    scale: np.ndarray | float
    if unit == "sd":
        scale = np.sqrt(_rr_noise(eps) / np.where(c > 0, c, 1))
    else:
        scale = 1.0 / math.expm1(eps) if eps < 700 else 0.0
    return (c > 0) & (m >= tau * scale)


def adaptive_bit_push(
    values,
    *,
    b: int,
    gamma: float = 0.5,
    delta: float = 1.0 / 3.0,
    alpha: float = 1.0,
    caching: bool = True,
    epsilon: float | None = None,
    squash: float | None = None,
    squash_unit: str = "sd",
    min_reports: int = 10,
    rng=None,
) -> BitPushResult:
    r"""Two-round adaptive bit pushing (Cormode & Markov 2021, Algorithm 2).

    Round 1: a random :math:`\lfloor\delta n\rceil` of the clients run :func:`bit_push`
    with :math:`p^{(1)}_j \propto 2^{\gamma j}`, giving bit means :math:`m^{(1)}_j`.
    Round 2: the other clients run it with

    .. math:: p^{(2)}_j \propto \bigl(4^j\, m^{(1)}_j(1-m^{(1)}_j) + 4^j v_\varepsilon\bigr)^{\alpha/2},

    (:math:`m^{(1)}` clipped to [0, 1] for the weights; :math:`v_\varepsilon = 0` without
    DP; a bit with fewer than ``min_reports`` round-1 reports is treated as unknown and
    weighted as if :math:`m^{(1)}_j = 1/2` -- with ``min_reports=0`` a bit seen once or
    twice looks constant and is never sampled again, the literal rule of the paper), so
    that ``alpha = 1`` is the optimum of Lemma 3 (and of its LDP analogue) at the
    round-1 estimates, and :math:`p_j\propto 2^{\alpha j}` when all bits look alike. (The
    paper's line 6 puts the exponent α on the unsquared product; see the Errata page.)
    With ``caching`` the final bit means pool both rounds,
    :math:`m_j = (s^{(1)}_j+s^{(2)}_j)/(c^{(1)}_j+c^{(2)}_j)` (line 9); without it the
    round-2 means are used, falling back to :math:`m^{(1)}_j` for bits that got no
    round-2 report. With ``squash`` (= τ, needs ``epsilon``) bits failing
    :func:`squash_mask` after round 1 get no round-2 weight, and bits failing it on the
    final means are set to 0; ``squash_unit`` is the unit of τ (see :func:`squash_mask`).

    Returns
    -------
    BitPushResult
        ``probs`` holds :math:`p^{(2)}`; ``sums``/``counts`` are the pooled ones with
        caching, the round-2 ones without.

    Examples
    --------
    >>> x = np.arange(300, 400).repeat(100)
    >>> round(adaptive_bit_push(x, b=16, rng=0).estimate, 1)   # true mean 349.5
    351.0
    """
    caching = check_bool("caching", caching)
    b_ = _check_b(b)
    x = _check_values(values, b_)
    g = check_real("gamma", gamma, low=-64.0, high=64.0)
    d = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    a = check_real("alpha", alpha, low=0.0, high=64.0)
    eps = _check_epsilon(epsilon)
    mr = check_int("min_reports", min_reports, low=0)
    eps_squash, tau = 0.0, 0.0
    if squash is not None:
        if eps is None:
            raise ValueError("squash (a multiple of the DP noise) requires epsilon")
        eps_squash, tau = eps, check_real("squash", squash, low=0.0)
    check_choice("squash_unit", squash_unit, {"sd", "subtrahend"})
    gen = as_generator(rng)
    n = x.size
    n1 = int(round(d * n))
    if n1 < 1 or n1 >= n:
        raise ValueError(f"delta * n must leave at least one client in each round; got delta={d}, n={n}")
    perm = gen.permutation(n)
    x1, x2 = x[perm[:n1]], x[perm[n1:]]
    p1 = weighted_probabilities(b_, g)
    s1, c1 = _report(x1, _assign_bits(n1, p1, 1, "server", gen), b_, eps, gen)
    m1 = _debias_means(s1, c1, eps)
    # bits with too few round-1 reports are unknown, not constant: give them the prior weight 1/4
    mc = np.where(c1 >= max(mr, 1), np.clip(m1, 0.0, 1.0), 0.5)
    j = np.arange(b_)
    # (4^j (v + v_eps))^(alpha/2) = 2^(alpha j) (v + v_eps)^(alpha/2), scaled by 2^(-alpha jmax)
    w = np.exp2(a * (j - (b_ - 1))) * (mc * (1.0 - mc) + _rr_noise(eps)) ** (a / 2.0)
    if squash is not None:
        w = w * squash_mask(m1, c1, epsilon=eps_squash, threshold=tau, unit=squash_unit)
    if w.sum() > 0:
        p2 = w / w.sum()
        s2, c2 = _report(x2, _assign_bits(n - n1, p2, 1, "server", gen), b_, eps, gen)
    else:  # every bit looks constant after round 1: nothing left to learn
        p2 = np.zeros(b_)
        s2, c2 = np.zeros(b_), np.zeros(b_, dtype=np.int64)
    if caching:
        sums, counts = s1 + s2, c1 + c2
        means = _debias_means(sums, counts, eps)
    else:
        sums, counts = s2, c2
        means = np.where(c2 > 0, _debias_means(s2, c2, eps), m1)
    if squash is not None:
        used = counts if caching else np.where(c2 > 0, c2, c1)
        keep = squash_mask(means, used, epsilon=eps_squash, threshold=tau, unit=squash_unit)
        means = np.where(keep, means, 0.0)
    est = float(np.sum(np.exp2(j) * means))
    return BitPushResult(est, means, sums, counts, p2)


# ---------------------------------------------------------------------------
# analysis
# ---------------------------------------------------------------------------


def rr_report_variance(bit_mean, epsilon: float | None) -> float | np.ndarray:
    r"""Variance of one debiased randomized-response report of a bit with mean :math:`\mu`.

    .. math::

        \operatorname{Var}\Bigl[\frac{r - q}{p - q}\Bigr]
        = \mu(1-\mu) + \frac{e^\varepsilon}{(e^\varepsilon-1)^2},

    since the report is Bernoulli(:math:`q + (p-q)\mu`) and
    :math:`\pi(1-\pi) = pq + (p-q)^2\mu(1-\mu)`. Cormode & Markov 2021, Sec. 3.3 gives only the second
    term. ``epsilon=None`` means no randomisation (just :math:`\mu(1-\mu)`).

    Examples
    --------
    >>> round(float(rr_report_variance(0.5, math.log(3.0))), 4)   # 0.25 + 3/4
    1.0
    """
    m = check_array("bit_mean", bit_mean, low=0.0, high=1.0)
    out = m * (1.0 - m) + _rr_noise(_check_epsilon(epsilon))
    return float(out) if out.ndim == 0 else out


def estimator_variance(bit_means, probs, n, *, b_send: int = 1, epsilon: float | None = None) -> float:
    r"""Variance of basic bit pushing (Cormode & Markov 2021, Lemma 1; Corollary 2; Sec. 3.3).

    .. math:: \mathbb V[\hat x] = \frac{1}{n\,b_\text{send}}\sum_{j=0}^{b-1}
              \frac{4^j\bigl(\bar x^{(j)}(1-\bar x^{(j)}) + v_\varepsilon\bigr)}{p_j},

    with :math:`v_\varepsilon = e^\varepsilon/(e^\varepsilon-1)^2` under randomized
    response and 0 otherwise. This is exact when every report is an independent draw
    from the clients' distribution (i.i.d. clients, server-fixed counts
    :math:`c_j = np_j`) and ``b_send = 1``; for a *fixed* population see
    :func:`finite_population_variance` (server design) and
    :func:`client_random_variance` (client design), and for ``b_send > 1`` it ignores the
    covariance of bits sent by the same client (the chapter shows it can go either way).

    Parameters
    ----------
    bit_means : array_like, shape (b,)
        :math:`\bar x^{(j)} \in [0, 1]`.
    probs : array_like, shape (b,)
        :math:`p_j \ge 0`, summing to 1; :math:`p_j = 0` is allowed only for bits with
        :math:`\bar x^{(j)}(1-\bar x^{(j)}) = 0` and no DP.
    n : int
        Number of clients, >= 1.

    Examples
    --------
    >>> estimator_variance([0.5, 0.5], [0.5, 0.5], 100)   # (0.25/0.5 + 1/0.5)/100
    0.025
    """
    m = check_array("bit_means", bit_means, ndim=1, low=0.0, high=1.0, min_size=1)
    p = _check_probs(probs, m.size)
    n_ = check_int("n", n, low=1)
    k = check_int("b_send", b_send, low=1, high=m.size)
    v = m * (1.0 - m) + _rr_noise(_check_epsilon(epsilon))
    if np.any((p == 0) & (v > 0)):
        bad = int(np.flatnonzero((p == 0) & (v > 0))[0])
        raise ValueError(f"probs[{bad}] = 0 for a non-constant (or noisy) bit: the estimator is biased there")
    safe = np.where(p > 0, p, 1.0)
    return float(np.sum(np.where(p > 0, 4.0 ** np.arange(m.size) * v / safe, 0.0)) / (n_ * k))


def finite_population_variance(values, counts, *, b: int) -> float:
    r"""Exact variance of server-assigned bit pushing for a *fixed* population.

    With :math:`c_j` clients (a uniformly random partition of the ``n`` clients) reporting
    bit ``j``, each bit mean is a sample mean without replacement and samples of
    different bits are disjoint; summing the finite-population variances and the
    (negative) covariances :math:`-\sigma_{jk}/(n-1)` of disjoint samples gives

    .. math:: \mathbb V[\hat x] = \frac{n}{n-1}\sum_{j\in S} \frac{4^j\,\bar x^{(j)}(1-\bar x^{(j)})}{c_j}
              - \frac{\sigma_S^2}{n-1},

    where :math:`S` is the set of bits with :math:`c_j > 0` and :math:`\sigma_S^2` the
    population variance (divisor n) of :math:`\sum_{j\in S} 2^j x^{(j)}` (all of
    :math:`x` when every bit is reported). With :math:`c_j = n p_j > 0` this is
    :math:`(\sum_j \beta_j/p_j - \sigma^2)/(n-1)`, smaller than Lemma 1's
    :math:`\sum_j\beta_j/p_j / n`. Bits with no report also cause a bias, see
    :func:`finite_population_mse`. (Derived in the bit-pushing chapter.)

    Raises
    ------
    ValueError
        If the counts do not sum to n (one bit per client) or n < 2.

    Examples
    --------
    >>> finite_population_variance([0, 1, 2, 3], [2, 2], b=2)   # 4/3 (0.25/2 + 1/2) - 1.25/3
    0.4166666666666666
    """
    b_ = _check_b(b)
    x = _check_values(values, b_)
    c = check_array("counts", counts, ndim=1, shape=(b_,), integer=True, low=0)
    n = x.size
    if n < 2 or int(c.sum()) != n:
        raise ValueError(f"counts must sum to n = {n} >= 2 (one bit per client); got sum {int(c.sum())}")
    m = bit_means(x, b=b_)
    v = m * (1.0 - m)
    used = c > 0
    safe = np.where(used, c, 1)
    lead = np.sum(np.where(used, 4.0 ** np.arange(b_) * v / safe, 0.0))
    mask = int(np.sum(np.left_shift(1, np.flatnonzero(used)))) if used.any() else 0
    part = (x & mask).astype(float)
    return float(max(n / (n - 1) * lead - np.var(part) / (n - 1), 0.0))


def finite_population_mse(values, counts, *, b: int) -> float:
    r"""Exact mean squared error of server-assigned bit pushing for a fixed population.

    :func:`finite_population_variance` plus the squared bias
    :math:`\bigl(\sum_{j:\,c_j=0} 2^j\bar x^{(j)}\bigr)^2` of the bits that get no report
    (their mean is taken as 0).

    Examples
    --------
    >>> finite_population_mse([1, 3], [0, 2], b=2)   # bit 0 never reported: bias -1
    1.0
    """
    var = finite_population_variance(values, counts, b=b)
    c = np.asarray(counts)
    m = bit_means(values, b=b)
    bias = float(np.sum(np.where(c == 0, np.exp2(np.arange(m.size)) * m, 0.0)))
    return var + bias**2


def _client_random_parts(values, probs, b):
    """Validated pieces shared by :func:`client_random_bias` and :func:`client_random_variance`."""
    b_ = _check_b(b)
    x = _check_values(values, b_)
    p = _check_probs(probs, b_)
    n = x.size
    if n < 2:
        raise ValueError(f"values must hold n >= 2 clients; got n = {n}")
    bits = ((x[:, None] >> np.arange(b_)) & 1).astype(float)
    mu = bits.mean(axis=0)
    # P(c_j = 0) = (1 - p_j)^n, computed in log space
    with np.errstate(divide="ignore"):
        q0 = np.exp(n * np.log1p(-np.minimum(p, 1.0)))
    return b_, x, p, n, bits, mu, q0


def client_random_bias(values, probs, *, b: int) -> float:
    r"""Exact bias of *client-random* bit pushing for a fixed population.

    Every client draws its bit independently from ``probs``, so bit ``j`` receives
    :math:`c_j\sim\mathrm{Bin}(n, p_j)` reports and gets none with probability
    :math:`(1-p_j)^n`; such a bit is estimated by 0. Given the counts, the clients are
    an exchangeable random partition, so

    .. math:: \mathbb E[\hat x] - \bar x = -\sum_j 2^j\,\bar x^{(j)}\,(1-p_j)^n .

    The server (QMC) design has no bias as long as every :math:`c_j > 0`. (Derived in
    the bit-pushing chapter, section on server versus client randomness.)

    Examples
    --------
    >>> client_random_bias([1, 3], [0.5, 0.5], b=2)   # -(1 * 1 + 2 * 0.5) / 4
    -0.5
    """
    _, _, p, n, _, mu, q0 = _client_random_parts(values, probs, b)
    return float(-np.sum(np.exp2(np.arange(p.size)) * mu * q0))


def client_random_variance(values, probs, *, b: int) -> float:
    r"""Exact variance of *client-random* bit pushing for a fixed population.

    With :math:`I_j = [c_j > 0]`, :math:`c_j\sim\mathrm{Bin}(n, p_j)` (multinomial jointly)
    and :math:`\sigma_{jk}` the population covariance of bits ``j`` and ``k``
    (divisor ``n``), conditioning on the counts and using
    :func:`finite_population_variance` given them gives

    .. math:: \mathbb V[\hat x] ={}& \frac{n}{n-1}\sum_j \beta_j\,
              \mathbb E\Bigl[\frac{I_j}{c_j}\Bigr]
              - \frac{1}{n-1}\sum_{j,k} 2^{j+k}\sigma_{jk}\Pr[I_jI_k = 1] \\
              &+ \sum_{j,k} 2^{j+k}\,\bar x^{(j)}\bar x^{(k)}\operatorname{Cov}(I_j, I_k),

    with :math:`\Pr[I_jI_k=1] = 1-(1-p_j)^n-(1-p_k)^n+(1-p_j-p_k)^n` for
    :math:`j\ne k`. :math:`\mathbb E[I_j/c_j] = \sum_{k\ge1}\Pr[c_j=k]/k` is summed in log
    space over the binomial's bulk (±40 standard deviations). To second order,
    :math:`\mathbb E[1/c_j]\approx \frac{1}{np_j} + \frac{1-p_j}{n^2p_j^2}`, so the
    client-random design exceeds the server (QMC) design of
    :func:`finite_population_variance` by about
    :math:`\sum_j\beta_j(1-p_j)/(n^2p_j^2)`.

    Examples
    --------
    >>> v = client_random_variance(np.arange(16).repeat(50), weighted_probabilities(4, 1.0), b=4)
    >>> v > finite_population_variance(np.arange(16).repeat(50), qmc_counts(weighted_probabilities(4, 1.0), 800), b=4)
    True
    """
    from scipy.special import logsumexp
    from scipy.stats import binom

    b_, _, p, n, bits, mu, q0 = _client_random_parts(values, probs, b)
    cov = bits.T @ bits / n - np.outer(mu, mu)  # sigma_jk, divisor n
    beta = 4.0 ** np.arange(b_) * np.diag(cov)
    inv = np.zeros(b_)  # E[I_j / c_j]
    for j in range(b_):
        if p[j] == 0.0:
            continue
        mean, sd = n * p[j], math.sqrt(n * p[j] * (1.0 - p[j]))
        lo = max(1, int(math.floor(mean - 40.0 * sd - 10.0)))
        hi = min(n, int(math.ceil(mean + 40.0 * sd + 10.0)))
        k = np.arange(lo, hi + 1)
        inv[j] = float(np.exp(logsumexp(binom.logpmf(k, n, p[j]) - np.log(k))))
    both = np.minimum(p[:, None] + p[None, :], 1.0)
    with np.errstate(divide="ignore"):
        q_both = np.exp(n * np.log1p(-both))  # P(c_j = 0 and c_k = 0)
    p_both = 1.0 - q0[:, None] - q0[None, :] + q_both
    np.fill_diagonal(p_both, 1.0 - q0)
    cov_i = p_both - np.outer(1.0 - q0, 1.0 - q0)
    w = np.exp2(np.arange(b_))
    ww = np.outer(w, w)
    var = (
        n / (n - 1) * float(np.sum(beta * inv))
        - float(np.sum(ww * cov * p_both)) / (n - 1)
        + float(np.sum(ww * np.outer(mu, mu) * cov_i))
    )
    return float(max(var, 0.0))


def optimal_probabilities(bit_means, *, epsilon: float | None = None) -> np.ndarray:
    r"""Variance-minimising sampling probabilities (Cormode & Markov 2021, Lemma 3).

    .. math:: p_j = \frac{\sqrt{\beta_j}}{\sum_k \sqrt{\beta_k}},\qquad
              \beta_j = 4^j\bigl(\bar x^{(j)}(1-\bar x^{(j)}) + v_\varepsilon\bigr),

    the minimiser of :func:`estimator_variance` on the probability simplex
    (:math:`v_\varepsilon = 0` without DP). Computed as
    :math:`2^{j-j_{\max}}\sqrt{\cdot}` so that :math:`4^j` never overflows. If every
    :math:`\beta_j = 0` (all clients hold the same value) any allocation is exact and the
    uniform one is returned.

    Examples
    --------
    >>> optimal_probabilities([0.5, 0.5]).round(4).tolist()   # sqrt(beta) = 0.5, 1
    [0.3333, 0.6667]
    """
    m = check_array("bit_means", bit_means, ndim=1, low=0.0, high=1.0, min_size=1)
    v = m * (1.0 - m) + _rr_noise(_check_epsilon(epsilon))
    w = np.exp2(np.arange(m.size) - (m.size - 1)) * np.sqrt(v)
    if w.sum() == 0:
        return np.full(m.size, 1.0 / m.size)
    return w / w.sum()


# ---------------------------------------------------------------------------
# signed values, variance, moments, geometric mean (Sec. 3.4)
# ---------------------------------------------------------------------------


def signed_mean_shift(values, *, b: int, shift: int, alpha: float = 1.0, epsilon=None, rng=None) -> float:
    r"""Mean of signed integers by *additive shifting* (Cormode & Markov 2021, Sec. 3.4).

    Each client pushes bits of :math:`x_i + C` (which must lie in :math:`[0, 2^b-1]`) and
    the server subtracts :math:`C`: :math:`\hat x = \widehat{x + C} - C`.

    Examples
    --------
    >>> round(signed_mean_shift(np.arange(-50, 50).repeat(100), b=8, shift=64, rng=0), 1)   # true -0.5
    -1.6
    """
    b_ = _check_b(b)
    x = check_array("values", values, ndim=1, integer=True, min_size=1)
    c = check_int("shift", shift, low=0, high=2**b_ - 1)
    if x.min() + c < 0 or x.max() + c >= 2**b_:
        raise ValueError(
            f"values + shift must lie in [0, 2**b - 1] = [0, {2**b_ - 1}]; got range [{x.min() + c}, {x.max() + c}]"
        )
    return bit_push(x + c, b=b_, alpha=alpha, epsilon=epsilon, rng=rng).estimate - c


def signed_mean_split(values, *, b: int, alpha: float = 1.0, epsilon=None, rng=None) -> float:
    r"""Mean of signed integers by *bit-splitting* (Cormode & Markov 2021, Sec. 3.4).

    With magnitude bits :math:`|x|^{(j)}` (:math:`|x_i| \le 2^b-1`), each client has the
    :math:`2b` derived bits :math:`u^{(j)} = [x\ge 0]\,|x|^{(j)}` and
    :math:`w^{(j)} = [x<0]\,|x|^{(j)}`; one of them is pushed with probabilities
    :math:`\propto 2^{\alpha j}` on each half, and
    :math:`\hat x = \sum_j 2^j(\hat u^{(j)} - \hat w^{(j)})`. Implemented by pushing the
    :math:`2b`-bit code :math:`u + 2^b w` with matching probabilities.

    Examples
    --------
    >>> round(signed_mean_split(np.arange(-50, 50).repeat(100), b=6, rng=0), 1)   # true -0.5
    -0.8
    """
    b_ = check_int("b", b, low=1, high=MAX_BITS // 2)
    x = check_array("values", values, ndim=1, integer=True, min_size=1)
    if np.abs(x).max() >= 2**b_:
        raise ValueError(f"|values| must be at most 2**b - 1 = {2**b_ - 1}; got {np.abs(x).max()}")
    code = np.where(x >= 0, x, (-x) << b_)
    half = weighted_probabilities(b_, alpha)
    res = bit_push(code, b=2 * b_, probs=np.concatenate([half, half]) / 2.0, epsilon=epsilon, rng=rng)
    w = np.exp2(np.arange(b_))
    return float(np.sum(w * res.means[:b_]) - np.sum(w * res.means[b_:]))


def _stochastic_round(z: np.ndarray, frac_bits: int, gen) -> np.ndarray:
    """Unbiased rounding of z * 2^frac_bits to an integer (floor plus a Bernoulli of the remainder)."""
    s = z * 2.0**frac_bits
    f = np.floor(s)
    return (f + (gen.random(s.shape) < (s - f))).astype(np.int64)


def _bits_for(maxval: float) -> int:
    return max(1, int(math.floor(math.log2(maxval))) + 1) if maxval >= 1 else 1


def variance_estimate(
    values,
    *,
    b: int,
    method: str = "centered",
    split: float = 0.5,
    frac_bits: int = 0,
    alpha: float = 1.0,
    adaptive: bool = False,
    rng=None,
) -> float:
    r"""Variance of the clients' values by bit pushing (Cormode & Markov 2021, Sec. 3.4, Lemma 5).

    A random ``split`` fraction of clients estimates :math:`\hat x` (bit pushing of
    :math:`x`); the others estimate the mean of a derived value:

    * ``method="centered"`` (Case 1): :math:`z_i = (x_i - \hat x)^2`, so
      :math:`\mathbb E\hat z = \sigma^2 + \mathbb V[\hat x]` (biased up by the variance of
      the first-phase mean);
    * ``method="raw"`` (Case 2): :math:`y_i = x_i^2` (``2b`` bits), and
      :math:`\hat\sigma^2 = \hat y - \hat x^2`, biased down by :math:`\mathbb V[\hat x]`.

    Derived values are put on a fixed-point grid with ``frac_bits`` fractional bits by
    unbiased stochastic rounding; bit depth is chosen from the known range ``b``.
    ``adaptive=True`` uses :func:`adaptive_bit_push` for every mean.

    Examples
    --------
    >>> x = np.random.default_rng(0).integers(0, 64, 20000)
    >>> round(variance_estimate(x, b=6, rng=1) / float(np.var(x)), 1)
    1.0
    """
    adaptive = check_bool("adaptive", adaptive)
    b_ = check_int("b", b, low=1, high=MAX_BITS // 2 - 1)
    x = _check_values(values, b_)
    check_choice("method", method, {"centered", "raw"})
    sp_ = check_real("split", split, low=0.0, high=1.0, low_open=True, high_open=True)
    fb = check_int("frac_bits", frac_bits, low=0, high=16)
    gen = as_generator(rng)
    n = x.size
    n1 = int(round(sp_ * n))
    if n1 < 1 or n1 >= n:
        raise ValueError(f"split * n must leave clients in both phases; got split={sp_}, n={n}")
    perm = gen.permutation(n)
    x1, x2 = x[perm[:n1]], x[perm[n1:]]

    def push(v, nb):
        if adaptive:
            return adaptive_bit_push(v, b=nb, alpha=alpha, rng=gen).estimate
        return bit_push(v, b=nb, alpha=alpha, rng=gen).estimate

    xhat = push(x1, b_)
    if method == "centered":
        hi = float(2**b_ - 1)
        zmax = max(xhat, hi - xhat, 0.0) ** 2 + 1.0
        nb = _bits_for(zmax * 2.0**fb) + 1
        if nb > MAX_BITS:
            raise ValueError("b plus frac_bits too large for the derived squares")
        z = _stochastic_round((x2 - xhat) ** 2, fb, gen)
        return push(z, nb) / 2.0**fb
    y = x2.astype(np.int64) ** 2
    return push(y, 2 * b_) - xhat**2


def moment_estimate(values, *, b: int, k: int, alpha: float = 1.0, adaptive: bool = False, rng=None) -> float:
    r"""k-th raw moment :math:`\frac1n\sum_i x_i^k` by pushing bits of :math:`x^k` (``k*b`` bits).

    Examples
    --------
    >>> x = np.arange(16)
    >>> round(moment_estimate(x.repeat(500), b=4, k=2, rng=0) / float(np.mean(x**2.0)), 2)
    0.99
    """
    adaptive = check_bool("adaptive", adaptive)
    b_ = _check_b(b)
    k_ = check_int("k", k, low=1)
    if k_ * b_ > MAX_BITS:
        raise ValueError(f"k * b must be at most {MAX_BITS}; got {k_ * b_}")
    x = _check_values(values, b_)
    y = x.astype(np.int64) ** k_
    f = adaptive_bit_push if adaptive else bit_push
    return f(y, b=k_ * b_, alpha=alpha, rng=rng).estimate


def geometric_mean_estimate(values, *, frac_bits: int = 8, alpha: float = 1.0, rng=None) -> float:
    r"""Geometric mean :math:`\exp(\frac1n\sum\ln x_i)` via bit pushing of fixed-point logarithms.

    Clients compute :math:`\ell_i = \log_2 x_i` (values must be positive integers), put it
    on a grid with ``frac_bits`` fractional bits by unbiased stochastic rounding, and
    push its bits; the server returns :math:`2^{\hat\ell}` (Sec. 3.4, "products and
    geometric means"). :math:`2^{\hat\ell}` is slightly biased (Jensen) but consistent.

    Examples
    --------
    >>> x = np.random.default_rng(3).integers(1, 1000, 20000)
    >>> g = float(np.exp(np.mean(np.log(x))))
    >>> abs(geometric_mean_estimate(x, rng=0) / g - 1) < 0.1
    True
    """
    x = check_array("values", values, ndim=1, integer=True, min_size=1, low=1)
    if x.max() >= 2**MAX_BITS:
        raise ValueError("values too large")
    fb = check_int("frac_bits", frac_bits, low=0, high=40)
    gen = as_generator(rng)
    ell = _stochastic_round(np.log2(x.astype(float)), fb, gen)
    nb = _bits_for(float(ell.max())) if ell.max() > 0 else 1
    est = bit_push(ell, b=nb, alpha=alpha, rng=gen).estimate
    return float(2.0 ** (est / 2.0**fb))


# ---------------------------------------------------------------------------
# baselines at the same epsilon (Sec. 2 and 4)
# ---------------------------------------------------------------------------


def _check_unit(values, upper) -> tuple[np.ndarray, float]:
    u = check_scale("upper", upper)
    x = check_array("values", values, ndim=1, min_size=1, low=0.0, high=u)
    return x / u, u


def laplace_mean(values, *, upper: float, epsilon: float, rng=None) -> float:
    r"""Local Laplace baseline: each client sends :math:`x_i + \mathrm{Lap}(U/\varepsilon)`.

    Values lie in :math:`[0, U]` (``upper``), so the local sensitivity is :math:`U`; the
    server averages. Noise from :func:`fedfreq.baselines.laplace_mechanism`; the mean's
    variance is :math:`2U^2/(n\varepsilon^2)`.

    Examples
    --------
    >>> abs(laplace_mean(np.full(100000, 5.0), upper=10, epsilon=1.0, rng=0) - 5) < 0.2
    True
    """
    x, u = _check_unit(values, upper)
    eps = check_epsilon("epsilon", epsilon)
    return float(np.mean(laplace_mechanism(x * u, sensitivity=u, epsilon=eps, rng=rng)))


def randomized_rounding_mean(values, *, upper: float, epsilon: float | None = None, rng=None) -> float:
    r"""Randomized rounding + randomized response (Duchi et al.; Cormode & Markov 2021, Sec. 2).

    Client ``i`` sends the bit :math:`B_i \sim \mathrm{Bernoulli}(x_i/U)`, through
    randomized response at ``epsilon`` if given; the server debiases the count with
    :func:`fedfreq.baselines.rr_debias_count` and returns :math:`U\,\hat c/n`.
    Per-client variance :math:`U^2(\mu_i(1-\mu_i) + v_\varepsilon)` with :math:`\mu_i = x_i/U`.

    Examples
    --------
    >>> abs(randomized_rounding_mean(np.full(100000, 3.0), upper=10, rng=0) - 3) < 0.1
    True
    """
    x, u = _check_unit(values, upper)
    eps = _check_epsilon(epsilon)
    gen = as_generator(rng)
    bits = (gen.random(x.size) < x).astype(np.int64)
    if eps is None:
        return float(u * bits.mean())
    rep = randomized_response(bits, epsilon=eps, rng=gen)
    return float(u * rr_debias_count(rep, epsilon=eps) / x.size)


def piecewise_variance(t, epsilon: float) -> float | np.ndarray:
    r"""Variance of one piecewise-mechanism report for input :math:`t\in[-1,1]` (Wang et al. 2019, Lemma 1).

    .. math:: \frac{t^2}{e^{\varepsilon/2}-1} + \frac{e^{\varepsilon/2}+3}{3(e^{\varepsilon/2}-1)^2}.

    Examples
    --------
    >>> round(piecewise_variance(0.0, 2 * math.log(3.0)), 6)   # (3+3)/(3*4)
    0.5
    """
    tt = check_array("t", t, low=-1.0, high=1.0)
    eps = check_epsilon("epsilon", epsilon, high=_MAX_PIECEWISE_EPSILON, reason=_EXP_LIMIT)
    e = math.exp(eps / 2.0)
    out = tt**2 / (e - 1.0) + (e + 3.0) / (3.0 * (e - 1.0) ** 2)
    return float(out) if out.ndim == 0 else out


def piecewise_mean(values, *, upper: float, epsilon: float, rng=None) -> float:
    r"""Piecewise mechanism of Wang et al. (ICDE 2019), the "piecewise" baseline of Cormode & Markov 2021.

    Values are mapped to :math:`t = 2x/U - 1 \in [-1, 1]`. With
    :math:`C = (e^{\varepsilon/2}+1)/(e^{\varepsilon/2}-1)`,
    :math:`\ell(t) = \frac{C+1}{2}t - \frac{C-1}{2}` and :math:`r(t) = \ell(t) + C - 1`, the
    report is uniform on :math:`[\ell, r]` with probability
    :math:`e^{\varepsilon/2}/(e^{\varepsilon/2}+1)` and uniform on
    :math:`[-C,\ell)\cup(r, C]` otherwise; its density ratio is at most :math:`e^\varepsilon`
    and it is unbiased for :math:`t`. The server averages and maps back.

    Examples
    --------
    >>> abs(piecewise_mean(np.full(200000, 7.0), upper=10, epsilon=2.0, rng=0) - 7) < 0.1
    True
    """
    x, u = _check_unit(values, upper)
    eps = check_epsilon("epsilon", epsilon, high=_MAX_PIECEWISE_EPSILON, reason=_EXP_LIMIT)
    gen = as_generator(rng)
    t = 2.0 * x - 1.0
    e = math.exp(eps / 2.0)
    c = (e + 1.0) / (e - 1.0)
    left = (c + 1.0) / 2.0 * t - (c - 1.0) / 2.0
    right = left + c - 1.0
    inner = gen.random(t.size) < e / (e + 1.0)
    a = gen.random(t.size)
    central = left + a * (c - 1.0)
    w = a * (c + 1.0)  # total outer length 2C - (C - 1) = C + 1
    outer = np.where(w < left + c, -c + w, right + (w - (left + c)))
    rep = np.where(inner, central, outer)
    return float(u * (np.mean(rep) + 1.0) / 2.0)


def dithering_mean(values, *, upper: float, epsilon: float | None = None, rng=None) -> float:
    r"""Subtractive dithering (Ben-Basat et al. 2020), with randomized response (Cormode & Markov 2021, Sec. 2).

    Client ``i`` draws :math:`h_i \sim U[0,1]` and sends :math:`B_i = [x_i/U \ge h_i]`
    (through randomized response if ``epsilon`` is given, debiased at the server); the
    server estimates :math:`x_i/U` by :math:`\tilde B_i + h_i - \tfrac12`. Without DP each
    client's error has variance exactly :math:`1/12` whatever :math:`x_i`
    (:math:`\mathrm{Var}[B+h] = \mu(1-\mu) + \tfrac1{12} - \mu(1-\mu)`); randomized response
    adds :math:`v_\varepsilon`.

    Examples
    --------
    >>> abs(dithering_mean(np.full(100000, 4.0), upper=10, rng=0) - 4) < 0.05
    True
    """
    x, u = _check_unit(values, upper)
    eps = _check_epsilon(epsilon)
    gen = as_generator(rng)
    h = gen.random(x.size)
    bits = (x >= h).astype(np.int64)
    if eps is None:
        tilde = bits.astype(float)
    else:
        rep = randomized_response(bits, epsilon=eps, rng=gen)
        tilde = _debias_means(rep.astype(float), np.ones(x.size, dtype=np.int64), eps)
    return float(u * np.mean(tilde + h - 0.5))


# ---------------------------------------------------------------------------
# synthetic data of Sec. 4.1
# ---------------------------------------------------------------------------


def synthetic_integers(n: int, *, distribution: str, b: int, rng=None, **params) -> np.ndarray:
    r"""Integer client values for the experiments of Cormode & Markov 2021, Sec. 4.1.

    The paper draws values "from Normal, uniform and exponential distributions"; we
    round each draw to the nearest integer and **redraw** any value outside
    :math:`[0, 2^b-1]` (truncation by rejection, so that the bit depth is respected; for
    the paper's Normal(350, 50) with ``b = 10`` no redraw ever happens in practice).

    Parameters
    ----------
    distribution : {"normal", "uniform", "exponential"}
        ``normal``: ``mean``, ``sd``; ``uniform``: ``low``, ``high``; ``exponential``:
        ``scale``.

    Examples
    --------
    >>> synthetic_integers(5, distribution="normal", b=10, mean=350, sd=50, rng=0).tolist()
    [356, 343, 382, 355, 323]
    """
    n_ = check_int("n", n, low=1, high=10**9, reason="the values are held in memory")
    b_ = _check_b(b)
    check_choice("distribution", distribution, {"normal", "uniform", "exponential"})
    gen = as_generator(rng)
    hi = 2**b_ - 1
    if distribution == "normal":
        need = {"mean", "sd"}
    elif distribution == "uniform":
        need = {"low", "high"}
    else:
        need = {"scale"}
    if set(params) != need:
        raise ValueError(
            f"distribution {distribution!r} needs exactly the parameters {sorted(need)}; got {sorted(params)}"
        )
    if distribution == "normal":
        mu = check_real("mean", params["mean"])
        sd = check_real("sd", params["sd"], low=0.0, low_open=True)
        draw = lambda k: gen.normal(mu, sd, k)  # noqa: E731
    elif distribution == "uniform":
        lo = check_real("low", params["low"], low=0.0, high=hi)
        up = check_real("high", params["high"], low=lo, high=hi, low_open=True)
        draw = lambda k: gen.uniform(lo, up, k)  # noqa: E731
    else:
        sc = check_real("scale", params["scale"], low=0.0, low_open=True)
        draw = lambda k: gen.exponential(sc, k)  # noqa: E731
    out = np.rint(draw(n_))
    for _ in range(1000):
        bad = (out < 0) | (out > hi)
        if not bad.any():
            return out.astype(np.int64)
        out[bad] = np.rint(draw(int(bad.sum())))
    raise ValueError(
        f"the {distribution} distribution with parameters {params} puts almost no mass in "
        f"[0, 2**b - 1] = [0, {hi:g}]; choose other parameters"
    )
