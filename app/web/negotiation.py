"""The one place that decides the response format: HTML, Markdown or JSON.

``Accept: text/markdown`` or a ``.md`` suffix gives Markdown; ``Accept: application/json`` gives
JSON; anything else (browsers, ``*/*``) gives HTML.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import request

MD_SUFFIX_KEY = "harmonic.md_suffix"


def wants() -> str:
    if request.environ.get(MD_SUFFIX_KEY):
        return "md"
    best = request.accept_mimetypes.best_match(
        ["text/html", "text/markdown", "application/json"], default="text/html")
    return {"text/markdown": "md", "application/json": "json"}.get(best or "", "html")


class MarkdownSuffix:
    """WSGI middleware: ``/studios/demo.md`` is ``/studios/demo`` asked for as Markdown."""

    def __init__(self, wsgi_app: Callable[..., Any]) -> None:
        self.wsgi_app = wsgi_app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ.get("PATH_INFO", "")
        if path == "/.md":  # the home page's Markdown twin
            environ["PATH_INFO"] = "/"
            environ[MD_SUFFIX_KEY] = True
        elif path.endswith(".md") and len(path) > 3 and not path.endswith("/.md"):
            environ["PATH_INFO"] = path[:-3] or "/"
            environ[MD_SUFFIX_KEY] = True
        return self.wsgi_app(environ, start_response)
