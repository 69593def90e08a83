"""Drop duplicated script entries from each page's context.

With Sphinx 7.4, an inline script registered by sphinx-thebe is written into every
page twice, and the second copy throws ``Identifier 'THEBE_JS_URL' has already been
declared`` in the browser (fixed upstream in Sphinx 8). Keeping the first copy of each
identical entry removes the error without changing anything else.
"""


def _dedupe(app, pagename, templatename, context, doctree):
    files = context.get("script_files")
    if not isinstance(files, list):
        return
    seen, unique = set(), []
    for js in files:
        attrs = tuple(sorted((getattr(js, "attributes", {}) or {}).items()))
        key = (str(getattr(js, "filename", js) or ""), attrs)
        if key not in seen:
            seen.add(key)
            unique.append(js)
    files[:] = unique


def setup(app):
    app.connect("html-page-context", _dedupe, priority=900)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
