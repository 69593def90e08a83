r"""Error metrics for frequency and mean estimation.

Conventions of the error metrics
--------------------------------
* The *last* axis of a frequency vector indexes the domain :math:`[d]`. The
  pointwise norms (:func:`l1_error`, :func:`l2_error`, :func:`linf_error`,
  :func:`relative_l1_loss`) reduce over the last axis and broadcast over all
  leading axes, so an ``(R, d)`` stack of estimates against one ``(d,)`` truth
  gives ``R`` errors.
* Functions that average over Monte Carlo repetitions (:func:`mse`,
  :func:`expected_error`, :func:`expected_l2_error`, :func:`nrmse`,
  :func:`nrmse_stderr`) take the repetitions on *axis 0* of ``estimates``; the
  ``truth`` is the same for every repetition and must broadcast against
  ``estimates.shape[1:]``.
* Inputs must be finite; mismatched shapes, NaN or infinity, and a truth whose
  norm (or mean) is zero where the metric divides by it raise
  :class:`ValueError` naming the offending parameter.

Which paper uses which metric: the OcPBM paper reports the :math:`\ell_2` error
:math:`\|\hat{\mathbf{x}} - \mathbf{x}\|_2` and bounds its expectation (Theorem 1,
Eq. 4); Wu et al. 2023 works with the :math:`\ell_\infty` error; Cormode & Markov 2021 reports the
NRMSE of a mean; Liu et al. 2023 reports the relative :math:`\ell_1` loss (Eq. 2).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._validation import call_checked, check_array, check_choice, check_int, check_real

__all__ = [
    "nrmse_of_runs",
    "l1_error",
    "l2_error",
    "linf_error",
    "relative_l1_loss",
    "mse",
    "expected_error",
    "expected_l2_error",
    "ErrorEstimate",
    "nrmse",
    "nrmse_stderr",
]


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------


def _quiet_overflow(func):
    """Silence numpy's overflow warning; results are checked by ``_finite`` instead."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with np.errstate(over="ignore"):
            return func(*args, **kwargs)

    return wrapper


def _out(x: np.ndarray) -> float | np.ndarray:
    x = np.asarray(x, dtype=float)
    return float(x) if x.ndim == 0 else x


def _vectors(estimate, truth, est_name: str = "estimate") -> tuple[np.ndarray, np.ndarray]:
    """Validate two stacks of frequency vectors (last axis = domain) that broadcast."""
    e = check_array(est_name, estimate, min_size=1)
    t = check_array("truth", truth, min_size=1)
    if e.ndim < 1:
        raise ValueError(f"{est_name} must have at least one axis (the domain); got a scalar")
    if t.ndim < 1:
        raise ValueError("truth must have at least one axis (the domain); got a scalar")
    if e.shape[-1] != t.shape[-1]:
        raise ValueError(
            f"{est_name} and truth must have the same domain size (last axis); "
            f"got {est_name} shape {e.shape} and truth shape {t.shape}"
        )
    try:
        np.broadcast_shapes(e.shape, t.shape)
    except ValueError:
        raise ValueError(f"{est_name} shape {e.shape} and truth shape {t.shape} do not broadcast") from None
    return e, t


def _finite(name: str, x: np.ndarray) -> np.ndarray:
    """Raise instead of returning inf when finite inputs overflowed float64."""
    if not np.all(np.isfinite(x)):
        raise ValueError(
            f"{name} overflowed float64: the estimates and truth are too large in magnitude "
            "(their differences, squares or sums exceed the float range)"
        )
    return x


def _l2_last(diff: np.ndarray) -> np.ndarray:
    """Euclidean norm over the last axis, scaled so that squaring cannot overflow."""
    scale = np.max(np.abs(diff), axis=-1, keepdims=True)
    safe = np.where(scale > 0, scale, 1.0)
    return (safe * np.sqrt(np.sum((diff / safe) ** 2, axis=-1, keepdims=True)))[..., 0]


def _repetitions(estimates, truth, *, min_reps: int, vector: bool) -> tuple[np.ndarray, np.ndarray]:
    """Validate ``estimates`` with repetitions on axis 0 and a truth shared by all of them."""
    e = check_array("estimates", estimates, min_size=1)
    t = check_array("truth", truth, min_size=1)
    need = 2 if vector else 1
    if e.ndim < need:
        what = "(R, ..., d): repetitions first, domain last" if vector else "(R, ...): repetitions first"
        raise ValueError(f"estimates must have shape {what}; got shape {e.shape}")
    if e.shape[0] < min_reps:
        raise ValueError(f"estimates must hold at least {min_reps} repetitions on axis 0; got {e.shape[0]}")
    per_rep = e.shape[1:]
    try:
        ok = np.broadcast_shapes(t.shape, per_rep) == per_rep
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(
            f"truth shape {t.shape} must broadcast to the shape of one repetition, estimates.shape[1:] = {per_rep}"
        )
    return e, t


