"""The book's edition and address: its version on every page, and launch buttons.

* **Version.** The book and the package share one version, read from the installed
  package's metadata (``pyproject.toml`` is its one source). It becomes Sphinx's
  ``version`` and ``release``, the substitution ``{{ fedfreq_version }}`` that prose pages
  use (the claims ledger, the changelog), and a line of every page's footer.
* **Address.** The repository's public address is set in one place: the environment
  variable ``FEDFREQ_REPOSITORY`` at build time (e.g. ``https://github.com/<owner>/<repo>``,
  as the publishing workflow sets it), or else ``repository: url:`` in ``_config.yml``.
  With an address, every chapter gets Colab and Binder launch buttons and the header a
  link to the repository; the branch is ``FEDFREQ_BRANCH`` or ``repository: branch:``
  (default ``main``). Without one, there are no launch buttons at all (rather than
  buttons that lead nowhere). Colab opens notebooks from GitHub only, so an address on
  another host keeps Binder and drops Colab.
"""

from __future__ import annotations

import html
import os
import re
from importlib.metadata import PackageNotFoundError, version

#: The public services the launch buttons open (used only when the book has an address).
BINDERHUB_URL = "https://mybinder.org"
COLAB_URL = "https://colab.research.google.com"
_REPO_RE = re.compile(
    r"^https://(?P<host>[A-Za-z0-9.-]+)/(?P<owner>[A-Za-z0-9_.-]+)/(?P<repo>[A-Za-z0-9_.-]+?)(?:\.git)?/?$"
)


def book_version() -> str:
    """The version of the installed ``fedfreq`` package (the book's edition)."""
    try:
        return version("fedfreq")
    except PackageNotFoundError as exc:
        raise RuntimeError("fedfreq is not installed: the book takes its version from the package") from exc


def repository_address(configured: str | None) -> str:
    """The repository's address: ``FEDFREQ_REPOSITORY`` if set, else the configured one.

    Returns ``""`` when there is none; raises ``ValueError`` for an address that is not
    ``https://<host>/<owner>/<repository>``.
    """
    url = os.environ.get("FEDFREQ_REPOSITORY", "").strip() or (configured or "").strip()
    if not url:
        return ""
    match = _REPO_RE.match(url)
    if match is None:
        raise ValueError(f"repository address must look like https://github.com/<owner>/<repository>; got {url!r}")
    return f"https://{match['host']}/{match['owner']}/{match['repo']}"


def _configure(app, config) -> None:
    edition = book_version()
    config.version = config.release = edition
    subs = dict(config.myst_substitutions or {})
    subs["fedfreq_version"] = edition
    config.myst_substitutions = subs

    opts = config.html_theme_options
    footer = opts.get("extra_footer", "") or ""
    opts["extra_footer"] = (
        f"{footer}\n<p class='edition'>Edition {html.escape(edition)}: the book and the "
        f"<code>fedfreq</code> package {html.escape(edition)}.</p>"
    )

    address = repository_address(opts.get("repository_url"))
    launch = dict(opts.get("launch_buttons") or {})
    if address:
        branch = os.environ.get("FEDFREQ_BRANCH", "").strip() or opts.get("repository_branch") or "main"
        opts["repository_url"] = address
        opts["repository_branch"] = branch
        opts["path_to_docs"] = ""
        opts["use_repository_button"] = True
        launch["binderhub_url"] = BINDERHUB_URL
        launch["colab_url"] = COLAB_URL if address.startswith("https://github.com/") else ""
    else:
        opts.pop("repository_url", None)
        opts["use_repository_button"] = False
        opts["use_issues_button"] = False
        opts["use_edit_page_button"] = False
        launch["binderhub_url"] = ""
        launch["colab_url"] = ""
        launch["jupyterhub_url"] = ""
    launch["thebe"] = False
    opts["launch_buttons"] = launch


def setup(app):
    # before sphinx-book-theme reads the repository address (at builder-inited)
    app.connect("config-inited", _configure, priority=400)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
