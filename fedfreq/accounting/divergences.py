"""Exact Rényi and hockey-stick divergences between two discrete distributions given by
their log-probabilities: the tools that brute-force privacy guarantees on small instances.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .._numerics import log1mexp
from .._validation import check_array, check_real
from ._checks import _as_output, _check_orders, _check_pair

__all__ = ["renyi_divergence", "hockey_stick_divergence"]


# exact divergences between discrete distributions
def renyi_divergence(log_p, log_q, order):
    r"""Exact Rényi divergence between two discrete distributions.

    .. math::

        D_\alpha(P\,\|\,Q) &= \frac{1}{\alpha-1}\log\sum_i p_i^\alpha q_i^{1-\alpha} \\
        &= \frac{1}{\alpha-1}\,\mathrm{logsumexp}_i\bigl(\alpha\log p_i + (1-\alpha)\log q_i\bigr)

    for α > 1 (Rényi 1961; Mironov 2017, Definition 3). Outcomes with
    :math:`p_i = 0` contribute nothing (also when :math:`q_i = 0`); an outcome with
    :math:`p_i > 0 = q_i` makes the divergence +inf. The divergence is non-negative,
    and the result is floored at 0 so that rounding (of order 1e-16 when P ≈ Q)
    cannot produce a negative value.

    Parameters
    ----------
    log_p, log_q : array_like
        1-D arrays of equal length with the natural-log probabilities of P and Q
        on a common support; entries in [-inf, 0] (``-inf`` for probability 0),
        each vector summing to 1 up to 1e-6 in log space.
    order : float or array_like
        Rényi order(s) α > 1; the computation is vectorised over orders.

    Returns
    -------
    float or ndarray
        :math:`D_\alpha(P\|Q)` (possibly +inf), matching the shape of ``order``.

    Examples
    --------
    >>> lp, lq = np.log([0.75, 0.25]), np.log([0.25, 0.75])
    >>> round(renyi_divergence(lp, lq, 2.0), 12)
    0.847297860387
    >>> renyi_divergence(np.log([0.5, 0.5]), [0.0, -np.inf], 2.0)
    inf
    """
    lp, lq = _check_pair(log_p, log_q)
    alpha, scalar = _check_orders(order)
    a = alpha.reshape(-1, 1)
    support = np.isfinite(lp)
    with np.errstate(invalid="ignore"):
        terms = a * lp + (1.0 - a) * lq
    terms = np.where(support, terms, -np.inf)
    out = special.logsumexp(terms, axis=1) / (alpha.reshape(-1) - 1.0)
    # D_alpha >= 0 exactly; rounding can leave e.g. -5e-17 for P = Q, which would
    # then be rejected as an RDP value, so the result is floored at 0.
    out = np.maximum(out, 0.0).reshape(alpha.shape)
    return _as_output(out, scalar)


def hockey_stick_divergence(log_p, log_q, epsilon):
    r"""Exact hockey-stick divergence δ(ε) between two discrete distributions.

    .. math::

        \delta(\varepsilon) = \sum_i \max\{0,\ p_i - e^\varepsilon q_i\}
        = \sum_{i:\ \log p_i > \varepsilon + \log q_i} p_i\bigl(1 - e^{\varepsilon + \log q_i - \log p_i}\bigr),

    the smallest δ such that :math:`P(S) \le e^\varepsilon Q(S) + \delta` for every
    event S (Dwork & Roth 2014, Definition 2.4, written as a divergence). A
    mechanism is (ε, δ)-DP iff δ(ε) <= δ for every ordered pair of neighbouring
    output distributions. Each positive term is formed in log space as
    :math:`\log p_i + \log(-\mathrm{expm1}(\varepsilon+\log q_i-\log p_i))` and the
    terms are combined with ``logsumexp``, so a δ of 1e-300 keeps its relative
    accuracy (no subtraction of nearly equal probabilities happens).

    Parameters
    ----------
    log_p, log_q : array_like
        1-D log-probability vectors of P and Q on a common support (see
        :func:`renyi_divergence`).
    epsilon : float or array_like
        Finite real ε (vectorised).

    Returns
    -------
    float or ndarray
        δ(ε) in [0, 1], matching the shape of ``epsilon``.

    Examples
    --------
    >>> lp, lq = np.log([0.75, 0.25]), np.log([0.25, 0.75])
    >>> round(hockey_stick_divergence(lp, lq, 0.0), 12)
    0.5
    >>> hockey_stick_divergence(lp, lq, np.log(3.0))
    0.0
    """
    lp, lq = _check_pair(log_p, log_q)
    if np.ndim(epsilon) == 0:
        eps, scalar = np.asarray(check_real("epsilon", epsilon), dtype=float), True
    else:
        eps, scalar = check_array("epsilon", epsilon, min_size=1), False
    out = _hockey_stick_kernel(lp, lq, eps.reshape(-1)).reshape(eps.shape)
    return _as_output(out, scalar)


def _hockey_stick_kernel(lp: np.ndarray, lq: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """sum_i max(0, p_i - e^eps q_i) for each eps, formed in log space (inputs valid)."""
    e = eps.reshape(-1, 1)
    with np.errstate(invalid="ignore"):
        z = e + lq - lp  # log(e^eps q / p); NaN where p = q = 0, handled by `positive`
        positive = np.isfinite(lp) & (z < 0)
        z = np.where(positive, z, -1.0)
        terms = np.where(positive, lp + log1mexp(z), -np.inf)
    return np.exp(special.logsumexp(terms, axis=1))
