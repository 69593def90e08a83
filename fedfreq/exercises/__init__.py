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
from .bitpush import check_bitpush_estimator, check_split_encoding
from .contribution import check_clipped_poisson_inverse, check_gaussian_threshold, check_rand_clip
from .cpbm import check_cpbm_decoder, check_optimal_threshold
from .foundations import check_gaussian_budget, check_rr_debias
from .heavy_hitters import check_decomposition
from .protocols import check_multiround_level
from .quantiles import check_dht_decoder
from .sample_threshold import check_omission_estimate
from .sketch import check_hybrid_decoder, check_width_rule

__all__ = [
    "CheckResult",
    "check_rr_debias",
    "check_gaussian_budget",
    "check_cpbm_decoder",
    "check_optimal_threshold",
    "check_dht_decoder",
    "check_multiround_level",
    "check_width_rule",
    "check_hybrid_decoder",
    "check_omission_estimate",
    "check_decomposition",
    "check_bitpush_estimator",
    "check_split_encoding",
    "check_gaussian_threshold",
    "check_rand_clip",
    "check_clipped_poisson_inverse",
]