# ----------------------------------------------------------------------------
# pointwise norms
# ----------------------------------------------------------------------------


@_quiet_overflow
def l1_error(estimate, truth) -> float | np.ndarray:
    r""":math:`\ell_1` error :math:`\|\hat{N} - N\|_1 = \sum_{j=1}^d |\hat{N}_j - N_j|`.

    Parameters
    ----------
    estimate, truth : array_like, shape (..., d)
        Finite arrays with the same last axis whose leading axes broadcast.

    Returns
    -------
    float or ndarray
        One error per broadcast leading index (a float for 1-D inputs).

    Examples
    --------
    >>> l1_error([1.0, 2.0, 4.0], [1.0, 3.0, 2.0])
    3.0
    >>> l1_error([[0, 0], [1, 1]], [1, 1]).tolist()
    [2.0, 0.0]
    """
    e, t = _vectors(estimate, truth)
    return _out(_finite("l1_error", np.sum(np.abs(e - t), axis=-1)))


@_quiet_overflow
def l2_error(estimate, truth) -> float | np.ndarray:
    r""":math:`\ell_2` error :math:`\|\hat{\mathbf{x}} - \mathbf{x}\|_2`: the OcPBM paper, Eq. 4, Tables 1-3.

    Computed with a rescaling so that squaring large entries does not overflow.

    Examples
    --------
    >>> l2_error([3.0, 0.0], [0.0, 4.0])
    5.0
    """
    e, t = _vectors(estimate, truth)
    return _out(_finite("l2_error", _l2_last(e - t)))


@_quiet_overflow
def linf_error(estimate, truth) -> float | np.ndarray:
    r""":math:`\ell_\infty` error :math:`\max_j |\hat{N}_j - N_j|`, the metric of Wu et al. 2023 (Sec. 2).

    Examples
    --------
    >>> linf_error([1.0, 5.0, 2.0], [1.0, 3.0, 3.0])
    2.0
    """
    e, t = _vectors(estimate, truth)
    return _out(_finite("linf_error", np.max(np.abs(e - t), axis=-1)))


@_quiet_overflow
def relative_l1_loss(estimate, truth) -> float | np.ndarray:
    r"""Relative :math:`\ell_1` loss of Liu et al. 2023 (Eq. 2, Sec. 7).

    .. math:: \frac{\sum_{j=1}^d |\overline{N}_j - \widehat{N}_j|}{\|\overline{N}\|_1}

    where :math:`\overline{N}` is the true histogram (over the :math:`d` items the
    experiment keeps) and :math:`\widehat{N}` the estimate.

    Raises
    ------
    ValueError
        If :math:`\|\overline{N}\|_1 = 0` (``truth`` is all zeros), besides the
        shape and finiteness checks.

    Examples
    --------
    >>> relative_l1_loss([9.0, 1.0, 0.0], [10.0, 0.0, 0.0])
    0.2
    """
    e, t = _vectors(estimate, truth)
    norm = _finite("relative_l1_loss", np.sum(np.abs(t), axis=-1))
    if np.any(norm == 0):
        raise ValueError("truth must have a non-zero l1 norm (the loss divides by ||truth||_1)")
    return _out(_finite("relative_l1_loss", np.sum(np.abs(e - t), axis=-1) / norm))


# ----------------------------------------------------------------------------
# averages over repetitions
# ----------------------------------------------------------------------------


@_quiet_overflow
def mse(estimates, truth) -> float | np.ndarray:
    r"""Mean squared :math:`\ell_2` error over repetitions,
    :math:`\frac1R\sum_{r=1}^R \|\hat{\mathbf{x}}^{(r)} - \mathbf{x}\|_2^2`.

    An unbiased Monte Carlo estimate of :math:`\mathbb{E}\|\hat{\mathbf{x}} - \mathbf{x}\|_2^2`,
    which for an unbiased estimator is the trace of its covariance.

    Parameters
    ----------
    estimates : array_like, shape (R, ..., d)
        ``R >= 1`` repetitions on axis 0, the domain on the last axis.
    truth : array_like
        Broadcasts to ``estimates.shape[1:]``.

    Returns
    -------
    float or ndarray of shape ``estimates.shape[1:-1]``

    Examples
    --------
    >>> mse([[1.0, 0.0], [0.0, 3.0]], [0.0, 0.0])   # (1 + 9) / 2
    5.0
    """
    e, t = _repetitions(estimates, truth, min_reps=1, vector=True)
    sq = _l2_last(e - t) ** 2
    return _out(_finite("mse", np.mean(sq, axis=0)))


