"""The one place that decides the response format: HTML, Markdown or JSON.

``Accept: text/markdown`` or a ``.md`` suffix gives Markdown; ``Accept: application/json`` gives
JSON; anything else (browsers, ``*/*``) gives HTML.

Every answer whose format was chosen here says so with ``Vary: Accept`` (a cache must not hand
the HTML a person got to an agent), and every Markdown answer carries ``x-markdown-tokens``: an
estimate of its size in tokens (a character count over four, the usual rule of thumb for English
text), so an agent can decide before reading whether a page fits its budget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask, Request, Response, g, request

MD_SUFFIX_KEY = "harmonic.md_suffix"
CHARS_PER_TOKEN = 4


def wants() -> str:
    g.negotiated = True
    return format_of(request)


def format_of(req: Request) -> str:
    """The format ``req`` asks for: "md", "json" or "html" (what ``wants`` answers, which also
    marks the response as negotiated)."""
    if req.environ.get(MD_SUFFIX_KEY):
        return "md"
    best = req.accept_mimetypes.best_match(
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


def token_estimate(text: str) -> int:
    """Roughly how many tokens ``text`` is for a language model (never 0 for a non-empty one)."""
    return -(-len(text) // CHARS_PER_TOKEN)


def _label(response: Response) -> Response:
    if g.get("negotiated"):
        response.vary.add("Accept")
    if response.mimetype == "text/markdown" and not response.is_streamed:
        response.headers["x-markdown-tokens"] = str(token_estimate(response.get_data(
            as_text=True)))
    return response


def init_app(app: Flask) -> None:
    app.after_request(_label)
