"""Self-check functions for the programming exercises, in one place.

Every checker takes the student's attempt (a function, or a number for the exercises
that ask for one), runs an exact or statistical test against the package's reference
implementation, and returns a :class:`CheckResult`: ``passed`` and a message that says
what looks wrong (bias, spread, shape, a failing property) without the expected answer.
A wrong number gets the same message on either side of the answer, so answers cannot be
found by bisection. Checkers are deterministic: they draw from a fixed seed unless
``rng`` is given; each docstring states its trial count and the probability that a
correct attempt fails on a random seed.

The checkers are grouped by chapter topic in submodules; all are importable from
``fedfreq.exercises``.
"""

from __future__ import annotations

from ._result import CheckResult
from .bitpush import (
    check_bitpush_estimator,
    check_eq1_counterexample,
    check_fixed_population_variance,
    check_split_encoding,
    check_stochastic_rounding,
)
from .bounded import check_gaussian_loss, check_output_perturbation
from .contribution import (
    check_clipped_poisson_inverse,
    check_clipped_poisson_mean,
    check_gaussian_threshold,
    check_rand_clip,
    check_unbounded_release,
)
from .cpbm import check_cpbm_decoder, check_cpbm_mse, check_kashin_representation, check_optimal_threshold
from .deploy import (
    check_discrete_laplace_delta,
    check_discrete_laplace_sampler,
    check_epsilon_lower_bound,
    check_hockey_stick,
)
from .foundations import check_gaussian_budget, check_rdp_conversion, check_rr_debias
from .heavy_hitters import check_composition_counterexample, check_decomposition, check_optimal_composition
from .protocols import check_multiround_level, check_online_threshold, check_tffe_rdp, check_warmup_rounds
from .quantiles import check_dht_decoder, check_private_cdf
from .sample_threshold import check_exact_delta, check_omission_estimate
from .sketch import check_dp_sketch_sigma, check_hybrid_decoder, check_smallest_width, check_width_rule

__all__ = [
    "CheckResult",
    "check_rr_debias",
    "check_gaussian_budget",
    "check_cpbm_decoder",
    "check_optimal_threshold",
    "check_rdp_conversion",
    "check_kashin_representation",
    "check_cpbm_mse",
    "check_dht_decoder",
    "check_private_cdf",
    "check_multiround_level",
    "check_tffe_rdp",
    "check_warmup_rounds",
    "check_online_threshold",
    "check_width_rule",
    "check_hybrid_decoder",
    "check_omission_estimate",
    "check_smallest_width",
    "check_dp_sketch_sigma",
    "check_exact_delta",
    "check_decomposition",
    "check_bitpush_estimator",
    "check_split_encoding",
    "check_optimal_composition",
    "check_composition_counterexample",
    "check_fixed_population_variance",
    "check_eq1_counterexample",
    "check_stochastic_rounding",
    "check_gaussian_threshold",
    "check_rand_clip",
    "check_clipped_poisson_inverse",
    "check_clipped_poisson_mean",
    "check_unbounded_release",
    "check_discrete_laplace_sampler",
    "check_discrete_laplace_delta",
    "check_hockey_stick",
    "check_epsilon_lower_bound",
    "check_gaussian_loss",
    "check_output_perturbation",
]
