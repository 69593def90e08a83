"""The package works installed: a wheel in a fresh virtualenv, away from the source tree.

One test walks the path a reader takes (the stages run in order, so they are one test):

1. build the wheel from a copy of the package's sources (``pyproject.toml``, ``README.md``,
   ``fedfreq/``), so nothing from the working tree can leak in;
2. create a fresh virtualenv and install the wheel alone: only numpy and scipy come
   with it (the core install pulls in nothing a user of the library does not need);
3. in a directory outside the source tree, import every module of the installed copy,
   none of which may import an optional package, and check the version is the one in
   ``pyproject.toml``;
4. replace the package by the chapters' requirements only (the ``book`` extra's
   dependencies, read from the wheel's metadata) plus nbval, and re-execute a chapter
   under nbval: its install cell installs ``fedfreq[book]`` from the wheel (the package
   index is replaced by the wheel's folder, as on a fresh Colab or hub kernel where pip
   reaches the index), and every output must match the stored one;
5. run the doctests of every module against the installed copy;
6. install the student kit's environment (``make student`` writes the kit: the wheel, its
   pinned ``requirements.txt`` and the student notebooks): the kit's requirements and its
   wheel, as its README says, and execute a student notebook from the kit's folder.

Versions are held to the pins of ``requirements.txt`` (a constraints file), so the chapter
reproduces its stored outputs. The virtualenv is created and filled by uv (the same
packages pip would install, from the package index or uv's cache, many times faster);
the chapter's install cell uses the virtualenv's own pip, as on a hub or Colab.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from make_student import build_kit  # noqa: E402

CHAPTER = "01_foundations"
#: What a core install of the wheel may bring: the package, its two dependencies, and
#: the installers a fresh virtualenv is seeded with.
CORE = {"fedfreq", "numpy", "scipy", "pip", "setuptools", "wheel", "packaging"}
#: uv installs the same pinned packages as pip, many times faster (pinned in requirements.txt).
UV = str(Path(sys.executable).with_name("uv"))
#: Optional packages no module may import at import time.
OPTIONAL = ("matplotlib", "sympy", "pandas", "IPython", "myst_nb", "tqdm", "opendp", "datasketches", "dp_accounting")

IMPORT_EVERY_MODULE = """
import importlib, json, pkgutil, sys
from importlib.metadata import version
import fedfreq
names = ["fedfreq"] + [m.name for m in pkgutil.walk_packages(fedfreq.__path__, "fedfreq.")]
for name in names:
    importlib.import_module(name)
