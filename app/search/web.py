"""Wiring search into the app: the index hook, the pages, the MCP tool, the CLI command and
the template filters that turn highlight markers into ``<mark>`` (HTML) or ``**`` (Markdown)."""

from __future__ import annotations

import importlib

from flask import Flask

from app.search import cli, highlight, index, pages
from app.web import markdown


def _markdown(text: str | None) -> str:
    return highlight.to_markdown(text, markdown.inline)


def init_app(flask_app: Flask) -> None:
    index.install()
    importlib.import_module("app.search.mcp_tools")

    flask_app.register_blueprint(pages.bp)
    flask_app.jinja_env.filters.update(search_html=highlight.to_html, search_md=_markdown)
    cli.register(flask_app)
