r"""Bounding user contributions for user-level private histograms (Liu et al. 2023).

Liu et al. 2023 {Liu, Suresh, Zhu, Kairouz, Gruteser, ICML 2023} asks how much of each
user's data to keep when a histogram :math:`\overline N = \sum_i N_i` of ``n``
users' item counts :math:`N_i \in \mathbb Z_{\ge 0}^d` is released under
user-level differential privacy. Everything the three chapters on that paper
use lives here:

* clipping: :func:`clip_l1`, :func:`fedfreq.cpbm.clip_l2` (Sec. 4) and :func:`rand_clip`
  (Sec. 5, sampling :math:`\min(\|N\|_1, C)` items without replacement), and the column
  sums Algorithms 1 and 3 need without the clipped matrix (:func:`clip_l1_sum`,
  :func:`rand_clip_sum`);
* bounded domains: Algorithm 1 (:func:`bounded_histogram`), the calibration of
  Lemma 4.1 (:func:`lemma41_sigma`), the exact expected :math:`\ell_1` losses
  (:func:`laplace_expected_loss`, :func:`gaussian_expected_loss`), the convex
  surrogate :math:`G(C)` (:func:`threshold_objective`), the thresholds of
  Lemma 4.2 and Theorem 4.3 (:func:`laplace_threshold`,
  :func:`gaussian_threshold`), a search for the least loss to check them against
  (:func:`min_loss`), and their private versions
  (:func:`private_threshold_sgd` for Corollary 4.4, :func:`output_perturbation_threshold`
  for Algorithm 2 / Corollary 4.5);
* unbounded domains: Algorithm 3 (:func:`unbounded_histogram`), its threshold
  (:func:`unbounded_threshold`), an exact audit of its δ
  (:func:`unbounded_exact_delta`), its exact conditional error
  (:func:`unbounded_expected_error`), the surrogate :math:`V(C)`
  (:func:`surrogate_error`) and Algorithm 4 (:func:`select_threshold_exponential`);
* debiasing: :math:`h(\lambda) = \mathbb E[\min(\mathrm{Poi}(\lambda), C)]`
  (:func:`clipped_poisson_mean`), its derivative and inverse, γ_C
  (:func:`gamma_c`) and Algorithm 5 (:func:`debiased_count`);
* baselines: quantiles of the users' norms (:func:`norm_quantile`), the
  ``M``-th largest ℓ2 norm (:func:`m_quantile_threshold`, Liu et al.'s (2023)
  "M-quantile" after Amin et al.), the ℓ2-error quantile in the manner of
  Huang et al. (:func:`l2_quantile_threshold`), and private quantiles by noisy
  gradient descent as the paper describes (:func:`private_quantile_gd`, after
  Andrew et al.) or by the exponential mechanism (:func:`private_quantile`).

Histograms are dense ``(n, d)`` arrays of non-negative integers (one row per
user). The samplers use numpy floating point; they simulate the mechanisms'
output distributions and are not side-channel-safe DP implementations.

Neighbouring relation. Liu et al.'s (2023) Definition 3.1 uses *replacement* of one
user. The noise scales of Algorithm 1 (``Lap(C/ε)``, ``N(0, C²σ²)``) and of
Algorithm 3 are those of *add/remove* neighbours; functions state which
relation their guarantee uses, and :func:`clip_sensitivity` gives both.

The submodules, one idea each:

* ``fedfreq.contribution.clipping``: clipping one user's histogram;
* ``fedfreq.contribution.bounded``: bounded domains: Algorithm 1 and its thresholds;
* ``fedfreq.contribution.private_threshold``: private thresholds and quantiles;
* ``fedfreq.contribution.baselines``: non-private threshold baselines;
* ``fedfreq.contribution.unbounded``: unbounded domains: Algorithms 3 and 4;
* ``fedfreq.contribution.debiasing``: debiasing under Poisson data: Algorithm 5.

Every public name is importable from ``fedfreq.contribution`` itself.
"""

from __future__ import annotations

from .baselines import (
    chi_mean,
    l2_quantile_rank,
    l2_quantile_threshold,
    m_quantile_threshold,
    norm_quantile,
)
from .bounded import (
    bounded_histogram,
    gaussian_expected_loss,
    gaussian_threshold,
    laplace_expected_loss,
    laplace_surrogate,
    laplace_threshold,
    lemma41_sigma,
    min_loss,
    regularized_threshold,
    threshold_objective,
)
from .clipping import (
    clip_l1,
    clip_l1_sum,
    clip_sensitivity,
    rand_clip,
    rand_clip_sum,
)
from .debiasing import (
    clipped_poisson_mean,
    clipped_poisson_mean_derivative,
    clipped_poisson_mean_inverse,
    debiased_count,
    gamma_c,
)
from .private_threshold import (
    output_perturbation_threshold,
    private_quantile,
    private_quantile_gd,
    private_threshold_sgd,
)
from .unbounded import (
    exponential_mechanism_probabilities,
    select_threshold_exponential,
    surrogate_error,
    theorem52_bounds,
    unbounded_exact_delta,
    unbounded_expected_error,
    unbounded_histogram,
    unbounded_threshold,
)

__all__ = [
    "clip_l1",
    "clip_l1_sum",
    "rand_clip",
    "rand_clip_sum",
    "clip_sensitivity",
    "lemma41_sigma",
    "bounded_histogram",
    "laplace_expected_loss",
    "gaussian_expected_loss",
    "laplace_surrogate",
    "threshold_objective",
    "laplace_threshold",
    "gaussian_threshold",
    "regularized_threshold",
    "min_loss",
    "output_perturbation_threshold",
    "private_threshold_sgd",
    "norm_quantile",
    "m_quantile_threshold",
    "private_quantile",
    "chi_mean",
    "l2_quantile_rank",
    "l2_quantile_threshold",
    "private_quantile_gd",
    "unbounded_threshold",
    "unbounded_histogram",
    "unbounded_exact_delta",
    "unbounded_expected_error",
    "surrogate_error",
    "theorem52_bounds",
    "exponential_mechanism_probabilities",
    "select_threshold_exponential",
    "clipped_poisson_mean",
    "clipped_poisson_mean_derivative",
    "clipped_poisson_mean_inverse",
    "gamma_c",
    "debiased_count",
]
