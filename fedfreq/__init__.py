"""fedfreq: the companion package of *Private Federated Frequency Estimation*.

Every algorithm, estimator, bound and accountant used in the book lives here once; the
chapter notebooks import it. The package is organised by idea, one module (or
subpackage) each, and the chapters import the modules under fixed aliases
(``from fedfreq import sketch as sk``). Subpackages re-export their public names, so
``fedfreq.accounting.cpbm_rdp`` works as well as
``fedfreq.accounting.cpbm_accountant.cpbm_rdp``.

The top-level namespace is deliberately small: the modules, the stable entry points
that outside checks and readers' scripts call by name (listed in ``__all__``), and the
claim helpers. Everything else is reached through its module.
"""

from __future__ import annotations

from . import (
    accounting,
    audit,
    baselines,
    bitpush,
    claims,
    contribution,
    cpbm,
    datasets,
    deploy,
    display,
    exercises,
    heavy_hitters,
    kashin,
    metrics,
    protocols,
    quantiles,
    sample_threshold,
    scale,
    secagg,
    skellam,
    sketch,
    trust_models,
)
from ._rng import as_generator
from .accounting import cpbm_rdp, rdp_to_dp
from .bitpush import estimator_variance, optimal_probabilities
from .claims import ClaimFailed, check_claim
from .contribution import clipped_poisson_mean, gaussian_threshold, laplace_threshold
from .cpbm import optimal_quantile
from .sample_threshold import delta_exact, delta_simple, delta_theorem
from .sketch import sketch_estimate


def _installed_version() -> str:
    """The version recorded in the package metadata (pyproject.toml is its one source)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fedfreq")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"


#: The version of the package and of the book built with it (from the package metadata).
__version__ = _installed_version()

#: The modules of the package, in the order of the book.
MODULES = (
    "accounting",
    "baselines",
    "cpbm",
    "kashin",
    "secagg",
    "quantiles",
    "protocols",
    "sketch",
    "sample_threshold",
    "heavy_hitters",
    "bitpush",
    "trust_models",
    "skellam",
    "contribution",
    "metrics",
    "datasets",
    "deploy",
    "audit",
    "exercises",
    "claims",
    "display",
    "scale",
)

__all__ = [
    # stable entry points (see the API page)
    "cpbm_rdp",
    "rdp_to_dp",
    "optimal_quantile",
    "delta_theorem",
    "delta_simple",
    "delta_exact",
    "estimator_variance",
    "optimal_probabilities",
    "sketch_estimate",
    "laplace_threshold",
    "gaussian_threshold",
    "clipped_poisson_mean",
    # helpers used by every chapter
    "as_generator",
    "check_claim",
    "ClaimFailed",
    # the modules
    *MODULES,
]
