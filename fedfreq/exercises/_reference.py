"""Reference attempts that pass the exercise checkers (for the instructor and the tests).

Not part of the public API and not imported by ``fedfreq.exercises``: the checkers'
docstrings, ``help()`` and the API page show how to *call* a checker, never an attempt
that passes it. Each entry of :data:`PASSING` maps a checker's name to the arguments of
one passing call (the attempt first, then keyword arguments), so that the tests can
show every checker still accepts a correct answer after it has been hardened.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from .. import audit, bitpush, contribution, deploy, heavy_hitters, kashin, protocols, sample_threshold, sketch
from .. import cpbm as _cpbm
from .. import quantiles as fq
from ..accounting import DEFAULT_ORDERS, rdp_gaussian, rdp_to_dp


def rr_debias(reports: np.ndarray, epsilon: float) -> float:
    p = math.exp(epsilon) / (1.0 + math.exp(epsilon))
    n = len(reports)
    return float((np.sum(reports) - n * (1.0 - p)) / (2.0 * p - 1.0))


def gaussian_budget(sigma: float, k: int, delta: float) -> float:
    return float(rdp_to_dp(DEFAULT_ORDERS, k * rdp_gaussian(DEFAULT_ORDERS, sigma=sigma), delta)[0])


def cpbm_decoder(s, n, theta, C, m):
    return C / (m * n * theta) * (np.asarray(s, dtype=float) - m * n / 2)


def optimal_threshold(a, D, m, theta):
    return _cpbm.optimal_threshold(a, D=D, m=m, theta=theta)


def rdp_conversion(o, r, d):
    return rdp_to_dp(o, r, d)[0]


def kashin_representation(x, U, eta, nu, iterations):
    return kashin.kashin_representation(x, U, eta=eta, nu=nu, iterations=iterations, exact=False)


def cpbm_mse(X, U, Y, C, theta, m):
    return sum(_cpbm.cpbm_error_terms(X, U, C, theta=theta, m=m, y=Y))


def dht_decoder(n, coeffs):
    return fq.inverse_haar_transform(n / (len(coeffs) + 1), coeffs)


def private_cdf(bins, b, m, theta, rng):
    u = fq.histogram_user_vectors(bins, encoding="dht", b=b)
    sums = fq.cpbm_sum_mechanism(m=m, theta=theta)(u, rng)
    return fq.histogram_prefix_counts(sums, encoding="dht", b=b, n=len(bins)) / len(bins)


def multiround_level(D, m, N, R, theta):
    return _cpbm.optimal_quantile(D=D, m=m, n=N * R, theta=theta)


def tffe_rdp(orders, n, D, b, theta, m, theta_q, m_q, changed):
    rule = "changed" if changed else "all"
    return protocols.tffe_rdp(orders, n=n, D=D, b=b, theta=theta, m=m, theta_q=theta_q, m_q=m_q, rule=rule)


def warmup_rounds(C1, C_star, eta, gamma):
    if C1 == C_star:
        return 0
    step = eta * (gamma if C1 < C_star else 1.0 - gamma)
    return math.ceil(abs(math.log(C_star / C1)) / step)


def online_threshold(S, N, C, eta, gamma, m_q, theta_q):
    above = float(_cpbm.cpbm_decode([S], n=N, theta=theta_q, C=1.0, m=m_q)[0])
    return C * math.exp(-eta * ((1.0 - above) - gamma))


def width_rule(f, tau):
    return sketch.oracle_width(f, tau, constant=8.0)


def hybrid_decoder(S, buckets, signs):
    rows = np.arange(S.shape[1])[:, None]
    return np.median(np.mean(signs * S[:, rows, buckets], axis=0), axis=0)


def smallest_width(f, tau):
    s = np.sort(np.asarray(f, dtype=float))[::-1] ** 2
    tail = np.concatenate([np.cumsum(s[::-1])[::-1], [0.0]])
    for w in range(1, s.size + 1):
        if tail[w] <= tau**2 * w:
            return w
    return s.size


def dp_sketch_sigma(eps, delta, rows, n, k):
    return sketch.dp_sketch_sigma(eps, delta, rows=rows, n=n, participations=k)


def exact_delta(p, eps, tau):
    return sample_threshold.delta_exact(p, eps, tau)


def decomposition(r, b, L):
    return heavy_hitters.range_decomposition(r, branching=b, levels=L)


def optimal_composition(epsilon, delta, levels, total_epsilon):
    return heavy_hitters.optimal_composition_delta(epsilon, delta, levels, total_epsilon)


def fixed_population_variance(values, counts, b):
    return bitpush.finite_population_variance(values, counts, b=b)


def bitpush_estimator(idx, rep, b, eps):
    p = math.exp(eps) / (1 + math.exp(eps))
    total = 0.0
    for j in range(b):
        r = rep[idx == j]
        if r.size:
            total += 2**j * (r.mean() - (1 - p)) / (2 * p - 1)
    return total


def split_encoding(v, b):
    return np.where(v >= 0, v, np.left_shift(-v, b))


def stochastic_rounding(values, frac_bits, rng):
    scaled = np.asarray(values, dtype=float) * 2.0**frac_bits
    low = np.floor(scaled)
    return (low + (rng.random(scaled.shape) < scaled - low)) / 2.0**frac_bits


def gaussian_threshold(l1, l2, d, sigma):
    return contribution.gaussian_threshold(l1, l2, d=d, sigma=sigma)


def rand_clip(h, C, g):
    return contribution.rand_clip(np.asarray(h)[None, :], C, rng=g)[0]


def clipped_poisson_inverse(y, C):
    return contribution.clipped_poisson_mean_inverse(y, C)


def clipped_poisson_mean(lam, C):
    return lam * stats.poisson.cdf(C - 2, lam) + C * stats.poisson.sf(C - 1, lam)


def unbounded_release(hbar, Nbar, C, epsilon, delta, rng):
    t = contribution.unbounded_threshold(C, epsilon=epsilon, delta=delta)
    noisy = hbar + rng.laplace(0.0, C / epsilon, size=hbar.size)
    return np.where((Nbar > 0) & (noisy > t), noisy, 0.0)


def discrete_laplace_sampler(t, size, rng):
    p = 1 - np.exp(-1 / t)
    return rng.geometric(p, size) - rng.geometric(p, size)


def discrete_laplace_delta(t, sensitivity, epsilon):
    k = np.arange(-math.ceil(100 * t) - 60, math.ceil(100 * t) + 61 + sensitivity)
    lp = deploy.discrete_laplace_logpmf(k, t)
    lq = deploy.discrete_laplace_logpmf(k - sensitivity, t)
    return audit.hockey_stick(lp, lq, epsilon)


def hockey_stick(lp, lq, eps):
    return audit.hockey_stick(lp, lq, eps)


def epsilon_lower_bound(k_p, n_p, k_q, n_q, delta, confidence):
    return audit.epsilon_lower_bound(k_p, n_p, k_q, n_q, delta=delta, confidence=confidence)


def gaussian_loss(N, C, sigma):
    return contribution.gaussian_expected_loss(N, C, sigma=sigma)


def output_perturbation(l1, l2, d, sigma, C_max, s, epsilon, epsilon_prime, rng):
    return contribution.output_perturbation_threshold(
        l1, l2, d=d, sigma=sigma, C_max=C_max, s=s, epsilon_prime=epsilon_prime, rng=rng
    )


#: checker name -> (attempt, keyword arguments) of one passing call
PASSING: dict[str, tuple[Any, dict[str, Any]]] = {
    "check_rr_debias": (rr_debias, {}),
    "check_gaussian_budget": (gaussian_budget(3.0, 7, 1e-5), {"sigma": 3.0, "k": 7, "delta": 1e-5}),
    "check_cpbm_decoder": (cpbm_decoder, {}),
    "check_optimal_threshold": (optimal_threshold, {}),
    "check_rdp_conversion": (rdp_conversion, {}),
    "check_kashin_representation": (kashin_representation, {}),
    "check_cpbm_mse": (cpbm_mse, {}),
    "check_dht_decoder": (dht_decoder, {}),
    "check_private_cdf": (private_cdf, {"trials": 200}),
    "check_multiround_level": (multiround_level, {}),
    "check_tffe_rdp": (tffe_rdp, {}),
    "check_warmup_rounds": (warmup_rounds, {}),
    "check_online_threshold": (online_threshold, {}),
    "check_width_rule": (width_rule, {}),
    "check_hybrid_decoder": (hybrid_decoder, {}),
    "check_smallest_width": (smallest_width, {}),
    "check_dp_sketch_sigma": (dp_sketch_sigma, {}),
    "check_exact_delta": (exact_delta, {}),
    "check_decomposition": (decomposition, {}),
    "check_bitpush_estimator": (bitpush_estimator, {"n": 1000, "trials": 100}),
    "check_split_encoding": (split_encoding, {"trials": 60}),
    "check_composition_counterexample": (lambda: (0.05, 1e-9, 100), {}),
    "check_eq1_counterexample": (lambda b: np.arange(2**b), {}),
    "check_optimal_composition": (optimal_composition, {}),
    "check_fixed_population_variance": (fixed_population_variance, {}),
    "check_stochastic_rounding": (stochastic_rounding, {"trials": 100}),
    "check_gaussian_threshold": (gaussian_threshold, {}),
    "check_rand_clip": (rand_clip, {"trials": 500}),
    "check_clipped_poisson_inverse": (clipped_poisson_inverse, {"trials": 40}),
    "check_clipped_poisson_mean": (clipped_poisson_mean, {}),
    "check_unbounded_release": (unbounded_release, {}),
    "check_discrete_laplace_sampler": (discrete_laplace_sampler, {}),
    "check_discrete_laplace_delta": (discrete_laplace_delta, {}),
    "check_hockey_stick": (hockey_stick, {}),
    "check_epsilon_lower_bound": (epsilon_lower_bound, {}),
    "check_gaussian_loss": (gaussian_loss, {}),
    "check_output_perturbation": (output_perturbation, {"trials": 200}),
}


def passing_call(name: str) -> Callable[[], Any]:
    """A thunk running checker ``name`` on its reference attempt."""
    from .. import exercises

    attempt, kwargs = PASSING[name]
    return lambda: getattr(exercises, name)(attempt, **kwargs)
