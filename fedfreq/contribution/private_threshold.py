"""Private choices of the clipping threshold: output perturbation (Algorithm 2 /
Corollary 4.5), DP-SGD on the surrogate (Corollary 4.4), and private quantiles by noisy
gradient descent or the exponential mechanism.
"""

from __future__ import annotations

import math

import numpy as np

from .._rng import as_generator
from .._validation import EPSILON_MAX, SCALE_MAX, check_array, check_epsilon, check_int, check_real, check_scale
from ..accounting import gaussian_sigma
from ._checks import _delta
from .bounded import _norm_pair, regularized_threshold
from .unbounded import exponential_mechanism_probabilities

__all__ = ["output_perturbation_threshold", "private_threshold_sgd", "private_quantile", "private_quantile_gd"]


def output_perturbation_threshold(
    l1_norms,
    l2_norms,
    *,
    d: int,
    sigma: float,
    C_max: float,
    s: float,
    epsilon_prime: float,
    rng=None,
    lam: float | None = None,
    project: bool = True,
) -> float:
    r"""Algorithm 2 of Liu et al. 2023: private threshold by output perturbation (ε'-DP).

    :math:`\lambda = 2\sqrt{2s}/(C_m\sqrt{n\varepsilon'})`, :math:`\Delta = 4\sqrt s/(\lambda n)`,
    :math:`C_{output} = C' + \mathrm{Lap}(\Delta/\varepsilon')` with C' from
    :func:`regularized_threshold`. Lemma A.1 bounds the replace-one sensitivity of
    C' by Δ. ``project=True`` maps the result to :math:`[0, C_m]` (post-processing,
    needed because a negative threshold is meaningless; it only moves the output
    closer to C', which lies in :math:`[0, C^*] \subseteq [0, C_m]`).

    Examples
    --------
    >>> c = output_perturbation_threshold(
    ...     [4.0] * 50, [2.0] * 50, d=4, sigma=1.0, C_max=10.0, s=4.0, epsilon_prime=1.0, rng=0
    ... )
    >>> bool(0.0 <= c <= 10.0)
    True
    """
    dd = check_int("d", d, low=1)
    l1, _ = _norm_pair(l1_norms, l2_norms, dd)
    cm = check_scale("C_max", C_max)
    ss = check_real("s", s, low=1.0, high=SCALE_MAX)
    ep = check_epsilon("epsilon_prime", epsilon_prime, high=EPSILON_MAX)
    if not isinstance(project, bool | np.bool_):
        raise ValueError(f"project must be True or False; got {project!r}")
    gen = as_generator(rng)
    n = l1.size
    lm = (
        2.0 * math.sqrt(2.0 * ss) / (cm * math.sqrt(n * ep))
        if lam is None
        else check_real("lam", lam, low=0.0, low_open=True)
    )
    c1 = regularized_threshold(l1_norms, l2_norms, d=dd, sigma=sigma, lam=lm, s=ss)
    out = c1 + gen.laplace(0.0, 4.0 * math.sqrt(ss) / (lm * n) / ep)
    return float(min(max(out, 0.0), cm)) if project else float(out)


