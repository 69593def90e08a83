"""fedfreq: the companion package of *Private Federated Frequency Estimation*.

Every algorithm, estimator, bound and accountant used in the book lives here
once; the chapter notebooks import it. The public API is flat: every name in a
module's ``__all__`` is importable as ``fedfreq.<name>`` as well as from its module.
"""

from __future__ import annotations

from . import (
    accounting,
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
from .accounting import *  # noqa: F401,F403
from .baselines import *  # noqa: F401,F403
from .bitpush import *  # noqa: F401,F403
from .claims import ClaimFailed, check_claim
from .contribution import *  # noqa: F401,F403
from .cpbm import *  # noqa: F401,F403
from .datasets import *  # noqa: F401,F403
from .deploy import *  # noqa: F401,F403
from .heavy_hitters import *  # noqa: F401,F403
from .kashin import *  # noqa: F401,F403
from .metrics import *  # noqa: F401,F403
from .protocols import *  # noqa: F401,F403
from .quantiles import *  # noqa: F401,F403
from .sample_threshold import *  # noqa: F401,F403
from .secagg import *  # noqa: F401,F403
from .skellam import *  # noqa: F401,F403
from .sketch import *  # noqa: F401,F403
from .trust_models import *  # noqa: F401,F403

__version__ = "0.1.0"

_MODULES = (
    accounting,
    baselines,
    bitpush,
    contribution,
    cpbm,
    datasets,
    deploy,
    heavy_hitters,
    kashin,
    metrics,
    protocols,
    quantiles,
    sample_threshold,
    secagg,
    sketch,
    skellam,
    trust_models,
)


def _public_names() -> list[str]:
    names: list[str] = ["as_generator", "check_claim", "ClaimFailed"]
    owner: dict[str, str] = {}
    for module in _MODULES:
        for name in module.__all__:
            if name in owner:
                raise ImportError(f"fedfreq: {name} is exported by both {owner[name]} and {module.__name__}")
            owner[name] = module.__name__
            names.append(name)
    return names


__all__ = _public_names()
