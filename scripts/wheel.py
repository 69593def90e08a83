"""The package's wheel and the pinned requirements of the environments built around it.

* :func:`build_wheel` builds ``fedfreq``'s wheel from a copy of its sources (``pyproject.toml``,
  ``README.md``, ``fedfreq/``), so that nothing of the working tree (a stale
  ``fedfreq.egg-info``, a ``build/`` folder) leaks into the wheel or is left behind.
* :func:`pinned_closure` lists every distribution a set of requirements needs, with the
  version pinned in ``requirements.txt``, by walking the installed distributions'
  metadata of the build environment (which ``make venv`` installs from those pins): no
  resolver and no network. ``.binder/requirements.txt`` and the student kit's
  ``requirements.txt`` are written from it, and tests compare them with it.

Usage::

    .venv/bin/python scripts/wheel.py DIR              # build the wheel into DIR, print its path
    .venv/bin/python scripts/wheel.py --closure "fedfreq[book,deploy]"   # the pinned closure
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "README.md")


def build_wheel(dest: Path, *, python: str = sys.executable) -> Path:
    """Build the wheel into ``dest`` (created if needed) and return its path."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fedfreq-src-") as tmp:
        src = Path(tmp)
        for name in SOURCES:
            shutil.copy2(ROOT / name, src / name)
        shutil.copytree(ROOT / "fedfreq", src / "fedfreq", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        proc = subprocess.run(
            [python, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dest), str(src)],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"building the wheel failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    wheels = sorted(dest.glob("fedfreq-*-py3-none-any.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        raise RuntimeError(f"no wheel in {dest}")
    return wheels[-1]


def normal(name: str) -> str:
    """A distribution name as the package index compares names (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: Path = ROOT / "requirements.txt") -> dict[str, str]:
    """``name == version`` lines of a requirements file, by normalised name."""
    out = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", line.strip())
        if m:
            out[normal(m.group(1))] = m.group(2)
    return out


def pinned_closure(requirements: list[str], *, exclude: tuple[str, ...] = ("fedfreq",)) -> dict[str, str]:
    """Every distribution ``requirements`` need (recursively, markers evaluated for this
    interpreter), each with its pinned version; ``exclude`` names are left out (but
    their own requirements are followed)."""
    pinned = pins()
    env: dict[str, str] = {k: str(v) for k, v in default_environment().items()}
    seen: dict[str, str] = {}
    todo = [Requirement(r) for r in requirements]
    extras_done: set[tuple[str, str]] = set()
    while todo:
        req = todo.pop()
        name = normal(req.name)
        key_extras = tuple(sorted(req.extras))
        if (name, ",".join(key_extras)) in extras_done:
            continue
        extras_done.add((name, ",".join(key_extras)))
        if name == "fedfreq":
            meta = _fedfreq_requirements()
        else:
            try:
                meta = distribution(req.name).requires or []
            except PackageNotFoundError as exc:
                raise RuntimeError(f"{req.name} is not installed in the build environment (make venv)") from exc
            if name not in pinned:
                raise RuntimeError(f"{req.name} is needed but not pinned in requirements.txt")
        if name not in exclude:
            seen[name] = pinned[name]
        for line in meta:
            sub = Requirement(line)
            for extra in ("", *key_extras):
                if sub.marker is None or sub.marker.evaluate({**env, "extra": extra}):
                    todo.append(sub)
                    break
    return dict(sorted(seen.items()))


def _fedfreq_requirements() -> list[str]:
    """fedfreq's own requirements from pyproject.toml (its metadata may be an older install)."""
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as fh:
        project = tomllib.load(fh)["project"]
    lines = list(project["dependencies"])
    for extra, reqs in project.get("optional-dependencies", {}).items():
        lines += [f'{r}; extra == "{extra}"' for r in reqs]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dest", nargs="?", type=Path, help="folder to build the wheel into")
    ap.add_argument("--closure", nargs="+", metavar="REQ", help="print the pinned closure of these requirements")
    args = ap.parse_args(argv)
    if args.closure:
        for name, version in pinned_closure(args.closure).items():
            print(f"{name}=={version}")
        return 0
    if args.dest is None:
        ap.error("give a folder to build the wheel into, or --closure")
    print(build_wheel(args.dest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
