r"""End-to-end federated frequency estimation: the two-phase and multi-round protocols.

The OcPBM paper, Sec. 4.3 and App. D:

* **TFFE** (Alg. 6, :func:`tffe`): every user first sends the privatised Haar
  coefficients of her discretised norm :math:`\|y_i\|_2` (Alg. 4); the server
  estimates the clipping threshold :math:`\hat C` as the Eq. 5 quantile (Alg. 5,
  :mod:`fedfreq.quantiles`); then every user runs OcPBM with :math:`\hat C`
  (Alg. 1) and the server decodes (Alg. 2). Privacy (Prop. 4): the RDP of the two
  steps adds (:func:`tffe_rdp`).
* **MFFE** (Alg. 7, :func:`mffe`): the population is split into :math:`R` rounds
  of :math:`N = n/R` users, each user reports once; in round :math:`r` users clip
  with the current :math:`C^{(r)}` and also send a cPBM-privatised indicator
  :math:`\mathbb 1\{\|y_i\|_2 > C^{(r)}\}`, from which the server estimates the
  quantile level of :math:`C^{(r)}`, :math:`\hat\gamma^{(r)} = 1 - \widehat{\text{frac. above}}`,
  and updates :math:`C^{(r+1)} = C^{(r)}\exp(-\eta(\hat\gamma^{(r)} - \gamma^*))`.
  Privacy: per round, the frequency step composed with one indicator coordinate;
  rounds are disjoint, so parallel composition gives the per-round value
  (:func:`mffe_rdp`).

Baselines of Sec. 5.2: :func:`normalize_estimate` (Normalize),
:func:`sample_estimate` (Sample(one), Sample(k)), :func:`central_gaussian_estimate`
(CDP) and :func:`local_gaussian_estimate` (LDP); :math:`C_{\text{median}}` and
:math:`C_{\text{small}}` are :func:`tffe` / :func:`mffe` with another target level.
The Gaussian baselines take :math:`(\varepsilon, \delta)` and calibrate
:math:`\sigma` with :func:`fedfreq.accounting.gaussian_sigma`; use
:func:`tffe_epsilon` to give them the budget of TFFE.

Both protocols run vectorised over users; the secure sums go through
:func:`fedfreq.secagg.secure_sum` and the cPBM through :mod:`fedfreq.cpbm`.
Floating-point sampling is a simulation, not a safe DP implementation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import quantiles as _q
from . import secagg
from ._rng import as_generator
from ._validation import EPSILON_MAX, SCALE_MAX, check_array, check_choice, check_int, check_real, check_scale
from .accounting import DEFAULT_ORDERS, cpbm_rdp, gaussian_sigma, rdp_to_dp
from .accounting.cpbm_accountant import MAX_USERS
from .cpbm import _representation, clip_l2, cpbm_encode, cpbm_server, optimal_quantile
from .kashin import kashin_level, kashin_representation

__all__ = [
    "TFFEResult",
    "MFFEResult",
    "tffe",
    "tffe_rdp",
    "mffe",
    "mffe_rdp",
    "multiround_fixed_estimate",
    "tffe_epsilon",
    "sample_items",
    "normalize_estimate",
    "sample_estimate",
    "central_gaussian_estimate",
    "local_gaussian_estimate",
]


#: Largest number of binomial trials per coordinate: the secure sum of n users' outputs
#: must stay far inside the int64 modulus of :mod:`fedfreq.secagg`.
MAX_TRIALS = 2**20


def _check_cpbm_parameters(**params) -> dict:
    """Validate cPBM parameters under the names the caller used (``theta_q``, ``m_q``, ``N``...)."""
    out = {}
    for name, value in params.items():
        if name.startswith("theta"):
            out[name] = check_scale(name, value, high=0.25)
        elif name.startswith("m"):
            out[name] = check_int(
                name, value, low=1, high=MAX_TRIALS, reason="n users' sums must fit the secure-sum modulus"
            )
        elif name in ("n", "N"):
            out[name] = check_int(
                name, value, low=1, high=MAX_USERS, reason="the accountant sums a window growing like sqrt(n)"
            )
        else:
            out[name] = check_int(name, value, low=1)
    return out


def _cpbm_round(Y: np.ndarray, U: np.ndarray, *, theta: float, C: float, m: int, g) -> np.ndarray:
    n = Y.shape[0]
    Z = cpbm_encode(Y, theta=theta, C=C, m=m, rng=g)
    S = secagg.secure_sum(Z, modulus=secagg.modulus_for(n, m), max_entry=m, rng=g)
    return cpbm_server(S, U, n=n, theta=theta, C=C, m=m)


def _check_x_U(x, U) -> tuple[np.ndarray, np.ndarray]:
    U = check_array("U", U, ndim=2)
    X = check_array("x", x, ndim=2, low=0.0, min_size=1, max_abs=SCALE_MAX)
    if X.shape[1] != U.shape[0]:
        raise ValueError(f"x must have d = {U.shape[0]} columns (the rows of U); got {X.shape[1]}")
    return X, U


@dataclass(frozen=True)
class TFFEResult:
    """Output of :func:`tffe`.

    Attributes
    ----------
    x_hat : ndarray, shape (d,)
        Estimated mean histogram.
    C_hat : float
        The private clipping threshold (Alg. 5 output).
    gamma : float
        Target quantile level used.
    norms : ndarray, shape (n,)
        The users' :math:`\\|y_i\\|_2` (simulator-side only; never seen by the server).
    """

    x_hat: np.ndarray
    C_hat: float
    gamma: float
    norms: np.ndarray


def tffe(
    x,
    U,
    *,
    B: float,
    b: int,
    theta: float,
    m: int,
    theta_q: float,
    m_q: int,
    gamma: float | None = None,
    rule: str = "first",
    eta: float = 0.7,
    nu: float = 0.3,
    iterations: int = 20,
    rng: np.random.Generator | int | None = None,
    y=None,
) -> TFFEResult:
    r"""Two-phase federated frequency estimation (the OcPBM paper, Alg. 6).

    Phase 1: DHT quantile of the norms with cPBM parameters :math:`(m', \theta')`
    = ``(m_q, theta_q)`` (norms above ``B`` fall in the last bin). Phase 2: cPBM
    with :math:`(m, \theta)` and :math:`C = \hat C`.

    Parameters
    ----------
    x : array_like, shape (n, d)
        User histograms (non-negative).
    U : array_like, shape (d, D)
        Tight frame.
    B, b
        Histogram range and depth of the quantile step.
    theta, m
        cPBM parameters of the frequency step.
    theta_q, m_q
        cPBM parameters of the quantile step.
    gamma : float, optional
        Target quantile level; default the Eq. 5 optimum
        :func:`fedfreq.cpbm.optimal_quantile` ``(D, m, n, theta)``.
    rule : {"first", "argmin"}
        Quantile search (see :func:`fedfreq.quantiles.quantile_from_prefix`);
        ``"argmin"`` is Alg. 5 as printed.
    eta, nu, iterations
        Kashin parameters (:func:`fedfreq.kashin.kashin_representation`).
    y : array_like, shape (n, D), optional
        Precomputed Kashin representations of the rows of ``x`` (skips the
        computation; must come from the same frame and parameters).

    Examples
    --------
    >>> from fedfreq.kashin import tight_frame
    >>> U = tight_frame(4, 8, rng=0)
    >>> x = np.tile([3.0, 1.0, 0.0, 0.0], (500, 1))
    >>> r = tffe(x, U, B=40.0, b=4, theta=0.25, m=16, theta_q=0.25, m_q=16, rng=1)
    >>> r.x_hat.shape, r.C_hat > 0
    ((4,), True)
    """
    X, U = _check_x_U(x, U)
    g = as_generator(rng)
    n = X.shape[0]
    D = U.shape[1]
    p = _check_cpbm_parameters(theta=theta, m=m, theta_q=theta_q, m_q=m_q)
    m, theta, m_q, theta_q = p["m"], p["theta"], p["m_q"], p["theta_q"]
    Y = _representation(X, U, y, eta=eta, nu=nu, iterations=iterations)
    norms = np.linalg.norm(Y, axis=1)
    gam = (
        optimal_quantile(D=D, m=m, n=n, theta=theta) if gamma is None else check_real("gamma", gamma, low=0.0, high=1.0)
    )
    res = _q.federated_quantile(
        norms,
        gam,
        encoding="dht",
        B=B,
        b=b,
        mechanism=_q.cpbm_sum_mechanism(m=m_q, theta=theta_q),
        rng=g,
        out_of_range="last_bin",
        rule=rule,
    )
    C_hat = float(res.threshold)
    x_hat = _cpbm_round(Y, U, theta=theta, C=C_hat, m=m, g=g)
    return TFFEResult(x_hat=x_hat, C_hat=C_hat, gamma=float(gam), norms=norms)


def tffe_rdp(order, *, n: int, D: int, b: int, theta: float, m: int, theta_q: float, m_q: int, rule: str = "changed"):
    r"""RDP of TFFE (the OcPBM paper, Prop. 4): frequency step plus quantile step.

    .. math:: \varepsilon(\lambda) = \varepsilon_{\text{cPBM}}(\lambda; n, \theta, m, D)
              + \varepsilon_{\text{DHT}}(\lambda; n, \theta', m', b),

    the first from :func:`fedfreq.accounting.cpbm_rdp` with ``dim = D`` (the
    privatised Kashin coordinates), the second from
    :func:`fedfreq.quantiles.histogram_rdp` (``rule="changed"``: :math:`2b-1`
    coordinates; ``rule="all"``: the paper's :math:`2^b-1`).

    Examples
    --------
    >>> r = tffe_rdp(2.0, n=10_000, D=100, b=6, theta=0.2, m=30, theta_q=0.2, m_q=3)
    >>> bool(r > 0)
    True
    """
    p = _check_cpbm_parameters(n=n, D=D, theta=theta, m=m, theta_q=theta_q, m_q=m_q)
    n, D, theta, m, theta_q, m_q = p["n"], p["D"], p["theta"], p["m"], p["theta_q"], p["m_q"]
    freq = cpbm_rdp(order, n=n, theta=theta, m=m, dim=D)
    quant = _q.histogram_rdp(order, encoding="dht", b=b, n=n, m=m_q, theta=theta_q, rule=rule)
    return freq + quant


@dataclass(frozen=True)
class MFFEResult:
    """Output of :func:`mffe`.

    Attributes
    ----------
    x_hat : ndarray, shape (d,)
        :math:`\\frac1R\\sum_r \\hat x^{(r)}`.
    C : ndarray, shape (R + 1,)
        Thresholds :math:`C^{(1)}, \\dots, C^{(R+1)}`.
    gamma_hat : ndarray, shape (R,)
        Estimated quantile level of :math:`C^{(r)}` in each round.
    round_estimates : ndarray, shape (R, d)
    gamma : float
        Target level.
    """

    x_hat: np.ndarray
    C: np.ndarray
    gamma_hat: np.ndarray
    round_estimates: np.ndarray
    gamma: float


def mffe(
    x,
    U,
    *,
    rounds: int,
    theta: float,
    m: int,
    theta_q: float,
    m_q: int,
    C0: float = 1.0,
    lr: float = 1.0,
    gamma: float | None = None,
    target: str = "n",
    eta: float = 0.7,
    nu: float = 0.3,
    iterations: int = 20,
    rng: np.random.Generator | int | None = None,
    y=None,
) -> MFFEResult:
    r"""Multi-round federated frequency estimation with online private quantiles (the OcPBM paper, Alg. 7).

    Users are taken in their given order, :math:`N = n/R` per round (shuffle
    beforehand for the i.i.d. assumption of Cor. 1).

    Parameters
    ----------
    rounds : int
        :math:`R`; must divide :math:`n`.
    C0 : float
        Initial threshold :math:`C^{(1)} > 0`.
    lr : float
        Learning rate :math:`\eta` in (0, 100] of the geometric update (a larger step
        overflows the threshold in one round).
    gamma : float, optional
        Target level; default the Eq. 5 optimum with the whole population
        (``target="n"``, Cor. 1) or with the per-round size (``target="N"``,
        the :math:`C_{\text{small}}` baseline).
    y : array_like, shape (n, D), optional
        Precomputed Kashin representations of the rows of ``x``, as in :func:`tffe`.

    Examples
    --------
    >>> from fedfreq.kashin import tight_frame
    >>> U = tight_frame(4, 8, rng=0)
    >>> x = np.tile([3.0, 1.0, 0.0, 0.0], (400, 1))
    >>> r = mffe(x, U, rounds=4, theta=0.25, m=16, theta_q=0.25, m_q=16, rng=1)
    >>> r.C.shape, r.round_estimates.shape
    ((5,), (4, 4))
    """
    X, U = _check_x_U(x, U)
    g = as_generator(rng)
    n = X.shape[0]
    D = U.shape[1]
    R = check_int("rounds", rounds, low=1, high=n)
    if n % R:
        raise ValueError(f"rounds must divide the number of users n = {n}; got {R}")
    N = n // R
    p = _check_cpbm_parameters(theta=theta, m=m, theta_q=theta_q, m_q=m_q)
    m, theta, m_q, theta_q = p["m"], p["theta"], p["m_q"], p["theta_q"]
    C = check_scale("C0", C0)
    lr = check_real("lr", lr, low=0.0, high=100.0, low_open=True)
    check_choice("target", target, ("n", "N"))
    gam = (
        optimal_quantile(D=D, m=m, n=n if target == "n" else N, theta=theta)
        if gamma is None
        else check_real("gamma", gamma, low=0.0, high=1.0)
    )
    indicator_mech = _q.cpbm_sum_mechanism(m=m_q, theta=theta_q)
    Y = _representation(X, U, y, eta=eta, nu=nu, iterations=iterations)
    norms = np.linalg.norm(Y, axis=1)
    Cs, gh, est = [C], [], []
    for r in range(R):
        sl = slice(r * N, (r + 1) * N)
        est.append(_cpbm_round(Y[sl], U, theta=theta, C=C, m=m, g=g))
        above = (norms[sl] > C).astype(float)[:, None]
        frac_above = float(indicator_mech(above, g)[0]) / N
        gamma_hat = 1.0 - frac_above
        gh.append(gamma_hat)
        C = C * float(np.exp(-lr * (gamma_hat - gam)))
        Cs.append(C)
    per_round = np.array(est)
    return MFFEResult(
        x_hat=per_round.mean(axis=0),
        C=np.array(Cs),
        gamma_hat=np.array(gh),
        round_estimates=per_round,
        gamma=float(gam),
    )


def multiround_fixed_estimate(
    x,
    U,
    *,
    rounds: int,
    C: float,
    theta: float,
    m: int,
    eta: float = 0.7,
    nu: float = 0.3,
    iterations: int = 20,
    rng=None,
    y=None,
) -> np.ndarray:
    r"""Multi-round estimate with one fixed threshold: :math:`\frac1R\sum_r \hat x^{(r)}` (the OcPBM paper, App. D).

    The rounds of :func:`mffe` without the online update: round :math:`r` runs cPBM
    with threshold ``C`` on users :math:`(r-1)N+1, \dots, rN` (:math:`N = n/R`),
    and the server averages the round estimates. With ``C`` set non-privately
    (in hindsight) this is the "Best :math:`C^*`" column of Table 3; its expected
    error is bounded by Eq. 4 with the whole population :math:`n` (Corollary 1).
    ``y`` (shape (n, D)) may pass precomputed Kashin representations of the rows
    of ``x``, as in :func:`tffe`.

    Examples
    --------
    >>> from fedfreq.kashin import tight_frame
    >>> U = tight_frame(4, 8, rng=0)
    >>> x = np.tile([3.0, 1.0, 0.0, 0.0], (400, 1))
    >>> multiround_fixed_estimate(x, U, rounds=4, C=10.0, theta=0.25, m=16, rng=1).shape
    (4,)
    """
    X, U = _check_x_U(x, U)
    g = as_generator(rng)
    n = X.shape[0]
    R = check_int("rounds", rounds, low=1, high=n)
    if n % R:
        raise ValueError(f"rounds must divide the number of users n = {n}; got {R}")
    C = check_scale("C", C)
    m = _check_cpbm_parameters(m=m)["m"]
    N = n // R
    Y = _representation(X, U, y, eta=eta, nu=nu, iterations=iterations)
    est = [_cpbm_round(Y[r * N : (r + 1) * N], U, theta=theta, C=C, m=m, g=g) for r in range(R)]
    return np.mean(est, axis=0)


def mffe_rdp(order, *, N: int, D: int, theta: float, m: int, theta_q: float, m_q: int):
    r"""RDP of MFFE (the OcPBM paper, App. D): one round's frequency step plus one indicator coordinate.

    .. math:: \varepsilon(\lambda) = \varepsilon_{\text{cPBM}}(\lambda; N, \theta, m, D)
              + \varepsilon_{\text{cPBM}}(\lambda; N, \theta', m', 1),

    with :math:`N` the users per round; every user reports in one round only, so
    by parallel composition this is the guarantee of the whole protocol. (The
    threshold :math:`C^{(r)}` depends on earlier rounds' outputs only, i.e. on
    other users, so it does not add to a user's privacy loss.)

    Examples
    --------
    >>> bool(mffe_rdp(2.0, N=1000, D=100, theta=0.2, m=15, theta_q=0.2, m_q=15) > 0)
    True
    """
    p = _check_cpbm_parameters(N=N, D=D, theta=theta, m=m, theta_q=theta_q, m_q=m_q)
    N, D, theta, m, theta_q, m_q = p["N"], p["D"], p["theta"], p["m"], p["theta_q"], p["m_q"]
    return cpbm_rdp(order, n=N, theta=theta, m=m, dim=D) + cpbm_rdp(order, n=N, theta=theta_q, m=m_q, dim=1)


def tffe_epsilon(
    delta: float,
    *,
    n: int,
    D: int,
    b: int,
    theta: float,
    m: int,
    theta_q: float,
    m_q: int,
    rule: str = "changed",
    orders=None,
) -> float:
    r"""The :math:`\varepsilon` of TFFE at :math:`\delta` (Prop. 4 composed, converted by Lemma 3).

    Examples
    --------
    >>> e = tffe_epsilon(1e-4, n=10_000, D=100, b=6, theta=0.2, m=30, theta_q=0.2, m_q=3)
    >>> bool(0 < e < 10)
    True
    """
    o = DEFAULT_ORDERS if orders is None else orders
    curve = tffe_rdp(o, n=n, D=D, b=b, theta=theta, m=m, theta_q=theta_q, m_q=m_q, rule=rule)
    return rdp_to_dp(o, curve, delta)[0]


def sample_items(x, k: int, *, rng=None) -> np.ndarray:
    r"""Each user keeps :math:`\min(k, \|x_i\|_1)` of her items, drawn without replacement.

    Vectorised over users: coordinate by coordinate, the number kept of item
    :math:`j` is hypergeometric given what is left to draw.

    Examples
    --------
    >>> sample_items([[3, 1, 0], [0, 0, 2]], 2, rng=0).sum(axis=1).tolist()
    [2, 2]
    """
    X = check_array("x", x, ndim=2, integer=True, low=0)
    k = check_int("k", k, low=1)
    g = as_generator(rng)
    left = np.minimum(X.sum(axis=1), k)
    remaining = X.sum(axis=1)
    out = np.zeros_like(X)
    for j in range(X.shape[1]):
        good = X[:, j]
        bad = remaining - good
        take = np.zeros_like(good)
        act = (left > 0) & (good > 0)
        if np.any(act):
            take[act] = g.hypergeometric(good[act], bad[act], left[act])
        out[:, j] = take
        left = left - take
        remaining = bad
    return out


def normalize_estimate(
    x, U, *, theta: float, m: int, eta: float = 0.7, nu: float = 0.3, iterations: int = 20, rng=None, y=None
) -> np.ndarray:
    r"""Baseline "Normalize" (Sec. 5.2): :math:`x_i \leftarrow x_i/\|x_i\|_2`, then cPBM without clipping.

    After normalisation :math:`\|y_i\|_2 \le \sqrt D\|y_i\|_\infty \le K`, so
    :math:`C = K` (:func:`fedfreq.kashin.kashin_level`) never clips. The output
    estimates the mean of the *normalised* histograms, hence its bias.

    ``y`` (shape (n, D)) may pass precomputed Kashin representations of the rows
    of ``x`` (not of the normalised rows). Kashin's representation is positively
    homogeneous (:func:`fedfreq.kashin.kashin_representation`), so row i is divided
    by :math:`\|x_i\|_2` instead of being recomputed; the result equals the one
    without ``y`` up to rounding, and the same ``y`` serves every run.

    Examples
    --------
    >>> from fedfreq.kashin import tight_frame
    >>> U = tight_frame(4, 8, rng=0)
    >>> x = np.tile([3.0, 4.0, 0.0, 0.0], (400, 1))
    >>> normalize_estimate(x, U, theta=0.25, m=16, rng=1).shape
    (4,)
    """
    X, U = _check_x_U(x, U)
    p = _check_cpbm_parameters(theta=theta, m=m)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    if y is None:
        Xn = np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)
        Y = kashin_representation(Xn, U, eta=eta, nu=nu, iterations=iterations)
    else:
        Yx = _representation(X, U, y, eta=eta, nu=nu, iterations=iterations)
        Y = np.divide(Yx, norms, out=np.zeros_like(Yx), where=norms > 0)
    C = kashin_level(eta, nu)
    return _cpbm_round(Y, U, theta=p["theta"], C=C, m=p["m"], g=as_generator(rng))


def sample_estimate(
    x, U, *, k: int, theta: float, m: int, eta: float = 0.7, nu: float = 0.3, iterations: int = 20, rng=None, y=None
) -> np.ndarray:
    r"""Baseline "Sample(k)" (Sec. 5.2, App. E): keep at most k items per user, cPBM with :math:`C = Kk`.

    :math:`\|y\|_2 \le K\|x\|_2 \le K\|x\|_1 \le Kk` (footnote 7 of the paper), so
    nothing is clipped; the output estimates the mean of the *sampled*
    histograms. Sample(one) is ``k=1``; Sample(0.25) is
    ``k = ceil(0.25 * max_i ||x_i||_1)``.

    ``y`` (shape (n, D)) may pass precomputed Kashin representations of the rows
    of ``x``. A user with at most k items keeps her histogram, and with it her
    representation; only the sampled histograms are represented anew, once per
    distinct histogram (``unique=True`` of
    :func:`fedfreq.kashin.kashin_representation`: with k = 1 there are at most d).
    The random draws are the same as without ``y``, and the result equals that
    run's up to rounding.

    Examples
    --------
    >>> from fedfreq.kashin import tight_frame
    >>> U = tight_frame(4, 8, rng=0)
    >>> x = np.tile([3.0, 4.0, 0.0, 0.0], (400, 1))
    >>> sample_estimate(x, U, k=2, theta=0.25, m=16, rng=1).shape
    (4,)
    """
    X, U = _check_x_U(x, U)
    p = _check_cpbm_parameters(theta=theta, m=m)
    k = check_int("k", k, low=1)
    g = as_generator(rng)
    Xs = sample_items(np.rint(X).astype(np.int64), k, rng=g).astype(float)
    if y is None:
        Y = kashin_representation(Xs, U, eta=eta, nu=nu, iterations=iterations)
    else:
        Y = _representation(X, U, y, eta=eta, nu=nu, iterations=iterations).copy()
        changed = np.flatnonzero(np.any(Xs != X, axis=1))
        if changed.size:
            Y[changed] = kashin_representation(Xs[changed], U, eta=eta, nu=nu, iterations=iterations, unique=True)
    C = kashin_level(eta, nu) * k
    return _cpbm_round(Y, U, theta=p["theta"], C=C, m=p["m"], g=g)


def central_gaussian_estimate(x, *, C: float, epsilon: float, delta: float, rng=None) -> np.ndarray:
    r"""Baseline "CDP" (Sec. 5.2): a trusted server clips to :math:`\ell_2` norm C and adds Gaussian noise.

    :math:`\hat x = \frac1n\bigl(\sum_i \mathrm{clip}_C(x_i) + \mathcal N(0, \sigma^2 I)\bigr)`
    with :math:`\sigma` = :func:`fedfreq.accounting.gaussian_sigma` at
    sensitivity :math:`2C` (replace-one neighbours, as for the cPBM). The
    threshold is an input: in the central model it can be chosen privately with
    a share of the budget, which is not modelled here.

    The noise is drawn with numpy's floating-point sampler: a simulation of the
    mechanism's law for measuring accuracy, not a deployable release (a float sampler
    has a support gap; integer counts are released safely by
    :func:`fedfreq.deploy.release_counts`).

    Examples
    --------
    >>> central_gaussian_estimate(np.ones((1000, 3)), C=2.0, epsilon=1.0, delta=1e-5, rng=0).shape
    (3,)
    """
    X = check_array("x", x, ndim=2, min_size=1, max_abs=SCALE_MAX)
    C = check_scale("C", C)
    epsilon = check_real(
        "epsilon", epsilon, low=0.0, high=EPSILON_MAX, reason="the Gaussian calibration is verified up to it"
    )
    sigma = gaussian_sigma(epsilon, delta, sensitivity=2.0 * C)
    g = as_generator(rng)
    n = X.shape[0]
    return (clip_l2(X, C).sum(axis=0) + g.normal(0.0, sigma, size=X.shape[1])) / n


def local_gaussian_estimate(x, *, C: float, epsilon: float, delta: float, rng=None) -> np.ndarray:
    r"""Baseline "LDP" (Sec. 5.2): every user clips to C and adds her own Gaussian noise.

    Each report :math:`\mathrm{clip}_C(x_i) + \mathcal N(0,\sigma^2 I)` is
    :math:`(\varepsilon,\delta)`-DP on its own, :math:`\sigma` =
    :func:`fedfreq.accounting.gaussian_sigma` at sensitivity :math:`2C`; the
    server averages, so the noise variance per coordinate is :math:`\sigma^2/n`.

    The noise is drawn with numpy's floating-point sampler: a simulation of the
    mechanism's law for measuring accuracy, not a deployable release (a float sampler
    has a support gap; integer counts are released safely by
    :func:`fedfreq.deploy.release_counts`).

    Examples
    --------
    >>> local_gaussian_estimate(np.ones((1000, 3)), C=2.0, epsilon=1.0, delta=1e-5, rng=0).shape
    (3,)
    """
    X = check_array("x", x, ndim=2, min_size=1, max_abs=SCALE_MAX)
    C = check_scale("C", C)
    epsilon = check_real(
        "epsilon", epsilon, low=0.0, high=EPSILON_MAX, reason="the Gaussian calibration is verified up to it"
    )
    sigma = gaussian_sigma(epsilon, delta, sensitivity=2.0 * C)
    g = as_generator(rng)
    return (clip_l2(X, C) + g.normal(0.0, sigma, size=X.shape)).mean(axis=0)
