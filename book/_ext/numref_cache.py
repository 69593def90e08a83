"""Resolve numbered references without unpickling the target page once per reference.

Sphinx 7.4 resolves each ``{numref}`` by unpickling the whole doctree of the page that holds
its target (``StandardDomain._resolve_numref_xref`` calls ``env.get_doctree``), so the
book's several hundred numbered references to tables and figures unpickled the same pages
hundreds of times, a sixth of the write phase. Once reading is over a page's doctree no
longer changes, and the resolution only reads the target node (its ids, type and caption),
so during a resolution each page is unpickled once and then served from memory. Every
other caller of ``get_doctree`` still gets a fresh copy, which it may modify.
"""

from __future__ import annotations

from sphinx.domains.std import StandardDomain

_original = StandardDomain._resolve_numref_xref
_doctrees: dict[str, object] = {}


def _resolve_numref_xref(self, env, *args, **kwargs):
    read = env.get_doctree

    def cached(docname):
        if docname not in _doctrees:
            _doctrees[docname] = read(docname)
        return _doctrees[docname]

    env.get_doctree = cached  # this call only; the class's method is restored below
    try:
        return _original(self, env, *args, **kwargs)
    finally:
        del env.get_doctree


def _forget(*_args) -> None:
    _doctrees.clear()


def setup(app):
    StandardDomain._resolve_numref_xref = _resolve_numref_xref
    app.connect("env-updated", _forget)  # reading is over: the doctrees are final
    app.connect("build-finished", _forget)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
