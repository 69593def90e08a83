"""Time the package's kernels against their natural limits, as ratios, in one run.

Usage::

    python scripts/bench.py            # the full benchmark (about 1-2 minutes)
    python scripts/bench.py --quick    # tiny sizes, for testing this script
    make bench

Each row times one kernel of ``fedfreq`` and a reference computation that any
implementation must at least perform (drawing the same noise, counting the same items,
one pass over the same array), on the same data, each the best of ``repeat`` runs
interleaved and all on one thread (BLAS included), so that a loaded machine slows both
alike; the ratio is what the row
reports and what its goal bounds. The table is printed and written into
``book/execution_stats.md`` between the markers ``<!-- bench:start -->`` and
``<!-- bench:end -->`` (``--page`` names another file; ``--no-page`` writes nothing).

Speed is measured here rather than asserted in ``tests/``: a timed assertion fails on
a slow or busy machine without saying anything about the code.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "execution_stats.md"
START, END = "<!-- bench:start -->", "<!-- bench:end -->"


@dataclass
class Row:
    kernel: str
    reference: str
    ours: float
    ref: float
    goal: float | None  # the ratio the kernel should stay under, where one was set

    @property
    def ratio(self) -> float:
        return self.ours / self.ref

    @property
    def ok(self) -> bool:
        return self.goal is None or self.ratio <= self.goal


def best_of(repeat: int, *fns: Callable[[], object]) -> list[float]:
    """Best wall time of each function over ``repeat`` interleaved rounds."""
    best = [math.inf] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


def rows(quick: bool, repeat: int) -> list[Row]:
    from fedfreq import contribution as ct
    from fedfreq import cpbm
    from fedfreq import sample_threshold as st
    from fedfreq import sketch as sk
    from fedfreq.accounting import cpbm_rdp
    from fedfreq.bitpush import bit_push
    from fedfreq.datasets import synthetic_s0_iid
    from fedfreq.kashin import frame_coefficients, kashin_level, kashin_representation, tight_frame
    from fedfreq.protocols import tffe
    from fedfreq.secagg import modulus_for, secure_sum

    k = 20 if quick else 1  # size divisor
    out: list[Row] = []
    g = np.random.default_rng(2026)
    unit_x = np.linspace(0.0, 1.0, 10**6)

    def unit() -> None:  # a machine-independent unit of work: one exp over 1e6 doubles
        np.exp(unit_x)

    # cPBM encoding against the binomial draws it must make
    Y = g.normal(0, 0.1, size=(20_000 // k, 50))
    p = np.clip(0.5 + 0.2 * np.clip(Y, -1, 1), 0, 1)
    t = best_of(repeat, lambda: cpbm.cpbm_encode(Y, theta=0.2, C=1.0, m=30, rng=1), lambda: g.binomial(30, p))
    out.append(Row("cPBM encoding, 2e4 x 50, m = 30", "rng.binomial, same shape", t[0], t[1], 3.0))

    # count-sketch encoding of n updates against counting them
    n_items, d = 10**6 // k, 10**5 // k
    items = g.zipf(1.1, size=n_items) % d
    hashes = sk.draw_sketch_hashes(width=2048, rows=8, rng=3)
    t = best_of(
        repeat,
        lambda: sk.sketch_items(items, hashes, d=d),
        lambda: np.bincount(items, minlength=d),
    )
    out.append(Row(f"count sketch of {n_items:.0e} updates, d = {d:.0e}, 8 x 2048", "np.bincount", t[0], t[1], None))

    # the cPBM accountant: one order at n = 1e9, in units of one exp over 1e6 doubles
    orders = (2.0, 32.0, 256.0, 1024.0)
    worst = [0.0, 1.0]

    def one_order(lam: float) -> Callable[[], object]:
        return lambda: cpbm_rdp(lam, n=10**9, theta=0.25, m=30, dim=1)

    for lam in orders[: 2 if quick else None]:
        t = best_of(repeat, one_order(lam), unit)
        if t[0] / t[1] > worst[0] / worst[1]:
            worst = t
    out.append(Row("cPBM RDP, one order at n = 1e9 (the slowest)", "exp over 1e6 doubles", worst[0], worst[1], 60.0))
    t = best_of(repeat, lambda: cpbm_rdp(np.array(orders), n=10**9, theta=0.25, m=30, dim=1), unit)
    out.append(Row("cPBM RDP, 4 orders in one call at n = 1e9", "exp over 1e6 doubles", t[0], t[1], 60.0))
    # the vectorised call over many orders against one call per order (the same orders)
    many = np.geomspace(1.5, 1024.0, 8 if quick else 32)
    t = best_of(
        repeat,
        lambda: cpbm_rdp(many, n=10**9, theta=0.25, m=30, dim=1),
        lambda: [cpbm_rdp(float(lam), n=10**9, theta=0.25, m=30, dim=1) for lam in many],
    )
    out.append(Row(f"cPBM RDP, {many.size} orders in one call at n = 1e9", "one call per order", t[0], t[1], 1.0))

    # delta_exact over a grid of (p_s, eps, tau), tau up to 1000
    def grid() -> None:
        for ps in (1e-4, 0.1, 0.5, 0.9):
            for eps in (1e-3, 0.1, 1.0, 5.0):
                for tau in (1, 20, 100) if quick else (1, 20, 100, 1000):
                    st.delta_exact(ps, eps, tau)

    t = best_of(repeat, grid, unit)
    n_calls, top = 4 * 4 * (3 if quick else 4), 100 if quick else 1000
    out.append(Row(f"delta_exact, {n_calls} calls, tau up to {top}", "exp over 1e6 doubles", t[0], t[1], None))

    # the secure-sum simulation against drawing its masks
    n, dim, m = 10**6 // k, 10, 30
    z = g.integers(0, m + 1, size=(n, dim))
    modulus = modulus_for(n, m)
    t = best_of(
        repeat,
        lambda: secure_sum(z, modulus=modulus, max_entry=m, rng=1),
        lambda: np.random.default_rng(2).integers(0, modulus, size=(n, dim)).sum(axis=0),
    )
    out.append(Row(f"secure sum, n = {n:.0e}, dim = 10", "drawing the masks", t[0], t[1], 20.0))

    # Kashin's representation against the plain frame transform of the same data
    dd = 100
    U = tight_frame(dd, 2 * dd, rng=g)
    X = synthetic_s0_iid(10_000 // k, dd, rng=g).astype(float)
    t = best_of(
        repeat,
        lambda: kashin_representation(X, U, eta=0.7, nu=0.3),
        lambda: frame_coefficients(X, U),
    )
    out.append(Row(f"Kashin representation, {X.shape[0]} x {dd} -> {2 * dd}", "frame coefficients", t[0], t[1], None))

    # TFFE end to end against drawing its cPBM noise alone
    B = float(kashin_level(0.7, 0.3) * X.sum(axis=1).max())
    t = best_of(
        repeat,
        lambda: tffe(X, U, B=B, b=6, theta=0.2, m=30, theta_q=0.2, m_q=3, rng=4),
        lambda: g.binomial(30, 0.5, size=(X.shape[0], 2 * dd)),
    )
    out.append(Row(f"TFFE, n = {X.shape[0]}, d = {dd}", "rng.binomial for its noise", t[0], t[1], 10.0))

    # Algorithm 3 (rand-clip, unbounded domain) against one binomial draw per cell
    n3, d3 = 50_000 // k, 50
    p3 = 1.0 / (np.arange(1, d3 + 1) + 50.0)
    N = g.multinomial(g.poisson(100, size=n3), p3 / p3.sum())
    t = best_of(
        repeat,
        lambda: ct.unbounded_histogram(N, C=100, epsilon=1.0, delta=1 / (2 * n3), rng=5),
        lambda: g.binomial(N, 0.5),
    )
    out.append(Row(f"Algorithm 3 (rand-clip), n = {n3:.0e}, d = 50", "rng.binomial(N, 0.5)", t[0], t[1], 1.1))

    # bit pushing: a million clients with 32-bit values against one pass over them
    x = np.random.default_rng(12).integers(0, 2**32, 10**6 // k)
    t = best_of(repeat, lambda: bit_push(x, b=32, rng=0), lambda: np.bitwise_and(x, 1).sum())
    out.append(Row(f"bit pushing, {x.size:.0e} clients, 32 bits", "one bit of each value", t[0], t[1], None))

    # sample-and-threshold of a million items against counting them
    items2 = g.integers(0, 2**14, size=10**6 // k)
    t = best_of(
        repeat,
        lambda: st.sample_and_threshold(items2, n_buckets=2**14, sampling_rate=0.1, tau=20, rng=1),
        lambda: np.bincount(items2, minlength=2**14),
    )
    out.append(Row(f"sample and threshold, {items2.size:.0e} items", "np.bincount", t[0], t[1], None))
    return out


def table(results: list[Row], quick: bool) -> str:
    when = time.strftime("%Y-%m-%d", time.gmtime())
    cpu = platform.processor() or platform.machine()
    lines = [
        f"Measured on {when}, {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy "
        f"{np.__version__}{' (quick sizes)' if quick else ''}; one thread, best of interleaved runs. "
        "A ratio of 1 would mean the kernel costs no more than the reference work it cannot avoid.",
        "",
        "| Kernel | Reference | Kernel (ms) | Reference (ms) | Ratio | Goal |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in results:
        mark = "" if r.ok else " (over)"
        goal = "" if r.goal is None else f"≤ {r.goal:g}"
        lines.append(
            f"| {r.kernel} | {r.reference} | {1e3 * r.ours:.1f} | {1e3 * r.ref:.1f} | {r.ratio:.2f}{mark} | {goal} |"
        )
    return "\n".join(lines)


def write_page(page: Path, text: str) -> None:
    body = page.read_text(encoding="utf-8")
    if START not in body or END not in body:
        raise SystemExit(f"{page}: markers {START} and {END} not found")
    head, rest = body.split(START, 1)
    _, tail = rest.split(END, 1)
    page.write_text(f"{head}{START}\n{text}\n{END}{tail}", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (to test the script)")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved runs of each side (default 5)")
    parser.add_argument("--page", type=Path, default=PAGE, help="page to write the table into")
    parser.add_argument("--no-page", action="store_true", help="print the table only")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    # one thread for BLAS too: both sides of a row then run alike, and another process on
    # the same cores slows them alike (a multithreaded product would suffer more)
    with threadpool_limits(1):
        results = rows(args.quick, max(1, args.repeat))
    text = table(results, args.quick)
    print(text)
    took = time.perf_counter() - start
    print(f"\n{sum(r.ok for r in results)} of {len(results)} kernels within their goal; {took:.0f} s")
    if not args.no_page:
        write_page(args.page, text)
        print(f"written to {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
