r"""Privacy amplification by Poisson sampling, for pure ε-DP mechanisms.

If a mechanism is ε₀-DP with respect to adding or removing one record and it is run
on a Poisson sample of the data (each record kept independently with probability
``rate``), the composition is ε-DP with respect to the whole data with

.. math:: \varepsilon = \log\bigl(1 + \text{rate}\,(e^{\varepsilon_0} - 1)\bigr),

and this is tight (Li, Qardaji & Su 2012; Balle, Barthe & Gaboardi 2018, Thm. 8 for
add/remove neighbours). The inverse gives the ε₀ a sampled mechanism may use for a
target ε on the whole data. The book uses both to compare mechanisms at *equal*
privacy when some of them are calibrated on a sample and others on the population.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_array, check_ndim, check_real

__all__ = ["amplified_epsilon", "epsilon_before_sampling"]


def _args(epsilon, rate) -> tuple[np.ndarray, np.ndarray, bool]:
    scalar = check_ndim("epsilon", epsilon) == 0 and check_ndim("rate", rate) == 0
    if scalar:
        e = np.asarray(check_real("epsilon", epsilon, low=0.0, high=700.0))
        r = np.asarray(check_real("rate", rate, low=0.0, high=1.0, low_open=True))
    else:
        e = check_array("epsilon", epsilon, low=0.0, high=700.0)
        r = check_array("rate", rate, low=0.0, high=1.0, low_open=True)
        e, r = np.broadcast_arrays(e, r)
    return e, r, scalar


def amplified_epsilon(epsilon, rate):
    r"""ε on the whole data of an ``epsilon``-DP mechanism run on a Poisson sample at ``rate``.

    :math:`\log(1 + \text{rate}\,(e^{\varepsilon_0} - 1))`, computed with ``log1p`` and
    ``expm1`` so that small values keep their digits.

    Parameters
    ----------
    epsilon : float or array_like
        ε₀ of the mechanism on the sample, in [0, 700] (e^700 is near the float limit).
    rate : float or array_like
        Poisson sampling probability, in (0, 1]; broadcast against ``epsilon``.

    Examples
    --------
    >>> round(amplified_epsilon(1.0, 0.01), 6)
    0.017037
    >>> amplified_epsilon(2.0, 1.0)
    2.0
    >>> amplified_epsilon(1.0, 0.0)
    Traceback (most recent call last):
    ...
    ValueError: rate must lie in (0, 1]; got 0.0
    """
    e, r, scalar = _args(epsilon, rate)
    out = np.log1p(r * np.expm1(e))
    return float(out) if scalar else out


def epsilon_before_sampling(epsilon, rate):
    r"""The ε₀ that a mechanism run on a Poisson sample at ``rate`` may use for ε on the whole data.

    The inverse of :func:`amplified_epsilon`:
    :math:`\varepsilon_0 = \log(1 + (e^{\varepsilon} - 1)/\text{rate})`.

    Examples
    --------
    >>> e0 = epsilon_before_sampling(0.1, 0.05)
    >>> round(e0, 4), round(amplified_epsilon(e0, 0.05), 12)
    (1.1325, 0.1)
    """
    e, r, scalar = _args(epsilon, rate)
    out = np.log1p(np.expm1(e) / r)
    return float(out) if scalar else out