def private_threshold_sgd(
    l1_norms,
    l2_norms,
    *,
    d: int,
    sigma: float,
    C_max: float,
    s: float,
    epsilon_prime: float,
    delta_prime: float,
    steps: int | None = None,
    rng=None,
    noise_multiplier: float | None = None,
    average: bool = False,
) -> float:
    r"""Private estimate of C* by noisy SGD (Bassily, Smith & Thakurta 2014, Alg. 1); Liu et al. 2023, Cor. 4.4.

    Per-user loss :math:`g_i(C) = f_i(C) + MC/n` with the ratio
    :math:`\|N_i\|_1/\|N_i\|_2` capped at :math:`\sqrt s`, so that
    :math:`g_i` is L-Lipschitz with :math:`L = \sqrt s + M/n`. For
    ``T = steps`` iterations (default :math:`n^2`, as in Bassily et al.): pick a
    user i uniformly, and set
    :math:`C_{t+1} = \Pi_{[0, C_m]}\big(C_t - \eta_t (n\,g_i'(C_t) + b_t)\big)`,
    :math:`b_t \sim \mathcal N(0, \sigma_{sgd}^2)`,
    :math:`\sigma_{sgd}^2 = 32 L^2 T \log(n/\delta')\log(1/\delta')/\varepsilon'^2`
    (their Algorithm 1 with T = n² has :math:`n^2` in place of T),
    :math:`\eta_t = C_m/\sqrt{t(n^2L^2 + \sigma_{sgd}^2)}`. Returns the last
    iterate. The privacy proof (sampling amplification + advanced composition)
    is theirs; this is a floating-point simulation.

    ``noise_multiplier`` z replaces their closed-form calibration by
    :math:`\sigma_{sgd} = z\,nL` (z from a tighter accountant of the same
    one-user-per-step sampling; ε' and δ' are then not used for the noise), and
    ``average=True`` returns the mean of the iterates
    :math:`C_{\lfloor T/2\rfloor+1}, \dots, C_T` instead of the last one
    (post-processing). Both default to Bassily et al.'s choices.

    The T steps are not run one by one in Python: blocks of steps are advanced by
    cumulative sums, with the clipping indicator of each step re-checked along the
    path (see ``_noisy_sgd_path``). The iterates are those of the step-by-step loop
    above, bit for bit unless a projection onto 0 falls inside a block, and then up
    to floating-point rounding; this is about ten times faster than the loop.

    Examples
    --------
    >>> c = private_threshold_sgd(
    ...     [4.0] * 20, [2.0] * 20, d=4, sigma=1.0, C_max=10.0, s=4.0, epsilon_prime=1.0, delta_prime=1e-3, rng=0
    ... )
    >>> bool(0.0 <= c <= 10.0)
    True
    """
    dd = check_int("d", d, low=1)
    l1, l2 = _norm_pair(l1_norms, l2_norms, dd)
    sig = check_scale("sigma", sigma)
    cm = check_scale("C_max", C_max)
    ss = check_real("s", s, low=1.0, high=SCALE_MAX)
    ep = check_epsilon("epsilon_prime", epsilon_prime, high=EPSILON_MAX)
    dp = _delta(delta_prime, "delta_prime")
    n = l1.size
    T = n * n if steps is None else check_int("steps", steps, low=1, high=_MAX_STEPS, reason=_STEPS_REASON)
    gen = as_generator(rng)
    M = dd * sig * math.sqrt(2.0 / math.pi)
    L = math.sqrt(ss) + M / n
    r = np.where(l2 > 0, np.minimum(l1 / np.where(l2 > 0, l2, 1.0), math.sqrt(ss)), 0.0)
    if noise_multiplier is None:
        var = 32.0 * L * L * T * math.log(max(n / dp, math.e)) * math.log(1.0 / dp) / ep**2
    else:
        var = (check_scale("noise_multiplier", noise_multiplier) * n * L) ** 2
    if not isinstance(average, bool | np.bool_):
        raise ValueError(f"average must be True or False; got {average!r}")
    users = gen.integers(0, n, size=T)
    noise = gen.normal(0.0, math.sqrt(var), size=T)
    c, tail = _noisy_sgd_path(
        users, noise, l2=l2, r=r, n=n, M=M, C_max=cm, denom=n * n * L * L + var, half=T // 2 if average else T
    )
    return float(tail / (T - T // 2)) if average else float(c)


_MAX_STEPS = 10**9  # 16 bytes of sampled users and noise per step, held at once (16 GB)
_STEPS_REASON = "the sampled user and the noise of every step are held in memory, 16 bytes a step"
_SGD_CHUNK = 1 << 16  # steps whose step sizes and increments are formed at once (a few MB)
_SGD_BLOCK = 4096  # longest block of steps advanced by one cumulative sum


def _noisy_sgd_path(
    users: np.ndarray,
    noise: np.ndarray,
    *,
    l2: np.ndarray,
    r: np.ndarray,
    n: int,
    M: float,
    C_max: float,
    denom: float,
    half: int,
) -> tuple[float, float]:
    r"""Last iterate of the noisy SGD of :func:`private_threshold_sgd`, and the sum of the iterates from ``half`` on.

    The recursion :math:`C_{t+1} = \Pi_{[0, C_m]}(C_t + \Delta_t)` with
    :math:`\Delta_t = -\eta_t(M - n r_{i_t}\mathbf 1\{\|N_{i_t}\|_2 > C_t\} + b_t)` is
    sequential, but its increment takes one of two values known in advance, and
    the indicator changes only when :math:`C_t` crosses the sampled user's norm.
    Blocks of steps are therefore advanced by one cumulative sum: guess every
    indicator, form the path, re-evaluate the indicators along it (a few rounds
    of this fixed-point iteration), and accept the path up to the first step
    whose indicator disagrees with the path or that leaves :math:`[0, C_m]` at the
    top; that step is then taken exactly, one by one, and the next block starts.
    A cumulative sum adds left to right as the loop does, so without projection
    the iterates are bitwise those of the step-by-step loop. Projections onto 0
    inside a block use the Lindley form
    :math:`C_k = S_k - \min(0, \min_{j \le k} S_j)` of the reflected walk, equal
    to the loop up to floating-point rounding (about :math:`10^{-13} C_m`).
    Memory is O(``_SGD_CHUNK``) beyond ``users`` and ``noise``.
    """
    T = users.size
    cm = float(C_max)
    c = 0.5 * cm
    tail = 0.0
    block = 64
    buf = np.empty(_SGD_BLOCK + 1)
    g0 = n * (M / n - 0.0)  # the gradient of the loop when the sampled user is not clipped
    for s0 in range(0, T, _SGD_CHUNK):
        s1 = min(T, s0 + _SGD_CHUNK)
        u = users[s0:s1]
        eta = cm / np.sqrt(np.arange(s0 + 1, s1 + 1) * denom)
        ru = r[u]
        inc0 = -(eta * (g0 + noise[s0:s1]))
        inc1 = -(eta * (n * (M / n - ru) + noise[s0:s1]))
        # the indicator matters only for users with r_i > 0 (otherwise inc0 == inc1)
        v = np.where(ru > 0, l2[u], -np.inf)
        its = np.empty(s1 - s0)
        m = s1 - s0
        p = 0
        while p < m:
            e = min(m, p + block)
            k = e - p
            vv = v[p:e]
            x = buf[: k + 1]
            a = c < vv
            for _ in range(3):  # fixed-point rounds: the guess of the indicators along the path
                x[0] = c
                np.copyto(x[1:], np.where(a, inc1[p:e], inc0[p:e]))
                np.cumsum(x, out=x)
                y = x[1:]
                if y.min() < 0.0:  # reflection at 0 (Lindley), up to rounding
                    y = y - np.minimum(np.minimum.accumulate(y), 0.0)
                    prev = np.concatenate(([c], y[:-1]))
                else:
                    prev = x[:-1]
                a_new = prev < vv
                if np.array_equal(a_new, a):
                    break
                a, a_used = a_new, a
            else:
                a_new, a = a, a_used  # the path y was formed with a_used; a holds its re-evaluation
            bad = (a_new != a) | (y > cm)
            j = int(bad.argmax()) if bad.any() else k
            its[p : p + j] = y[:j]
            if j:
                c = float(y[j - 1])
            p += j
            if j == k:
                block = min(2 * block, _SGD_BLOCK)
                continue
            block = max(32, min(_SGD_BLOCK, 2 * j))
            for q in range(p, min(m, p + 8)):  # a few exact steps across the disagreement
                c = min(max(c + float(inc1[q] if c < v[q] else inc0[q]), 0.0), cm)
                its[q] = c
            p = min(m, p + 8)
        if s1 > half:
            lo = max(half - s0, 0)
            acc = np.empty(s1 - s0 - lo + 1)
            acc[0] = tail
            acc[1:] = its[lo:]
            tail = float(np.cumsum(acc)[-1])  # left to right, as the loop adds
    return c, tail


def private_quantile_gd(
    values, *, rank: int, epsilon: float, delta: float, steps: int = 200, eta: float = 0.2, init: float = 1.0, rng=None
) -> float:
    r"""(ε, δ)-DP estimate of the ``rank``-th largest value by noisy gradient descent (Andrew et al. 2021, Sec. 2).

    The private "DP-M-quantile" of Liu et al. 2023, Sec. 7.1, which the paper estimates
    "by gradient descent with differential privacy" after Andrew et al. With
    target fraction :math:`\gamma = (n - \mathrm{rank} + \frac12)/n` of values at
    or below the threshold, each step releases the count below the current
    threshold with Gaussian noise and takes a geometric step on the pinball loss:

    .. math:: \tilde b_t = \frac{\#\{i : x_i \le C_t\} + \mathcal N(0, \sigma_b^2)}{n},
       \qquad C_{t+1} = C_t \exp\big(-\eta(\tilde b_t - \gamma)\big).

    Each count has sensitivity 1 (one value added, removed or replaced), and T
    adaptively composed Gaussian mechanisms of noise :math:`\sigma_b` compose
    exactly like one with noise :math:`\sigma_b/\sqrt T`, so
    :math:`\sigma_b = \sqrt T\,\sigma(\varepsilon, \delta)` with σ the analytic
    Gaussian calibration (:func:`fedfreq.accounting.gaussian_sigma`). ``n`` is
    treated as public (replacement neighbours, Liu et al.'s (2023) Definition 3.1). The
    output is the geometric mean of the second half of the iterates
    (post-processing). ``init`` must not depend on the data.

    Parameters
    ----------
    values : array_like, shape (n,)
        The values (e.g. users' ℓ2 norms).
    rank : int
        1 <= rank <= n; 1 is the maximum.
    epsilon, delta : float
        Privacy parameters of the whole run, ε > 0 and δ in (0, 1).
    steps : int
        Number T of noisy steps (>= 2).
    eta : float
        Step size of the geometric update (> 0).
    init : float
        Starting threshold (> 0), fixed before seeing the data.
    rng : Generator, int or None

    Examples
    --------
    >>> x = np.arange(1.0, 1001.0)
    >>> c = private_quantile_gd(x, rank=100, epsilon=5.0, delta=1e-6, rng=0)
    >>> bool(850 < c < 950)
    True
    """
    x = np.sort(check_array("values", values, ndim=1, min_size=1))
    n = x.size
    k = check_int("rank", rank, low=1, high=n)
    eps = check_epsilon("epsilon", epsilon, high=EPSILON_MAX)
    dl = _delta(delta)
    T = check_int("steps", steps, low=2, high=10**6, reason="the steps run one by one")
    lr = check_real("eta", eta, low=0.0, high=10.0, low_open=True)
    c0 = check_real("init", init, low=0.0, low_open=True)
    gen = as_generator(rng)
    sigma_b = math.sqrt(T) * gaussian_sigma(eps, dl, sensitivity=1.0)
    gamma = (n - k + 0.5) / n
    noise = gen.normal(0.0, sigma_b, size=T)
    logc = math.log(c0)
    trace = np.empty(T)
    for t in range(T):  # T steps, each one O(log n): not a per-user loop
        below = float(np.searchsorted(x, math.exp(logc), side="right"))
        logc -= lr * ((below + noise[t]) / n - gamma)
        trace[t] = logc
    return float(math.exp(trace[T // 2 :].mean()))


def private_quantile(values, *, rank: int, grid, epsilon: float, rng=None) -> float:
    r"""ε-DP estimate of the ``rank``-th largest value by the exponential mechanism over ``grid``.

    Utility :math:`u(c) = -|\#\{i : x_i > c\} - (\mathrm{rank} - 1)|`, sensitivity 1
    under replacement; :math:`\Pr[c] \propto e^{\varepsilon u(c)/2}`. This is the
    private quantile used for the "DP-M-quantile" and top-⌈d/ε⌉ baselines.

    Examples
    --------
    >>> private_quantile([1, 2, 3, 50], rank=1, grid=[1, 2, 3, 50], epsilon=50.0, rng=0)
    50.0
    """
    x = check_array("values", values, ndim=1, min_size=1)
    k = check_int("rank", rank, low=1, high=x.size)
    g = np.sort(check_array("grid", grid, ndim=1, min_size=1))
    eps = check_epsilon("epsilon", epsilon, high=EPSILON_MAX)
    gen = as_generator(rng)
    above = x.size - np.searchsorted(np.sort(x), g, side="right")
    u = -np.abs(above - (k - 1)).astype(float)
    p = exponential_mechanism_probabilities(-u, epsilon=eps, sensitivity=1.0)
    return float(g[gen.choice(g.size, p=p)])