print(json.dumps({
    "file": fedfreq.__file__,
    "version": fedfreq.__version__,
    "metadata_version": version("fedfreq"),
    "modules": names,
    "optional_loaded": sorted(m for m in sys.modules if m.split(".")[0] in sys.argv[1:]),
}))
"""

pytestmark = pytest.mark.slow


def _run(cmd: list[str], *, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    what = " ".join(map(str, cmd))
    assert proc.returncode == 0, f"{what} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PIP_"))}
    env.update(PYTHONHASHSEED="0", PIP_DISABLE_PIP_VERSION_CHECK="1", **extra)
    return env


def _book_requirements(wheel: Path) -> list[str]:
    """The ``book`` extra's requirements, from the wheel's own metadata."""
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        lines = zf.read(meta).decode().splitlines()
    reqs = []
    for line in lines:
        m = re.match(r"Requires-Dist: (.+?); extra == \"book\"$", line)
        if m:
            reqs.append(m.group(1).strip())
    return reqs


def test_the_wheel_works_installed_away_from_the_source_tree(tmp_path: Path) -> None:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        project_version = tomllib.load(fh)["project"]["version"]

    # 1. the wheel, built from a copy of the sources, in the student kit
    kit = build_kit(tmp_path / "kit")
    dist = kit
    (wheel,) = kit.glob("fedfreq-*.whl")
    assert wheel.name.startswith(f"fedfreq-{project_version}-py3-none-any")

    # 2. a fresh virtualenv with the wheel alone
    venv = tmp_path / "venv"
    _run([UV, "venv", "--quiet", "--seed", "-p", sys.executable, str(venv)], cwd=tmp_path, env=_clean_env())
    py = str(venv / "bin" / "python")
    pip = [UV, "pip", "install", "--quiet", "-p", py, "-c", str(ROOT / "requirements.txt")]
    _run([*pip, str(wheel)], cwd=tmp_path, env=_clean_env())
    listed = json.loads(_run([py, "-m", "pip", "list", "--format", "json"], cwd=tmp_path, env=_clean_env()))
    installed = {p["name"].lower() for p in listed}
    assert installed <= CORE, f"the core install brought more than numpy and scipy: {sorted(installed - CORE)}"

    # 3. every module imports from the installed copy, with no optional package
    away = tmp_path / "elsewhere"
    away.mkdir()
    report = json.loads(_run([py, "-c", IMPORT_EVERY_MODULE, *OPTIONAL], cwd=away, env=_clean_env()))
    assert Path(report["file"]).is_relative_to(venv), f"imported {report['file']}, not the installed copy"
    assert report["version"] == report["metadata_version"] == project_version
    in_tree = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for path in (ROOT / "fedfreq").rglob("*.py")
    }
    missing = sorted(in_tree - set(report["modules"]))
    assert set(report["modules"]) == in_tree, f"modules missing from the wheel: {missing}"
    assert not report["optional_loaded"], f"imported at import time: {report['optional_loaded']}"

    # 4. a chapter, run on a kernel that has only the chapter's requirements: its install
    #    cell installs fedfreq[book] from the wheel's folder, then nbval compares every output
    _run([UV, "pip", "uninstall", "--quiet", "-p", py, "fedfreq"], cwd=tmp_path, env=_clean_env())
    _run([*pip, *_book_requirements(wheel), "nbval", "pytest"], cwd=tmp_path, env=_clean_env())
    check = "import importlib.util, sys; sys.exit(importlib.util.find_spec('fedfreq') is not None)"
    _run([py, "-c", check], cwd=away, env=_clean_env())
    shutil.copy2(ROOT / "notebooks" / f"{CHAPTER}.ipynb", away)
    shutil.copy2(ROOT / "tests" / "nbval_sanitize.cfg", away)
    chapter_env = _clean_env(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(dist))
    out = _run(
        [
            py,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--nbval",
            "--nbval-current-env",
            "--nbval-sanitize-with",
            "nbval_sanitize.cfg",
            f"{CHAPTER}.ipynb",
        ],
        cwd=away,
        env=chapter_env,
    )
    assert re.search(r"\b\d+ passed\b", out) and "failed" not in out, out[-2000:]
    shown = _run([py, "-m", "pip", "show", "fedfreq"], cwd=away, env=_clean_env())
    assert f"Version: {project_version}" in shown, "the chapter's install cell did not install the package"

    # 5. the doctests of every module, against the installed copy
    out = _run(
        [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "error::DeprecationWarning"]
        + ["--doctest-modules", "--pyargs", "fedfreq"],
        cwd=away,
        env=_clean_env(),
    )
    assert re.search(r"\b\d+ passed\b", out) and "failed" not in out, out[-2000:]

    # 6. the student kit: its environment in one step, then a student notebook runs
    _run([*pip, "-r", "requirements.txt", wheel.name], cwd=kit, env=_clean_env())
    student = kit / "notebooks" / f"{CHAPTER}.ipynb"
    run_student = (
        "import sys, nbformat; from nbclient import NotebookClient\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "NotebookClient(nb, timeout=600, kernel_name='python3').execute()\n"
        "import fedfreq; print(fedfreq.__file__)\n"
    )
    out = _run([py, "-c", run_student, student.name], cwd=student.parent, env=_clean_env())
    assert Path(out.strip().splitlines()[-1]).is_relative_to(venv)
