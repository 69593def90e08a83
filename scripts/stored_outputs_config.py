"""Write a copy of _config.yml that builds from the notebooks' stored outputs.

``make test`` first re-executes every notebook under nbval and compares the
result with the stored outputs; the book build that follows can then render
those verified outputs instead of executing each notebook a second time.
Paths in the copy are made absolute, since Jupyter Book resolves some of them
relative to the configuration file (``scripts/make_student.py`` builds the
student edition from another directory with the same configuration).

Usage::

    python scripts/stored_outputs_config.py _config.yml _build/config-stored.yml
"""

import sys
from pathlib import Path

import yaml


def stored_outputs_config(src: Path) -> dict:
    """The configuration ``src`` with execution off and every path made absolute."""
    src = Path(src).resolve()
    base = src.parent
    with open(src, encoding="utf-8") as fh:
        config = yaml.safe_load(fh)
    config["execute"]["execute_notebooks"] = "off"
    config["bibtex_bibfiles"] = [str(base / p) for p in config.get("bibtex_bibfiles", [])]
    sphinx = config.setdefault("sphinx", {})
    sphinx["local_extensions"] = {k: str(base / v) for k, v in (sphinx.get("local_extensions") or {}).items()}
    extra = sphinx.setdefault("config", {}).get("html_extra_path", [])
    sphinx["config"]["html_extra_path"] = [str(base / p) for p in extra]
    return config


if __name__ == "__main__":
    with open(sys.argv[2], "w", encoding="utf-8") as fh:
        yaml.safe_dump(stored_outputs_config(Path(sys.argv[1])), fh, sort_keys=False, allow_unicode=True)
