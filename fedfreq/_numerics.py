"""Numerics shared by the package: log-space helpers (log1mexp, logsumexp), the Stirling
and deviance terms and the binomial log-pmf of Loader (2000), and the Walsh–Hadamard transform."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

__all__ = ["log1mexp", "log_expm1", "stirlerr", "bd0", "logsumexp", "binom_logpmf", "fwht"]


def log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - exp(x)) for x <= 0, accurate for x near 0 and for x very negative."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log_expm1(x: np.ndarray) -> np.ndarray:
    """log(exp(x) - 1) for x >= 0 without overflow (equals -inf at x = 0)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return x + np.log(-np.expm1(-x))


def stirlerr(x: np.ndarray) -> np.ndarray:
    """log(x!) - [(x + 1/2) log x - x + log(2π)/2] for x >= 1 (series for x >= 15)."""
    x = np.asarray(x, dtype=float)

    def series(v):
        inv = np.divide(1.0, v)
        if v.size and v.min() > 1e6:  # the dropped terms are below 1/(360 v^3) < 3e-21
            inv *= 1.0 / 12.0
            return inv
        inv2 = inv * inv
        acc = inv2 * (1.0 / 1680.0)
        np.subtract(1.0 / 1260.0, acc, out=acc)
        acc *= inv2
        np.subtract(1.0 / 360.0, acc, out=acc)
        acc *= inv2
        np.subtract(1.0 / 12.0, acc, out=acc)
        acc *= inv
        return acc

    if x.size and x.min() >= 15.0:
        return series(x)
    out = np.empty(x.shape)
    small = x < 15.0
    xs = x[small]
    out[small] = special.gammaln(xs + 1.0) - (xs + 0.5) * np.log(xs) + xs - 0.5 * math.log(2.0 * math.pi)
    out[~small] = series(x[~small])
    return out


def bd0(x: np.ndarray, mean: float) -> np.ndarray:
    """x log(x/mean) + mean - x, accurately also for x close to mean (Loader 2000)."""
    t = np.subtract(x, mean)
    t /= mean

    def series(ts):
        # phi(t) = (1+t) log1p(t) - t = t^2 sum_j (-t)^j / ((j+1)(j+2)), |t| < 0.05;
        # the dropped terms are below |t|^terms < e^-37 relative (Horner, in place)
        tmax = float(max(ts.max(), -ts.min())) if ts.size else 0.0
        terms = 2 if tmax == 0.0 else min(16, max(2, int(math.ceil(-37.0 / math.log(tmax))) + 1))
        acc = np.full(ts.shape, 1.0 / (terms * (terms + 1.0)))
        for j in range(terms - 2, -1, -1):
            acc *= ts
            np.subtract(1.0 / ((j + 1.0) * (j + 2.0)), acc, out=acc)
        acc *= ts
        acc *= ts
        acc *= mean
        return acc

    if t.size and max(t.max(), -t.min()) < 0.05:
        return series(t)
    out = np.empty(t.shape)
    small = np.abs(t) < 0.05
    out[small] = series(t[small])
    tl = t[~small]
    out[~small] = mean * ((1.0 + tl) * np.log1p(tl) - tl)
    return out


def logsumexp(x: np.ndarray) -> float:
    """Fast 1-D logsumexp (-inf for an all -inf input)."""
    mx = float(np.max(x))
    if not math.isfinite(mx):
        return mx
    return mx + math.log(float(np.sum(np.exp(x - mx))))


def binom_logpmf(k: np.ndarray, N: int, p: float) -> np.ndarray:
    """log Bin(k; N, p) by Loader's saddle-point decomposition.

    Absolute error about 1e-16 |k - Np| (1e-10 at N = 1e9 near the mean), where the
    naive gammaln difference, and scipy's binom.logpmf, lose 1e-6 at N = 1e9.
    """
    k = np.asarray(k, dtype=float)
    out = np.empty(k.shape)
    if k.size and k.min() > 0 and k.max() < N:
        mid = slice(None)
    else:
        lo = k == 0
        hi = k == N
        out[lo] = N * math.log1p(-p)
        out[hi] = N * math.log(p)
        mid = ~(lo | hi)
    km = k[mid]
    if km.size == 0:
        return out
    rest = np.subtract(float(N), km)
    # in place: temporaries of the window's size dominate the cost at N = 1e9
    acc = km * rest
    np.divide(N / (2.0 * math.pi), acc, out=acc)
    np.log(acc, out=acc)
    acc *= 0.5
    acc += stirlerr(np.array([float(N)]))[0]
    acc -= stirlerr(km)
    acc -= stirlerr(rest)
    acc -= bd0(km, N * p)
    acc -= bd0(rest, N * (1.0 - p))
    if isinstance(mid, slice):
        return acc
    out[mid] = acc
    return out


def fwht(a: np.ndarray) -> np.ndarray:
    """Unnormalised Walsh-Hadamard transform along the last axis (Sylvester order).

    Equals ``a @ scipy.linalg.hadamard(D)`` (the matrix is symmetric) in
    O(D log D) per row instead of O(D^2).
    """
    a = np.array(a, dtype=float, copy=True)
    lead = a.shape[:-1]
    d = a.shape[-1]
    h = 1
    while h < d:
        a = a.reshape(lead + (d // (2 * h), 2, h))
        top = a[..., 0, :] + a[..., 1, :]
        bottom = a[..., 0, :] - a[..., 1, :]
        a = np.stack([top, bottom], axis=-2)
        h *= 2
    return a.reshape(lead + (d,))
