"""Checkers for the exercises on the two protocols: TFFE's privacy and the multi-round threshold."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._rng import as_generator
from ..accounting import cpbm_rdp
from ..cpbm import optimal_quantile
from ..protocols import tffe_rdp
from ._result import CheckResult, StudentError, attempt, checker, not_yet, passed, student_int

__all__ = [
    "check_multiround_level",
    "check_tffe_rdp",
    "check_warmup_rounds",
    "check_online_threshold",
]


@checker
def check_multiround_level(
    func: Callable[[int, int, int, int, float], float],
    *,
    rng: np.random.Generator | int | None = 20260405,
) -> CheckResult:
    r"""Self-check for the exercise "the optimal quantile level of the multi-round protocol".

    ``func(D, m, N, R, theta)`` must return the quantile level :math:`\gamma^*` that
    minimises the Eq. 4 bound of the *averaged* estimator :math:`\frac1R\sum_r \hat
    x^{(r)}` of :math:`R` rounds with :math:`N` users each (the anonymous submission
    on optimal contribution bounding, Corollary 1). Checked on nine designs (three
    fixed, six random) to 1e-9 absolute (deterministic: no false fails); the message
    never reveals the expected level.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def level(D, m, N, R, theta):
    ...     return 0.5
    >>> check_multiround_level(level).passed
    False
    """
    gen = as_generator(rng)
    cases = [(100, 15, 1000, 100, 0.2), (200, 30, 500, 4, 0.2), (50, 8, 2000, 10, 0.25)]
    cases += [
        (
            int(gen.integers(10, 400)),
            int(gen.integers(4, 64)),
            int(gen.integers(500, 5000)),
            int(gen.integers(2, 200)),
            float(gen.uniform(0.15, 0.25)),
        )
        for _ in range(6)
    ]
    for i, (D, m, N, R, theta) in enumerate(cases, 1):
        try:
            got = float(attempt(func, D, m, N, R, theta))
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet(f"case {i}: a quantile level is one number")
        if not math.isfinite(got) or not 0.0 <= got <= 1.0:
            return not_yet(f"case {i}: a quantile level must lie in [0, 1]; got {got!r}")
        want = optimal_quantile(D=D, m=m, n=N * R, theta=theta)
        if abs(got - want) > 1e-9:
            hint = (
                "your level ignores the number of rounds: the averaged estimator's noise comes from all users"
                if abs(got - optimal_quantile(D=D, m=m, n=N, theta=theta)) < 1e-9
                else "differentiate the Eq. 4 bound of the averaged estimator with respect to C"
            )
            return not_yet(f"case {i} of {len(cases)}, R = {R}: {hint}")
    return passed(f"your level is optimal in all {len(cases)} designs")


@checker
def check_tffe_rdp(
    func: Callable[..., np.ndarray],
    *,
    rng: np.random.Generator | int | None = 20260406,
) -> CheckResult:
    r"""Self-check for the exercise "the RDP curve of TFFE".

    ``func(orders, n, D, b, theta, m, theta_q, m_q, changed)`` must return the RDP of the
    two-phase protocol at every order of the array ``orders`` (the anonymous OcPBM
    submission, Proposition 4): the frequency step (cPBM on the :math:`D` Kashin
    coordinates with :math:`(m, \theta)`) composed with the Haar quantile step of depth
    :math:`b` (cPBM with :math:`(m', \theta')`), the latter charged for the coordinates a
    user can change when ``changed`` is true and for all Haar coefficients otherwise.
    Compared with :func:`fedfreq.protocols.tffe_rdp` on eight designs (two fixed, six
    random, :math:`\theta \ne \theta'` and :math:`m \ne m'` among them) to a relative 1e-9
    (deterministic: no false fails). The message names the design that fails, never the
    expected values, and is the same whichever side of them the attempt lies.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def curve(orders, n, D, b, theta, m, theta_q, m_q, changed):
    ...     return np.zeros(len(orders))
    >>> check_tffe_rdp(curve).passed
    False
    """
    gen = as_generator(rng)
    orders = np.array([1.5, 2.0, 4.0, 8.0, 16.0, 32.0])
    cases = [(10_000, 100, 6, 0.2, 30, 0.2, 3, False), (10_000, 100, 6, 0.2, 30, 0.2, 3, True)]
    cases += [
        (
            int(gen.integers(500, 50_000)),
            int(gen.integers(4, 300)),
            int(gen.integers(2, 12)),
            float(np.round(gen.uniform(0.05, 0.25), 3)),
            int(gen.integers(1, 40)),
            float(np.round(gen.uniform(0.05, 0.25), 3)),
            int(gen.integers(1, 10)),
            bool(k % 2),
        )
        for k in range(6)
    ]
    for i, (n, D, b, theta, m, theta_q, m_q, changed) in enumerate(cases, 1):
        try:
            got = np.asarray(attempt(func, orders.copy(), n, D, b, theta, m, theta_q, m_q, changed), dtype=float)
        except StudentError as err:
            return err.result
        except (TypeError, ValueError):
            return not_yet(f"case {i}: expected one number per order")
        if got.shape != orders.shape or not np.all(np.isfinite(got)):
            return not_yet(f"case {i}: expected {orders.size} finite numbers, one per order; got shape {got.shape}")
        curves = {
            rule: np.asarray(tffe_rdp(orders, n=n, D=D, b=b, theta=theta, m=m, theta_q=theta_q, m_q=m_q, rule=rule))
            for rule in ("changed", "all")
        }
        want = curves["changed" if changed else "all"]
        if np.allclose(got, want, rtol=1e-9, atol=0.0):
            continue
        design = f"case {i} of {len(cases)} (n = {n}, D = {D}, b = {b}, changed = {changed})"
        freq = cpbm_rdp(orders, n=n, theta=theta, m=m, dim=D)
        if np.allclose(got, freq, rtol=1e-9, atol=0.0):
            return not_yet(f"{design}: your curve is that of one step only; the server sees two releases")
        other = curves["all" if changed else "changed"]
        if np.allclose(got, other, rtol=1e-9, atol=0.0):
            return not_yet(
                f"{design}: the quantile step is charged for the wrong number of Haar coefficients "
                "for this value of `changed`"
            )
        return not_yet(
            f"{design}: your curve differs from the composed RDP. Check which parameters each step "
            "uses (theta or theta', m or m') and how many coordinates each step is charged for."
        )
    return passed(f"your curve is the composed RDP of TFFE in all {len(cases)} designs")


@checker
def check_warmup_rounds(
    func: Callable[[float, float, float, float], int],
    *,
    rng: np.random.Generator | int | None = 20260407,
) -> CheckResult:
    r"""Self-check for the exercise "how long must the online threshold travel?".

    ``func(C1, C_star, eta, gamma)`` must return the least number of updates
    :math:`C \leftarrow C\exp(-\eta(\hat\gamma - \gamma))` after which the threshold of the
    multi-round protocol, started at ``C1``, can have reached ``C_star`` (from below: at
    least ``C_star``; from above: at most ``C_star``; 0 when ``C1 == C_star``), whatever the
    estimated levels :math:`\hat\gamma \in [0, 1]` are. Checked on fourteen designs (starts
    below and above, slow and fast rates; none where the exact count is within 5 % of an
    integer, so rounding cannot matter) by exact equality (deterministic: no false fails).
    The message says whether the failing start lies below or above ``C_star``, never the
    count, and is the same whichever side of the count the attempt lies.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def rounds(C1, C_star, eta, gamma):
    ...     return 0
    >>> check_warmup_rounds(rounds).passed
    False
    """
    gen = as_generator(rng)
    cases = [(1.0, 37.0, 1.0, 0.95), (100.0, 37.0, 1.0, 0.95), (5.0, 5.0, 1.0, 0.9)]
    while len(cases) < 14:
        C1 = float(np.exp(gen.uniform(-3.0, 5.0)))
        C_star = float(np.exp(gen.uniform(0.0, 4.0)))
        eta = float(gen.choice([0.3, 1.0, 3.0]))
        gamma = float(gen.uniform(0.6, 0.99))
        step = eta * (gamma if C1 < C_star else 1.0 - gamma)
        exact = abs(math.log(C_star / C1)) / step
        if 0.05 < exact % 1.0 < 0.95:
            cases.append((C1, C_star, eta, gamma))
    for i, (C1, C_star, eta, gamma) in enumerate(cases, 1):
        want = _warmup_rounds(C1, C_star, eta, gamma)
        try:
            got = attempt(func, C1, C_star, eta, gamma)
        except StudentError as err:
            return err.result
        try:
            got_n = student_int(got, f"case {i}: a number of rounds", low=0, high=2**62)
        except StudentError as err:
            return err.result
        if got_n != want:
            where = "equal to" if C1 == C_star else ("below" if C1 < C_star else "above")
            return not_yet(
                f"case {i} of {len(cases)}, a start {where} C*: wrong count. How far can one update "
                "move log C at most in this direction, given that the estimated level lies in [0, 1]?"
            )
    return passed(f"your count is right in all {len(cases)} designs")


def _warmup_rounds(C1: float, C_star: float, eta: float, gamma: float) -> int:
    """The least number of geometric updates that can carry C1 to C_star."""
    if C1 == C_star:
        return 0
    step = eta * (gamma if C1 < C_star else 1.0 - gamma)
    return math.ceil(abs(math.log(C_star / C1)) / step)


@checker
def check_online_threshold(
    func: Callable[[float, int, float, float, float, int, float], float],
    *,
    rng: np.random.Generator | int | None = 20260408,
) -> CheckResult:
    r"""Self-check for the exercise "the server's step of the online threshold".

    ``func(S, N, C, eta, gamma, m_q, theta_q)`` receives the secure sum ``S`` of the
    :math:`N` users' cPBM reports (parameters :math:`m'`, :math:`\theta'`, :math:`C = 1`) of
    the indicator :math:`\mathbb 1\{\lVert y_i\rVert_2 > C\}`, and must return the next
    threshold of the multi-round protocol (the anonymous OcPBM submission, Algorithm 7):
    decode the fraction of users above ``C``, estimate the level :math:`\hat\gamma` of
    ``C``, and update :math:`C \exp(-\eta(\hat\gamma - \gamma))`. The check tests, in this
    order, that the threshold stays put when the estimated level equals the target, that
    it grows when more users lie above it, and the value on ten designs to a relative
    1e-9 (deterministic: no false fails). The messages name the failing property, never
    the expected threshold, and are the same whichever side of it the attempt lies.

    Examples
    --------
    Write your function with this signature and pass it to the checker (the
    placeholder below only shows the call; it is not an answer):

    >>> def step(S, N, C, eta, gamma, m_q, theta_q):
    ...     return C
    >>> check_online_threshold(step).passed
    False
    """
    gen = as_generator(rng)

    def reference(S, N, C, eta, gamma, m_q, theta_q):
        above = (S - m_q * N / 2.0) / (m_q * theta_q * N)
        return C * math.exp(-eta * ((1.0 - above) - gamma))

    def call(*args):
        got = attempt(func, *args)
        try:
            val = float(got)
        except (TypeError, ValueError):
            raise StudentError(not_yet("a threshold is one number")) from None
        if not math.isfinite(val) or val <= 0:
            raise StudentError(not_yet(f"a threshold is a finite positive number; got {got!r}"))
        return val

    N, C, eta, gamma, m_q, theta_q = 1000, 20.0, 1.0, 0.9, 15, 0.2
    S_fixed = m_q * N / 2.0 + m_q * theta_q * N * (1.0 - gamma)  # decodes to exactly 1 - gamma above C
    cases = [(int(gen.integers(100, 5000)), float(np.exp(gen.uniform(-2, 5)))) for _ in range(10)]
    try:
        if not math.isclose(call(S_fixed, N, C, eta, gamma, m_q, theta_q), C, rel_tol=1e-9):
            return not_yet(
                "when the reports say that exactly the target fraction of users lies above C, "
                "the threshold should not move; yours does. Check how S is decoded."
            )
        lo = call(S_fixed - 300.0, N, C, eta, gamma, m_q, theta_q)
        hi = call(S_fixed + 300.0, N, C, eta, gamma, m_q, theta_q)
        if not hi > lo:
            return not_yet(
                "your threshold does not grow when more users report being above it: the update "
                "must move C towards the target level"
            )
        for i, (N_, C_) in enumerate(cases, 1):
            eta_ = float(gen.choice([0.3, 1.0, 3.0]))
            gamma_ = float(gen.uniform(0.6, 0.99))
            m_ = int(gen.integers(1, 40))
            th_ = float(gen.uniform(0.05, 0.25))
            S_ = float(gen.binomial(m_ * N_, 0.5 + th_ * gen.uniform(0.0, 0.5)))
            got = call(S_, N_, C_, eta_, gamma_, m_, th_)
            if not math.isclose(got, reference(S_, N_, C_, eta_, gamma_, m_, th_), rel_tol=1e-9):
                return not_yet(
                    f"case {i} of {len(cases)}: the fixed point and the direction are right, the step "
                    "is not. Check the centring and the scale of the decoded fraction (they depend on "
                    "m', theta' and N) and where the learning rate enters."
                )
    except StudentError as err:
        return err.result
    return passed(f"fixed point, direction and the update in all {len(cases)} designs are right")
