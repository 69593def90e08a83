"""The numeric environment that chapter outputs depend on.

Floating-point results can change in their last bits with the BLAS library and the
kernel set it selects for the CPU, with numpy's SIMD dispatch level and with the C
maths library. ``scripts/execute_notebooks.py`` records this environment beside the
execution times (it is shown on the Execution statistics page), and ``make test-nbval``
re-executes the chapters with numpy's dispatch limited to its baseline, using the list
this script prints, after ``--check-differs`` has confirmed that the stored outputs were
executed with dispatch above the baseline (so that the comparison is between two numeric
configurations).

Usage::

    python scripts/numeric_env.py                  # the environment, as JSON
    python scripts/numeric_env.py --above-baseline # dispatch targets above numpy's
                                                   # baseline found on this CPU
    python scripts/numeric_env.py --check-differs notebooks/execution_times.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys


def above_baseline_features() -> list[str]:
    """numpy's dispatch targets above its compiled baseline that this CPU supports.

    Setting ``NPY_DISABLE_CPU_FEATURES`` to these names runs numpy at its baseline.
    """
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [name for name in __cpu_dispatch__ if __cpu_features__.get(name)]


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def numeric_environment() -> dict:
    """numpy/scipy versions, BLAS library and kernel, numpy SIMD level and CPU model."""
    import numpy as np
    import scipy
    from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, __cpu_features__
    from threadpoolctl import threadpool_info

    blas = [
        {
            "library": info.get("internal_api"),
            "version": info.get("version"),
            "kernel": info.get("architecture"),
            "threads": info.get("num_threads"),
        }
        for info in threadpool_info()
        if info.get("user_api") == "blas"
    ]
    disabled = os.environ.get("NPY_DISABLE_CPU_FEATURES", "").split()
    return {
        "cpu": cpu_model(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "blas": blas,
        "numpy_simd_baseline": list(__cpu_baseline__),
        "numpy_simd_dispatched": [name for name in __cpu_dispatch__ if __cpu_features__.get(name)],
        "numpy_simd_disabled": disabled,
        "libc": " ".join(platform.libc_ver()).strip(),
    }


def check_differs(times_json: str) -> tuple[bool, str]:
    """Whether the stored outputs were executed with numpy's dispatch above its baseline.

    A re-execution at the baseline then runs other SIMD code paths than the stored run did.
    Returns (ok, a sentence saying what the two configurations are).
    """
    with open(times_json, encoding="utf-8") as fh:
        stored = json.load(fh).get("environment", {})
    dispatched = stored.get("numpy_simd_dispatched") or []
    baseline = " ".join(stored.get("numpy_simd_baseline") or []) or "?"
    if not dispatched or stored.get("numpy_simd_disabled"):
        return False, (
            f"the stored outputs were executed at numpy's baseline ({baseline}); execute them with the "
            "CPU's dispatch (make notebooks, NPY_DISABLE_CPU_FEATURES unset) so that re-executing "
            "them at the baseline compares two configurations"
        )
    here = above_baseline_features()
    return True, (
        f"the stored outputs were executed with numpy dispatching {' '.join(dispatched)} "
        f"({stored.get('cpu', '?')}); this run limits dispatch to the baseline {baseline}"
        + (f" (disabling {' '.join(here)})" if here else " (this CPU has nothing above it)")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--above-baseline", action="store_true", help="print the dispatch targets above the baseline")
    parser.add_argument(
        "--check-differs",
        metavar="TIMES_JSON",
        help="fail unless the stored run recorded in TIMES_JSON dispatched above numpy's baseline",
    )
    args = parser.parse_args(argv)
    if args.check_differs:
        ok, sentence = check_differs(args.check_differs)
        print(("numeric configuration: " if ok else "error: ") + sentence)
        return 0 if ok else 1
    if args.above_baseline:
        print(" ".join(above_baseline_features()))
    else:
        print(json.dumps(numeric_environment(), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
