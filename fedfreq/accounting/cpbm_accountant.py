"""Rényi DP of the secure sum of clipped Poisson binomial (cPBM) outputs: the exact
bound of Lemma 2 of the anonymous submission on optimal contribution bounding, computed in
log space with rigorous tail bounds (valid for n up to 1e9), the paper's printed forms for
comparison, and the exact divergence of small instances.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._numerics import bd0, binom_logpmf, logsumexp, stirlerr
from .._validation import check_array, check_int, check_real
from ._checks import _as_output, _check_orders
from .divergences import renyi_divergence

__all__ = ["cpbm_rdp", "cpbm_lemma2_paper_forms", "cpbm_rdp_exact", "poisson_binomial_logpmf"]


# the clipped Poisson binomial mechanism (the OcPBM paper, Lemma 2)
def _check_theta(theta) -> float:
    return check_real("theta", theta, low=0.0, high=0.25, low_open=True)


def _lemma2_base(n: int, theta: float) -> tuple[int, float, float, float]:
    """(N = n'+1, q = 1/2+θ, a = (1+2θ)/(1-2θ), b = 1/a) for Lemma 2."""
    n_prime = n // 2  # = ceil((n - 1) / 2)
    a = (1.0 + 2.0 * theta) / (1.0 - 2.0 * theta)
    return n_prime + 1, 0.5 + theta, a, 1.0 / a


_FULL_SUM_SIZE = 4096  # below this many support points the whole binomial support is summed

_LOG_TAIL_MARGIN = 40.0  # window: tail bound below e^-40 (4e-18) times the second-order estimate

_TAIL_REL = 2.0**-53  # a posteriori: tail bound below this fraction of the window sum

_CHUNK = 32768  # points per chunk (temporaries stay in the L2 cache)


def _cpbm_tail_bounds(N: int, q: float, a: float, b: float, s: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    r"""Rigorous bounds on the two tails of :math:`\sum_k \mathrm{Bin}(k; N, q)\, g_s(u_k)`.

    Here :math:`1 + u_k = a - (a-b)k/N` (zero at k = Nq) and
    :math:`g_s(u) = (1+u)^s - 1 - s u \ge 0`. Returns ``(log_lower, log_upper)``, bounds
    on the logarithms of :math:`\sum_{k<lo}` and :math:`\sum_{k>hi}`, for integer-valued
    ``lo <= Nq <= hi`` (arrays broadcast with ``s``; ``-inf`` for an empty tail).

    * Polynomial side (lower tail with s < 0, upper tail with s > 0): there
      :math:`(1+u)^s \le 1`, so :math:`g_s(u) \le |s|\,|u| \le |s|\max|u|`, times the
      Chernoff bound :math:`\Pr[K \le lo] \le e^{-N\,\mathrm{KL}(lo/N\,\|\,q)}`
      (and the same for :math:`\Pr[K \ge hi]`).
    * Exponential side (lower tail with s > 0, upper tail with s < 0):
      :math:`g_s(u) \le (1+u)^s = e^{f(k)}`, :math:`f(k) = s\log(1+u_k)`. For s > 0, f is
      concave, so :math:`f(k) \le f(lo) + \beta(lo-k)` with :math:`\beta = -f'(lo)`; for
      s < 0, f is convex on [hi, N] and below its chord, :math:`f(k) \le f(hi) + c(k-hi)`.
      With :math:`e^{\gamma(lo-k)} \ge 1` on the tail, for every :math:`\gamma \ge \beta`,
      :math:`\sum_{k<lo} \le e^{f(lo)+\gamma\,lo}(1-q+qe^{-\gamma})^N`; the minimising
      :math:`\gamma^* = \log\frac{q(N-lo)}{(1-q)lo}` gives
      :math:`e^{f(lo) - N\,\mathrm{KL}(lo/N\|q)}` whenever :math:`\gamma^*\ge\beta`,
      otherwise :math:`\gamma = \beta` is used (mirror image for the upper tail).

    :math:`N\,\mathrm{KL}` is evaluated as ``bd0(lo, Nq) + bd0(N - lo, N(1-q))``
    (no cancellation).
    """
    s = np.asarray(s, dtype=float)
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    Nf = float(N)
    mean = Nf * q
    slope = (a - b) / Nf
    log_lo = np.full(np.broadcast(s, lo).shape, -np.inf)
    log_hi = np.full(np.broadcast(s, hi).shape, -np.inf)
    s_lo, lo_b = np.broadcast_arrays(s, lo)
    s_hi, hi_b = np.broadcast_arrays(s, hi)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # lower tail, k < lo (non-empty for lo >= 1)
        sel = lo_b >= 1.0
        if np.any(sel):
            ss, ll = s_lo[sel], lo_b[sel]
            nkl = bd0(ll, mean) + bd0(Nf - ll, Nf - mean)
            one_u = a - slope * ll
            f = ss * np.log(one_u)
            beta = ss * slope / one_u
            gstar = np.log(q * (Nf - ll) / ((1.0 - q) * ll))
            expo = np.where(
                gstar >= beta,
                f - nkl,
                f + beta * ll + Nf * np.log1p(q * np.expm1(-beta)),
            )
            poly = np.log(np.abs(ss) * (a - 1.0)) - nkl
            log_lo[sel] = np.where(ss > 0, expo, poly)
        # upper tail, k > hi (non-empty for hi <= N - 1)
        sel = hi_b <= Nf - 1.0
        if np.any(sel):
            ss, hh = s_hi[sel], hi_b[sel]
            nkl = bd0(hh, mean) + bd0(Nf - hh, Nf - mean)
            one_u = a - slope * hh
            f = ss * np.log(one_u)
            chord = (ss * math.log(b) - f) / (Nf - hh)
            gstar = np.log(hh * (1.0 - q) / ((Nf - hh) * q))
            expo = np.where(
                gstar >= chord,
                f - nkl,
                f - chord * hh + Nf * np.log1p(q * np.expm1(chord)),
            )
            poly = np.log(np.abs(ss) * (1.0 - b)) - nkl
            log_hi[sel] = np.where(ss < 0, expo, poly)
    return log_lo, log_hi


def _cpbm_window(N: int, q: float, a: float, b: float, s: np.ndarray, log_target: np.ndarray):
    """Per exponent s, a narrow integer window [lo, hi] around Nq whose two tail bounds
    (``_cpbm_tail_bounds``) are below ``log_target``.

    Both half-widths are found by bisection (to 1 % or one point) from a bracket sized by
    the Gaussian approximation; the caller adds the bounds at the returned window, so the
    search affects only the speed, never the validity of the result.
    """
    s = np.asarray(s, dtype=float)
    log_target = np.broadcast_to(np.asarray(log_target, dtype=float), s.shape)
    Nf = float(N)
    mean = Nf * q
    sd = math.sqrt(Nf * q * (1.0 - q))
    shift = np.abs(s) * (a - b) / Nf * sd * sd * max(a, 1.0 / b)  # tilt of the exponential side (a bound)
    prefactor = np.log1p(np.abs(s) * (a - 1.0))
    w0 = shift + sd * np.sqrt(2.0 * np.maximum(prefactor - log_target, 1.0)) * 1.3 + 10.0

    def sides(w_lo, w_hi):
        lo = np.maximum(np.floor(mean - w_lo), 0.0)
        hi = np.minimum(np.ceil(mean + w_hi), Nf)
        lt, ut = _cpbm_tail_bounds(N, q, a, b, s, lo, hi)
        return lo, hi, lt <= log_target, ut <= log_target

    # brackets: (bad, good) per side; a failing guess falls back to the whole support
    _, _, ok_l, ok_u = sides(w0, w0)
    good_l = np.where(ok_l, w0, mean + 1.0)
    good_u = np.where(ok_u, w0, Nf - mean + 1.0)
    bad_l = np.zeros(s.shape)
    bad_u = np.zeros(s.shape)
    for _ in range(64):
        open_l = good_l - bad_l > np.maximum(1.0, 0.01 * good_l)
        open_u = good_u - bad_u > np.maximum(1.0, 0.01 * good_u)
        if not (open_l.any() or open_u.any()):
            break
        mid_l = np.where(open_l, 0.5 * (good_l + bad_l), good_l)
        mid_u = np.where(open_u, 0.5 * (good_u + bad_u), good_u)
        _, _, ok_l, ok_u = sides(mid_l, mid_u)
        good_l, bad_l = np.where(ok_l, mid_l, good_l), np.where(ok_l, bad_l, mid_l)
        good_u, bad_u = np.where(ok_u, mid_u, good_u), np.where(ok_u, bad_u, mid_u)
    lo, hi, _, _ = sides(good_l, good_u)
    return lo.astype(np.int64), hi.astype(np.int64)


def _binom_logpmf_central(k: np.ndarray, N: int, q: float) -> np.ndarray:
    r"""log Bin(k; N, q) near the mean of a large binomial (fast path of ``binom_logpmf``).

    Loader's decomposition with x = k - Nq, A = Nq, B = N(1-q):
    :math:`\log\mathrm{Bin}(k) = \delta(N) - \frac{N}{12k(N-k)}
    - \sum_{j=2}^{J}\frac{x^j}{j(j-1)}\bigl[(-1)^jA^{1-j} + B^{1-j}\bigr]
    + \tfrac12\log\frac{N}{2\pi k(N-k)}`, where the sum is the two deviance terms
    bd0(k, A) + bd0(N-k, B) as one polynomial. Valid (absolute error below 1e-18 plus
    rounding) when min(k, N-k) > 1e6 (the dropped Stirling terms are below 3e-21)
    and r = max|x| / min(A, B) <= 0.05; J is chosen so that the series remainder
    :math:`2\min(A,B)\,r^{J+1}/(1-r)` is below 1e-18.
    """
    Nf = float(N)
    A, B = Nf * q, Nf * (1.0 - q)
    x = np.subtract(k, A)
    r = float(max(x.max(), -x.min())) / min(A, B) if x.size else 0.0
    J = 2
    while J < 40 and 2.0 * min(A, B) * r ** (J + 1) / (1.0 - r) > 1e-18:
        J += 1
    coef = [((-1.0) ** j * A ** (1 - j) + B ** (1 - j)) / (j * (j - 1.0)) for j in range(2, J + 1)]
    poly = np.full(x.shape, coef[-1])
    for c in coef[-2::-1]:
        poly *= x
        poly += c
    poly *= x
    poly *= x
    prod = np.subtract(Nf, k)
    prod *= k
    out = np.divide(Nf / (2.0 * math.pi), prod)
    np.log(out, out=out)
    out *= 0.5
    np.divide(Nf / 12.0, prod, out=prod)
    out -= prod
    out -= poly
    out += stirlerr(np.array([Nf]))[0]
    return out


def _log_excess_moment(N: int, q: float, a: float, b: float, s: np.ndarray) -> np.ndarray:
    r"""log(E[(1+u_K)^s] - 1) for K ~ Bin(N, q), u_k = a - (a-b)k/N - 1, per exponent s.

    E[u_K] = 0, so E[(1+u)^s] - 1 = E[g_s(u)] with g_s(u) = (1+u)^s - 1 - s u >= 0 for
    s >= 1 or s <= 0 (convexity). Summing the non-negative g_s avoids the cancellation
    that loses a divergence of 1e-9 when 1 + 1e-9 is formed.

    For N + 1 > 4096 only a window lo <= k <= hi is summed and the two tails are
    replaced by the rigorous Chernoff-type bounds of ``_cpbm_tail_bounds``, which are
    *added*: the result is an upper bound on the exact value (up to rounding). The
    window is sized so that the bounds are below e^-40 times the second-order estimate
    s(s-1)/2 Var(u); it is then checked that the added bound is below 2^-53 of the
    window's sum, i.e. the truncation moves the result by less than a unit in the last
    place (otherwise the window is re-sized from the window's sum and the sum redone).
    The window is processed in cache-sized chunks.
    """
    s = np.asarray(s, dtype=float).reshape(-1)
    if N + 1 <= _FULL_SUM_SIZE:
        lo_s = np.zeros(s.shape, dtype=np.int64)
        hi_s = np.full(s.shape, N, dtype=np.int64)
    else:
        var_u = (a - b) ** 2 * q * (1.0 - q) / N
        log_guess = np.log(np.maximum(np.abs(s * (s - 1.0)) / 2.0 * var_u, 1e-300))
        lo_s, hi_s = _cpbm_window(N, q, a, b, s, log_guess - _LOG_TAIL_MARGIN)
    out = np.empty(s.shape)
    todo = np.arange(s.size)
    slope = (a - b) / N
    for _attempt in range(4):
        lo_all, hi_all = int(lo_s[todo].min()), int(hi_s[todo].max())
        centre = N * q
        central = min(lo_all, N - hi_all) > 1e6 and max(centre - lo_all, hi_all - centre) <= 0.05 * min(
            centre, N - centre
        )
        logpmf = (lambda kk: _binom_logpmf_central(kk, N, q)) if central else (lambda kk: binom_logpmf(kk, N, q))
        k_ref = float(min(max(round(centre), lo_all), hi_all))
        top = float(logpmf(np.array([k_ref]))[0])
        ends = np.array([lo_s[todo], hi_s[todo]], dtype=float)  # (2, len(todo))
        log_pmf_ends = logpmf(ends.ravel()).reshape(ends.shape)
        t_ends = s[todo] * np.log1p((a - 1.0) - slope * ends)
        # linear-scale summation where nothing can over- or underflow (t and log-pmf are
        # monotone / unimodal in k, so their extremes sit at the window's ends)
        linear = (np.abs(t_ends).max(axis=0) <= 100.0) & (log_pmf_ends.min(axis=0) - top > -600.0)
        sums = np.zeros(todo.size)
        lin_idx = np.flatnonzero(linear)
        if lin_idx.size:
            lo_l, hi_l = lo_s[todo[lin_idx]], hi_s[todo[lin_idx]]
            s_l = s[todo[lin_idx]]
            start, stop = int(lo_l.min()), int(hi_l.max()) + 1
            buf = np.empty(_CHUNK)
            buf2 = np.empty(_CHUNK)
            for c0 in range(start, stop, _CHUNK):
                c1 = min(c0 + _CHUNK, stop)
                k = np.arange(c0, c1, dtype=float)
                w = logpmf(k)
                w -= top
                np.exp(w, out=w)
                u = k  # reuse: u = a - 1 - slope k
                u *= -slope
                u += a - 1.0
                l1pu = np.log1p(u)
                for j in np.flatnonzero((lo_l < c1) & (hi_l >= c0)):
                    i0, i1 = max(int(lo_l[j]), c0) - c0, min(int(hi_l[j]) + 1, c1) - c0
                    g, h = buf[: i1 - i0], buf2[: i1 - i0]
                    np.multiply(l1pu[i0:i1], s_l[j], out=g)
                    np.expm1(g, out=g)
                    np.multiply(u[i0:i1], s_l[j], out=h)
                    g -= h
                    np.maximum(g, 0.0, out=g)
                    g *= w[i0:i1]
                    sums[lin_idx[j]] += float(g.sum())  # pairwise within the chunk
        totals = np.full(todo.size, -np.inf)
        with np.errstate(divide="ignore"):
            totals[lin_idx] = top + np.log(sums[lin_idx])
        for j in np.flatnonzero(~linear):
            i = todo[j]
            si = s[i]
            k = np.arange(lo_s[i], hi_s[i] + 1, dtype=float)
            u = (a - 1.0) - slope * k
            t = si * np.log1p(u)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                # g = expm1(t) - s u; for t > 30 write it as e^t (1 - (1 + s u) e^{-t})
                big = t > 30.0
                g_small = np.expm1(np.where(big, 0.0, t)) - si * u
                log_g = np.where(
                    big,
                    t + np.log1p(-(1.0 + si * u) * np.exp(-np.where(big, t, 0.0))),
                    np.log(np.maximum(g_small, 0.0)),
                )
            totals[j] = logsumexp(logpmf(k) + log_g)
        log_tail_lo, log_tail_hi = _cpbm_tail_bounds(N, q, a, b, s[todo], lo_s[todo], hi_s[todo])
        log_tail = np.logaddexp(log_tail_lo, log_tail_hi)
        out[todo] = np.logaddexp(totals, log_tail)
        # a posteriori: is the added tail bound below 2^-53 of the window's sum?
        bad = np.isfinite(totals) & (log_tail > totals + math.log(_TAIL_REL))
        retry = []
        for j in np.flatnonzero(bad):
            i = todo[j]
            new_lo, new_hi = _cpbm_window(N, q, a, b, s[i : i + 1], np.array([totals[j] + math.log(_TAIL_REL) - 2.0]))
            if new_lo[0] < lo_s[i] or new_hi[0] > hi_s[i]:
                lo_s[i], hi_s[i] = min(new_lo[0], lo_s[i]), max(new_hi[0], hi_s[i])
                retry.append(i)
        if not retry:
            break
        todo = np.array(retry)
    # every returned value is a window's sum plus a rigorous bound on the rest
    return out


#: Largest number of users the cPBM accountant accepts (its cost grows like √n).
MAX_USERS = 10**12

#: Largest Rényi order the cPBM accountant accepts (its window and tail bounds are
#: checked up to here; the bound has reached its limit at order 1e15).
MAX_ORDER = 1e15


def cpbm_rdp(order, *, n: int, theta: float, m: int, dim: int):
    r"""Rényi DP of the secure sum of ``n`` users' clipped Poisson binomial (cPBM) outputs.

    Each user clips her vector to ℓ2 norm C, maps every coordinate to
    :math:`p = \theta y/C + 1/2 \in [\tfrac12-\theta, \tfrac12+\theta]` and sends
    :math:`\mathrm{Binom}(m, p)` per coordinate; the server sees the coordinate-wise sums.
    Under replace-one neighbours (n fixed) the order-λ RDP is at most

    .. math::

        \varepsilon(\lambda) &= \frac{m\,\mathrm{dim}}{\lambda-1}\log\max(\Pi_1, \Pi_2),\\
        \Pi_1 &= \mathbb E\bigl[(1+u_K)^{\lambda}\bigr],\quad
        \Pi_2 = \mathbb E\bigl[(1+u_K)^{1-\lambda}\bigr],

    with :math:`K \sim \mathrm{Bin}(n'+1, \tfrac12+\theta)`, :math:`n' = \lceil (n-1)/2\rceil`,
    :math:`a = \frac{1+2\theta}{1-2\theta}` and
    :math:`1+u_k = a\frac{n'+1-k}{n'+1} + \frac1a\frac{k}{n'+1}` (:math:`= e^{\xi_k}` of the
    paper). :math:`\Pi_1` is :math:`e^{(\lambda-1)D_\lambda(P\|Q)}` and :math:`\Pi_2` is
    :math:`e^{(\lambda-1)D_\lambda(Q\|P)}` for
    :math:`P = \mathrm{Ber}(\tfrac12-\theta) + \mathrm{Bin}(n', \tfrac12+\theta)`,
    :math:`Q = \mathrm{Bin}(n'+1, \tfrac12+\theta)`; this is the OcPBM paper, Lemma 2 in the form
    of its Appendix C.2 (whose :math:`\Pi_2`, after the substitution
    :math:`k \to n'+1-k`, is this one), with two corrections verified in the book's
    chapter on the cPBM: ``dim`` must count the coordinates that are actually
    privatised (the Kashin dimension D, not the data dimension d), and the main
    text's :math:`\mu_m` and :math:`\Pi_2` are misprinted.

    Evaluation: :math:`\Pi - 1 = \mathbb E[(1+u)^s - 1 - s u]` (because
    :math:`\mathbb E u_K = 0`) is a sum of non-negative terms, so divergences of 1e-9
    keep their relative accuracy at n = 1e9. For n'+2 > 4096 only a window
    :math:`lo \le k \le hi` around the mean is summed (about ±11 standard
    deviations); each tail is replaced by a rigorous Chernoff bound
    (exponential tilting of the binomial, with a tangent or chord bound on
    :math:`(1+u_k)^s`), which is *added*, and the window is widened until the added
    bound is below :math:`2^{-53}` of the window's sum. Hence the truncation error
    satisfies :math:`0 \le \hat\Pi - \Pi \le 2^{-53}(\Pi - 1)`: the result is never
    below the exact value (floating-point rounding aside: relative error about
    1e-13, at most 2e-11 for θ = 0.001, against 50-digit references) and costs
    about 10-20 ms per order at n = 1e9.

    Parameters
    ----------
    order : float or array_like
        Rényi order(s) λ in (1, 1e15] (vectorised).
    n : int
        Number of users, 1 <= n <= 1e12 (the window summed grows like √n: about a second
        per order at 1e12).
    theta : float
        cPBM parameter θ in (0, 1/4].
    m : int
        Binomial trials per coordinate, m >= 1.
    dim : int
        Number of privatised coordinates (D for the cPBM of Kashin coefficients), >= 1.

    Returns
    -------
    float or ndarray
        ε(λ), matching the shape of ``order``.

    Examples
    --------
    >>> round(cpbm_rdp(2.0, n=1, theta=0.25, m=1, dim=1), 6)   # randomized response, p = 3/4
    0.847298
    >>> 0 < cpbm_rdp(2.0, n=10**9, theta=0.2, m=1, dim=1) < 1e-8
    True
    """
    alpha, scalar = _check_orders(order)
    if np.any(alpha > MAX_ORDER):
        raise ValueError(
            f"order must lie in (1, {MAX_ORDER:g}] (checked range of the accountant; beyond it the "
            f"bound equals its limit m*dim*log((1+2theta)/(1-2theta)) to double precision); got max {alpha.max()!r}"
        )
    n_ = check_int("n", n, low=1, high=MAX_USERS, reason="the accountant sums a window growing like sqrt(n)")
    th = _check_theta(theta)
    m_ = check_int("m", m, low=1)
    dim_ = check_int("dim", dim, low=1)
    N, q, a, b = _lemma2_base(n_, th)
    lam = alpha.reshape(-1)
    s = np.concatenate([lam, 1.0 - lam])
    log_excess = _log_excess_moment(N, q, a, b, s)
    log_pi = np.logaddexp(0.0, log_excess)  # log(1 + (Pi - 1))
    k = lam.size
    out = m_ * dim_ * np.maximum(log_pi[:k], log_pi[k:]) / (lam - 1.0)
    return _as_output(out.reshape(alpha.shape), scalar)


def cpbm_lemma2_paper_forms(order, *, n: int, theta: float, form: str):
    r"""log Π1 and log Π2 of the OcPBM paper's Lemma 2 exactly as printed (for checking the paper).

    ``form="main"`` transcribes Section 3.2:
    :math:`\Pi_2 = \sum_{m=0}^{n'+1}\mathrm{Bin}(m, n', \tfrac12-\theta)
    \bigl(\frac{m}{n'-m+1}\frac{1+2\theta}{1-2\theta} + \frac{1-2\theta}{1+2\theta}\bigr)e^{-\lambda\mu_m}`
    with :math:`\mu_m = \log(\frac{1+2\theta}{1-2\theta}\frac{n'+1-m}{n'+1})`;
    ``form="appendix"`` transcribes Appendix C.2, whose :math:`\Pi_2` carries an extra
    factor :math:`(\tfrac12+\theta)` and :math:`\mu_m = \log(\frac{1+2\theta}{1-2\theta}
    \frac{m}{n'+1} + \frac{1-2\theta}{1+2\theta}\frac{n'+1-m}{n'+1})`. Both share
    :math:`\Pi_1`. The term m = n'+1 of :math:`\Pi_2` is a 0·∞ product in the printed
    form; it is evaluated as its limit
    :math:`\bigl(\tfrac12-\theta\bigr)^{n'} e^{-\lambda\mu_{n'+1}}` times the printed
    prefactor (1 for the main text, 1/2+θ for the appendix); in the main text
    :math:`\mu_{n'+1} = \log 0`, so its :math:`\Pi_2` is infinite.
    Direct summation: meant for small n (n' <= 10^5).

    Returns
    -------
    (log_pi1, log_pi2) : tuple of float or ndarray
        Natural logarithms, matching the shape of ``order`` (``inf`` where the printed
        sum is infinite).

    Examples
    --------
    >>> l1, l2 = cpbm_lemma2_paper_forms(2.0, n=5, theta=0.2, form="appendix")
    >>> bool(abs(max(l1, l2) - cpbm_rdp(2.0, n=5, theta=0.2, m=1, dim=1)) < 1e-12)
    True
    """
    alpha, scalar = _check_orders(order)
    n_ = check_int("n", n, low=1)
    th = _check_theta(theta)
    if form not in ("main", "appendix"):
        raise ValueError(f"form must be one of ['appendix', 'main']; got {form!r}")
    N, q, a, b = _lemma2_base(n_, th)
    n_prime = N - 1
    if n_prime > 100_000:
        raise ValueError(f"n must be at most 200001 for direct summation; got {n_}")
    k = np.arange(0, N + 1, dtype=float)
    lam = alpha.reshape(-1, 1)
    xi = np.log(a * (N - k) / N + b * k / N)
    log_pi1 = special.logsumexp(binom_logpmf(k, N, q) + lam * xi, axis=1)
    with np.errstate(divide="ignore"):
        if form == "main":
            mu = np.log(a * (N - k) / N)  # -inf at k = N
        else:
            mu = np.log(a * k / N + b * (N - k) / N)
    # Bin(k, n', 1/2 - theta) * (k/(n'-k+1) * a + b), with the k = n'+1 limit
    r = 0.5 - th
    kk = k[:-1]
    log_bin = binom_logpmf(kk, n_prime, r)
    front = np.empty(N + 1)
    front[:-1] = log_bin + np.log(kk / (n_prime - kk + 1.0) * a + b)
    front[-1] = n_prime * math.log(r)  # lim Bin(k, n', r) (k a/(n'-k+1) + b) at k = n'+1
    if form == "appendix":
        front = front + math.log(0.5 + th)
    with np.errstate(invalid="ignore"):
        terms = front - lam * mu
    terms = np.where(np.isnan(terms) | (terms == np.inf), np.inf, terms)
    log_pi2 = special.logsumexp(terms, axis=1)
    return _as_output(log_pi1.reshape(alpha.shape), scalar), _as_output(log_pi2.reshape(alpha.shape), scalar)


def poisson_binomial_logpmf(probs, *, m: int = 1) -> np.ndarray:
    r"""Log-pmf of :math:`S = \sum_j \mathrm{Binom}(m, p_j)` on :math:`\{0, \dots, m\,J\}`.

    Computed by successive convolution in log space (J·m convolution steps of
    length at most mJ + 1): exact up to rounding, for small instances (brute-force
    privacy audits).

    Parameters
    ----------
    probs : array_like
        1-D array of the J >= 0 success probabilities, each in [0, 1].
    m : int, default 1
        Trials per user.

    Examples
    --------
    >>> np.exp(poisson_binomial_logpmf([0.5, 0.5])).round(3).tolist()
    [0.25, 0.5, 0.25]
    """
    p = check_array("probs", probs, ndim=1, low=0.0, high=1.0)
    m_ = check_int("m", m, low=1, high=10_000, reason="the law is built by m successive convolutions")
    out = np.zeros(1)
    with np.errstate(divide="ignore"):
        for pj in p:
            lp, lq = math.log(pj) if pj > 0 else -np.inf, math.log1p(-pj) if pj < 1 else -np.inf
            for _ in range(m_):
                new = np.full(out.size + 1, -np.inf)
                new[:-1] = out + lq
                new[1:] = np.logaddexp(new[1:], out + lp)
                out = new
    return out


def cpbm_rdp_exact(order, *, n: int, theta: float, m: int = 1, grid: int = 2):
    r"""Brute-force worst-case Rényi divergence of one cPBM coordinate's secure sum (small n).

    Maximises, over ordered replace-one neighbours, the exact divergence
    :math:`D_\lambda(S + Z \,\|\, S + Z')` where the changed user sends
    :math:`Z \sim \mathrm{Binom}(m, p)`, :math:`Z' \sim \mathrm{Binom}(m, p')`,
    :math:`p, p' \in \{\tfrac12-\theta, \tfrac12+\theta\}`, and the other n - 1 users'
    probabilities range over all multisets of ``grid`` equally spaced points of
    :math:`[\tfrac12-\theta, \tfrac12+\theta]`. For m = 1 the two endpoints (``grid=2``)
    give the exact supremum over *all* configurations: the moment
    :math:`\sum P^\lambda Q^{1-\lambda}` is jointly convex in (P, Q), and P, Q are affine
    in each user's probability, so the maximum sits at a vertex of the box; by
    symmetry only the number j of others at the upper endpoint matters. For m > 1
    the result is a lower bound on the supremum (a grid search).

    Parameters
    ----------
    order : float or array_like
        Rényi order(s) λ > 1.
    n : int
        Number of users, 1 <= n <= 60 (m (n) + 1 support points are enumerated).
    theta : float
        θ in (0, 1/4].
    m : int, default 1
        Trials per user, 1 <= m <= 16.
    grid : int, default 2
        Number of grid points for the other users' probabilities (>= 2).

    Returns
    -------
    float or ndarray
        The maximal divergence, matching ``order``.

    Examples
    --------
    >>> exact = cpbm_rdp_exact(2.0, n=5, theta=0.2)
    >>> bool(exact <= cpbm_rdp(2.0, n=5, theta=0.2, m=1, dim=1))
    True
    """
    import itertools

    alpha, scalar = _check_orders(order)
    n_ = check_int("n", n, low=1, high=60)
    th = _check_theta(theta)
    m_ = check_int("m", m, low=1, high=16)
    g = check_int("grid", grid, low=2, high=50)
    points = np.linspace(0.5 - th, 0.5 + th, g)
    ends = (0.5 - th, 0.5 + th)
    best = np.zeros(alpha.reshape(-1).shape)
    k = np.arange(m_ + 1, dtype=float)
    user = {p: binom_logpmf(k, m_, p) for p in ends}
    for others in itertools.combinations_with_replacement(points, n_ - 1):
        base = poisson_binomial_logpmf(np.array(others), m=m_)
        dists = {}
        for p in ends:
            conv = np.full(base.size + m_, -np.inf)
            for z in range(m_ + 1):
                conv[z : z + base.size] = np.logaddexp(conv[z : z + base.size], base + user[p][z])
            dists[p] = conv - special.logsumexp(conv)
        for p, pp in ((ends[0], ends[1]), (ends[1], ends[0])):
            best = np.maximum(best, np.atleast_1d(renyi_divergence(dists[p], dists[pp], alpha.reshape(-1))))
    return _as_output(best.reshape(alpha.shape), scalar)