@dataclass(frozen=True)
class ErrorEstimate:
    """A Monte Carlo average with its standard error.

    Attributes
    ----------
    mean : float or ndarray
        Sample mean of the per-repetition errors.
    stderr : float or ndarray
        Sample standard deviation (``ddof=1``) divided by :math:`\\sqrt{R}`.
    repetitions : int
        :math:`R`.
    """

    mean: float | np.ndarray
    stderr: float | np.ndarray
    repetitions: int


_NORMS: dict[str, Callable[..., np.ndarray]] = {"l1": np.sum, "linf": np.max}


def _per_rep_error(e: np.ndarray, t: np.ndarray, norm: str) -> np.ndarray:
    diff = e - t
    if norm == "l2":
        return _l2_last(diff)
    return _NORMS[norm](np.abs(diff), axis=-1)


@_quiet_overflow
def expected_error(estimates, truth, *, norm: str = "l2") -> ErrorEstimate:
    r"""Monte Carlo estimate of :math:`\mathbb{E}\|\hat{\mathbf{x}} - \mathbf{x}\|` with its standard error.

    .. math:: \bar{e} = \frac1R \sum_{r=1}^R e_r, \qquad
              \mathrm{se} = \frac{s_e}{\sqrt R}, \qquad e_r = \|\hat{\mathbf{x}}^{(r)} - \mathbf{x}\|,

    with :math:`s_e` the sample standard deviation (``ddof=1``). A CLT check of a
    bound :math:`B` (e.g. the OcPBM paper, Theorem 1) then reads
    :math:`\bar{e} \le B + 4\,\mathrm{se}`.

    Parameters
    ----------
    estimates : array_like, shape (R, ..., d)
        ``R >= 2`` repetitions on axis 0 (two are needed for a standard error).
    truth : array_like
        Broadcasts to ``estimates.shape[1:]``.
    norm : {"l1", "l2", "linf"}

    Examples
    --------
    >>> est = expected_error([[3.0, 4.0], [0.0, 0.0]], [0.0, 0.0])
    >>> est.mean, est.stderr, est.repetitions
    (2.5, 2.5, 2)
    """
    check_choice("norm", norm, {"l1", "l2", "linf"})
    e, t = _repetitions(estimates, truth, min_reps=2, vector=True)
    err = _finite("expected_error", _per_rep_error(e, t, norm))
    reps = e.shape[0]
    return ErrorEstimate(
        mean=_out(_finite("expected_error", np.mean(err, axis=0))),
        stderr=_out(_finite("expected_error", np.std(err, axis=0, ddof=1) / np.sqrt(reps))),
        repetitions=reps,
    )


@_quiet_overflow
def expected_l2_error(estimates, truth) -> float | np.ndarray:
    r"""Sample mean over repetitions of :math:`\|\hat{\mathbf{x}}^{(r)} - \mathbf{x}\|_2`.

    The Monte Carlo counterpart of the left side of the OcPBM paper, Theorem 1 (Eq. 4);
    the paper's Fig. 3 averages three runs. Use :func:`expected_error` when a
    standard error is needed.

    Examples
    --------
    >>> expected_l2_error([[3.0, 4.0], [0.0, 1.0]], [0.0, 0.0])
    3.0
    """
    e, t = _repetitions(estimates, truth, min_reps=1, vector=True)
    return _out(_finite("expected_l2_error", np.mean(_l2_last(e - t), axis=0)))


def _nrmse_parts(estimates, truth, min_reps: int):
    e, t = _repetitions(estimates, truth, min_reps=min_reps, vector=False)
    if np.any(t == 0):
        raise ValueError("truth must be non-zero (NRMSE divides by the true mean |mu|)")
    sq = (e - t) ** 2
    _finite("nrmse", sq)
    return e, t, sq


