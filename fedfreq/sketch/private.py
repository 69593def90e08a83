"""The differentially private hybrid sketch (Wu et al., 2023, Theorem 4.1): sensitivity,
noise calibration through fedfreq.accounting, and the private estimate.
"""

from __future__ import annotations

import math

import numpy as np

from .. import accounting
from .._rng import as_generator
from .._validation import EPSILON_MAX, SCALE_MAX, check_choice, check_epsilon, check_int, check_real, check_scale
from .coding import _check_round_frequencies, _decode, _sketch_rounds
from .hashing import draw_sketch_hashes

__all__ = ["sketch_sensitivity", "dp_sketch_sigma", "dp_sketch_epsilon", "paper_dp_sigma", "dp_hybrid_sketch_estimate"]


def sketch_sensitivity(*, rows: int, n: int, relation: str = "add_remove") -> float:
    r"""ℓ2 sensitivity of the released normalised sketches (Wu et al. 2023, proof of Thm 4.1).

    One client contributes one signed one-hot per row to one round's sketch,
    scaled by :math:`1/n` (``n`` public). Adding or removing that contribution moves
    the :math:`M` released sketches by :math:`\sqrt L/n` in ℓ2 (``"add_remove"``, the
    paper's value). Replacing the client's item by another moves each row by
    :math:`\sqrt2/n` if the two items fall in different buckets and by up to
    :math:`2/n` if they share a bucket with opposite signs, so the worst case over
    hashes is :math:`2\sqrt L/n` (``"replace"``).

    Examples
    --------
    >>> sketch_sensitivity(rows=4, n=10), sketch_sensitivity(rows=4, n=10, relation="replace")
    (0.2, 0.4)
    """
    rows = check_int("rows", rows, low=1)
    n = check_int("n", n, low=1)
    relation = check_choice("relation", relation, ("add_remove", "replace"))
    factor = 1.0 if relation == "add_remove" else 2.0
    return factor * math.sqrt(rows) / n


def dp_sketch_sigma(
    epsilon: float,
    delta: float,
    *,
    rows: int,
    n: int,
    relation: str = "add_remove",
    participations: int = 1,
) -> float:
    r"""Noise standard deviation per sketch entry for (ε, δ)-DP (Wu et al. 2023, Thm 4.1).

    A client appears in ``participations`` rounds (1 in the paper: every round has new
    clients, so the :math:`M` Gaussian releases compose in parallel and the whole
    release is one Gaussian mechanism with sensitivity :math:`\Delta`). For
    :math:`k` participations the joint release is a Gaussian mechanism with
    sensitivity :math:`\sqrt k\,\Delta`. The noise is calibrated exactly with
    :func:`fedfreq.accounting.gaussian_sigma` (analytic Gaussian, Balle & Wang 2018).

    Examples
    --------
    >>> s = dp_sketch_sigma(1.0, 1e-5, rows=4, n=1000)
    >>> round(s * 1000 / 2, 4)   # = analytic sigma for sensitivity 1
    3.7306
    """
    participations = check_int(
        "participations", participations, low=1, high=10**6, reason="the RDP curve is composed once per participation"
    )
    delta_s = sketch_sensitivity(rows=rows, n=n, relation=relation) * math.sqrt(participations)
    epsilon = check_real(
        "epsilon", epsilon, low=0.0, high=EPSILON_MAX, reason="the Gaussian calibration is verified up to it"
    )
    return accounting.gaussian_sigma(epsilon, delta, sensitivity=delta_s)


