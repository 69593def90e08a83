"""Support for the printed (PDF) edition of the book.

Two things, both harmless for the ordinary HTML site:

* The single-page builder (``singlehtml``, used by ``make pdf``) gets every HTML
  translation handler that an extension registered for ``html`` only. Sphinx looks up
  custom node handlers by builder name and falls back to the ``html`` format only when
  the builder name has none at all; sphinx-exercise registers a few nodes for
  ``singlehtml`` itself, so the fallback never happens and nodes from sphinx-proof and
  myst-nb (e.g. hidden code cells) have no visitor. Copying the missing ``html``
  handlers fixes that.
* Every page links ``print.css`` (``media="print"``): no sidebars or buttons on paper,
  wrapped code and outputs, figures and tables fitted to the page width, a page break
  before each chapter.
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
#: Builders that write one HTML file for the whole book.
SINGLE_PAGE_BUILDERS = ("singlehtml",)


def _add_static_path(app, config):
    if str(STATIC) not in [str(p) for p in config.html_static_path]:
        config.html_static_path = [*config.html_static_path, str(STATIC)]


def _share_html_handlers(app):
    """Give the single-page builder the ``html`` visitors it has no entry of its own for."""
    if app.builder.name not in SINGLE_PAGE_BUILDERS:
        return
    handlers = app.registry.translation_handlers
    html = handlers.get("html", {})
    single = handlers.setdefault(app.builder.name, {})
    for name, visitors in html.items():
        single.setdefault(name, visitors)


def setup(app):
    app.connect("config-inited", _add_static_path)
    app.connect("builder-inited", _share_html_handlers)
    app.add_css_file("print.css", media="print")
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