@_quiet_overflow
def nrmse(estimates, truth) -> float | np.ndarray:
    r"""Normalised root-mean-squared error of Cormode & Markov 2021 (Sec. 4.1).

    .. math:: \mathrm{NRMSE} = \frac{\sqrt{\frac1R \sum_{r=1}^R (\hat{x}_r - \mu)^2}}{|\mu|}

    Cormode & Markov 2021 (line 214 of the text copy) describes the metric as computing "the
    mean of the squared difference" between :math:`\hat{x}` and the true
    empirical mean :math:`\mu` over 100 repetitions and then dividing by
    :math:`\mu`; read literally that is :math:`\mathrm{MSE}/\mu`, which has the
    units of :math:`\mu` and is not a *root* mean squared error. We take the
    root before dividing, as the name NRMSE says; this makes the metric
    dimensionless and scale-invariant, consistent with the paper reading its
    values as a percentage of the mean ("around 1-2% of the true mean value",
    line 234). We divide by :math:`|\mu|` so that negative means give a
    positive error.

    Parameters
    ----------
    estimates : array_like, shape (R, ...)
        ``R >= 1`` repetitions on axis 0.
    truth : float or array_like
        The true mean(s) :math:`\mu`, non-zero, broadcasting to ``estimates.shape[1:]``.

    Returns
    -------
    float or ndarray of shape ``estimates.shape[1:]``

    Examples
    --------
    >>> nrmse([9.0, 11.0, 10.0, 10.0], 10.0)    # sqrt((1 + 1 + 0 + 0) / 4) / 10
    0.07071067811865475
    """
    e, t, sq = _nrmse_parts(estimates, truth, 1)
    return _out(_finite("nrmse", np.sqrt(np.mean(sq, axis=0)) / np.abs(t)))


@_quiet_overflow
def nrmse_stderr(estimates, truth) -> float | np.ndarray:
    r"""Delta-method standard error of :func:`nrmse`.

    With :math:`e_r = (\hat{x}_r - \mu)^2`, :math:`\overline{e}` their mean and
    :math:`s_e` their sample standard deviation, :math:`\mathrm{NRMSE} =
    \sqrt{\overline{e}}/|\mu|` and :math:`\mathrm{se}(\overline{e}) = s_e/\sqrt R`, so

    .. math:: \mathrm{se}(\mathrm{NRMSE}) \approx \frac{s_e / \sqrt{R}}{2\sqrt{\overline{e}}\,|\mu|} .

    Cormode & Markov 2021 says its error bars are "the standard error of these repetitions"
    without a formula; this is the standard error of the plotted quantity
    itself. If every repetition is exact (:math:`\overline{e} = 0`) the NRMSE is
    0 with no spread and 0 is returned.

    Parameters
    ----------
    estimates : array_like, shape (R, ...)
        ``R >= 2`` repetitions on axis 0.
    truth : float or array_like
        As in :func:`nrmse`.

    Examples
    --------
    >>> round(nrmse_stderr([9.0, 11.0, 10.0, 10.0], 10.0), 6)
    0.020412
    """
    e, t, sq = _nrmse_parts(estimates, truth, 2)
    reps = e.shape[0]
    mean_sq = np.mean(sq, axis=0)
    se_mean_sq = np.std(sq, axis=0, ddof=1) / np.sqrt(reps)
    denom = 2.0 * np.sqrt(mean_sq) * np.abs(t)
    safe = np.where(mean_sq > 0, denom, 1.0)
    return _out(_finite("nrmse_stderr", np.where(mean_sq > 0, se_mean_sq / safe, 0.0)))


def nrmse_of_runs(run, truth, *, reps: int) -> float:
    """NRMSE (:func:`nrmse`) of ``reps`` independent runs of an estimator.

    Parameters
    ----------
    run : callable
        ``run()`` returns one scalar estimate; each call must draw fresh randomness
        (e.g. from a generator it closes over), so the calls are independent.
    truth : float
        The true value (non-zero).
    reps : int
        Number of repetitions (Cormode & Markov 2021 uses 100), at least 2.

    Examples
    --------
    >>> g = np.random.default_rng(0)
    >>> round(nrmse_of_runs(lambda: 10.0 + g.normal(), 10.0, reps=2000), 1)
    0.1
    """
    reps = check_int("reps", reps, low=2, high=10**7, reason="each repetition runs the estimator once")
    if not callable(run):
        raise ValueError(f"run must be callable; got {type(run).__name__}")
    estimates = np.array([check_real("run()", call_checked("run", run)) for _ in range(reps)])
    return float(nrmse(estimates, truth))