def dp_sketch_epsilon(
    sigma: float,
    delta: float,
    *,
    rows: int,
    n: int,
    relation: str = "add_remove",
    participations: int = 1,
    orders=None,
) -> tuple[float, float]:
    r"""ε of the DP sketch from the Rényi accountant (Wu et al. 2023, Thm 4.1).

    Each round in which a client takes part is a Gaussian mechanism with RDP
    :math:`\alpha\Delta^2/(2\sigma^2)` (:func:`fedfreq.accounting.rdp_gaussian`); the
    ``participations`` rounds are composed (:func:`fedfreq.accounting.compose_rdp`) and
    converted with :func:`fedfreq.accounting.rdp_to_dp` over ``orders``.

    Returns
    -------
    (epsilon, best_order)

    Examples
    --------
    >>> eps, order = dp_sketch_epsilon(0.01, 1e-5, rows=4, n=1000)
    >>> round(eps, 3)
    0.795
    """
    sigma = check_scale("sigma", sigma)
    participations = check_int(
        "participations", participations, low=1, high=10**6, reason="the RDP curve is composed once per participation"
    )
    orders = accounting.DEFAULT_ORDERS if orders is None else orders
    delta_s = sketch_sensitivity(rows=rows, n=n, relation=relation)
    one = accounting.rdp_gaussian(orders, sensitivity=delta_s, sigma=sigma)
    total = accounting.compose_rdp(*([one] * participations))
    return accounting.rdp_to_dp(orders, total, delta)


def paper_dp_sigma(epsilon: float, delta: float, *, rows: int, n: int, c0: float = math.sqrt(2.0)) -> float:
    r"""The noise scale as written in the proof of Thm 4.1: :math:`c_0\sqrt{L\log(1/\delta)}/(n\varepsilon)`.

    (The theorem's statement omits the :math:`1/n`; the proof has it.) With
    :math:`c_0 = \sqrt2` this is the classical calibration
    :math:`\Delta\sqrt{2\log(1/\delta)}/\varepsilon` for :math:`\Delta = \sqrt L/n`,
    slightly below the textbook :math:`\sqrt{2\log(1.25/\delta)}` factor.

    Examples
    --------
    >>> round(paper_dp_sigma(1.0, 1e-5, rows=4, n=1000) * 1000, 4)
    9.5971
    """
    epsilon = check_epsilon("epsilon", epsilon)
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    rows = check_int("rows", rows, low=1)
    n = check_int("n", n, low=1)
    c0 = check_scale("c0", c0)
    return c0 * math.sqrt(rows * math.log(1.0 / delta)) / (n * epsilon)


def dp_hybrid_sketch_estimate(
    round_frequencies,
    *,
    width: int,
    rows: int,
    sigma: float,
    rng: np.random.Generator | int | None = None,
    design: str = "hybrid",
) -> np.ndarray:
    r"""The DP hybrid sketch of Wu et al. 2023, Theorem 4.1 (central DP, simulated).

    Each round's normalised sketch gets independent :math:`\mathcal N(0,\sigma^2)` noise
    in every entry before decoding (:func:`decode_sketches`). Calibrate ``sigma`` with
    :func:`dp_sketch_sigma`. Floating-point Gaussian sampling is a model of the
    mechanism, not a safe DP implementation.

    The noise is drawn with numpy's floating-point sampler: a simulation of the
    mechanism's law for measuring accuracy, not a deployable release (a float sampler
    has a support gap; integer counts are released safely by
    :func:`fedfreq.deploy.release_counts`).

    Examples
    --------
    >>> f = np.tile([0.5, 0.3, 0.2], (4, 1))
    >>> est = dp_hybrid_sketch_estimate(f, width=64, rows=5, sigma=1e-3, rng=0)
    >>> bool(np.max(np.abs(est - f[0])) < 0.01)
    True
    """
    F = _check_round_frequencies(round_frequencies)
    sigma = check_real("sigma", sigma, low=0.0, high=SCALE_MAX, reason="its square must stay finite")
    gen = as_generator(rng)
    M, d = F.shape
    tables = draw_sketch_hashes(width=width, rows=rows, rounds=M, design=design, rng=gen).tabulate(d)
    S = _sketch_rounds(F, tables)
    S = S + sigma * gen.standard_normal(S.shape)
    return _decode(S, tables)
