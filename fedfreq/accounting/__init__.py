"""Privacy accounting: Rényi DP curves, composition, and conversion to (ε, δ)-DP.

This module collects the accounting tools every chapter of the book relies on:

* Rényi-DP (RDP) curves of the textbook mechanisms -- Gaussian, Laplace and
  k-ary randomized response -- as functions of the order α > 1;
* sequential composition of RDP curves (:func:`compose_rdp`);
* the conversion from RDP to (ε, δ)-DP and its inverse (:func:`rdp_to_dp`,
  :func:`delta_for_epsilon`);
* exact divergences between two discrete distributions given by their
  log-probabilities (:func:`renyi_divergence`,
  :func:`hockey_stick_divergence`), used to brute-force privacy guarantees on
  small instances;
* the exact ("analytic") privacy profile of the Gaussian mechanism and its
  calibration (:func:`gaussian_delta`, :func:`gaussian_sigma`), next to the
  classical calibration (:func:`classical_gaussian_sigma`).

Conventions
-----------
``sensitivity`` (Δ) is the largest distance between the query answers on two
neighbouring datasets (ℓ2 for the Gaussian, ℓ1 for the Laplace mechanism); the
neighbouring relation is whatever the caller used to bound Δ. ``sigma`` is the
*absolute* standard deviation of the Gaussian noise (not a noise multiplier):
libraries that use a noise multiplier correspond to ``sigma / sensitivity``.
All arithmetic on probabilities is done in log space.

References
----------
- [M17] I. Mironov. "Rényi Differential Privacy." IEEE CSF 2017, arXiv:1702.07476.
- [CKS20] C. L. Canonne, G. Kamath, T. Steinke. "The Discrete Gaussian for
  Differential Privacy." NeurIPS 2020, arXiv:2004.00010.
- [BBGHS20] B. Balle, G. Barthe, M. Gaboardi, J. Hsu, T. Sato. "Hypothesis
  Testing Interpretations and Rényi Differential Privacy." AISTATS 2020,
  arXiv:2001.05990.
- [BW18] B. Balle, Y.-X. Wang. "Improving the Gaussian Mechanism for
  Differential Privacy: Analytical Calibration and Optimal Denoising."
  ICML 2018, arXiv:1805.06530.
- [DR14] C. Dwork, A. Roth. "The Algorithmic Foundations of Differential
  Privacy." Foundations and Trends in TCS 9(3-4), 2014.

The submodules, one idea each:

* ``fedfreq.accounting.rdp``: RDP curves, composition, RDP → (ε, δ);
* ``fedfreq.accounting.divergences``: exact Rényi and hockey-stick divergences;
* ``fedfreq.accounting.gaussian``: the analytic Gaussian mechanism;
* ``fedfreq.accounting.cpbm_accountant``: the cPBM accountant (Lemma 2);
* ``fedfreq.accounting.discrete``: discrete Laplace and Gaussian;
* ``fedfreq.accounting.sampling``: amplification of pure DP by Poisson sampling.

Every public name is importable from ``fedfreq.accounting`` itself.
"""

from __future__ import annotations

# used directly by a check in the chapter on cPBM (not part of the public API)
from .cpbm_accountant import (
    _log_excess_moment,  # noqa: F401
    cpbm_lemma2_paper_forms,
    cpbm_rdp,
    cpbm_rdp_exact,
    poisson_binomial_logpmf,
)
from .discrete import (
    discrete_gaussian_rho,
    discrete_laplace_epsilon,
)
from .divergences import (
    hockey_stick_divergence,
    renyi_divergence,
)
from .gaussian import (
    classical_gaussian_sigma,
    gaussian_delta,
    gaussian_sigma,
)
from .rdp import (
    DEFAULT_ORDERS,
    compose_rdp,
    delta_for_epsilon,
    rdp_gaussian,
    rdp_laplace,
    rdp_randomized_response,
    rdp_to_dp,
    rdp_zcdp,
)
from .sampling import (
    amplified_epsilon,
    epsilon_before_sampling,
)

__all__ = [
    "DEFAULT_ORDERS",
    "rdp_gaussian",
    "rdp_laplace",
    "rdp_randomized_response",
    "discrete_laplace_epsilon",
    "discrete_gaussian_rho",
    "rdp_zcdp",
    "compose_rdp",
    "rdp_to_dp",
    "delta_for_epsilon",
    "renyi_divergence",
    "hockey_stick_divergence",
    "gaussian_delta",
    "gaussian_sigma",
    "classical_gaussian_sigma",
    "cpbm_rdp",
    "cpbm_lemma2_paper_forms",
    "cpbm_rdp_exact",
    "poisson_binomial_logpmf",
    "amplified_epsilon",
    "epsilon_before_sampling",
]
