"""URL rules whose URL builders are compiled when first used, not when the app starts.

Werkzeug compiles two Python functions per URL rule as the rule is added (one to build its
URLs, one that also appends unknown arguments as a query string): two calls of ``compile()``
per rule, a large part of what ``create_app`` does. Every
process pays it at start (each ``bin/mcp-server`` an agent's client spawns, each gunicorn
worker, each queue worker), yet a process builds URLs for a few of its rules only. Matching a
request does not use these functions at all, so nothing but ``url_for`` waits for them, once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from werkzeug.routing import Rule


class LazyBuilderRule(Rule):
    """A Rule that compiles each of its URL builders on its first call.

    Werkzeug's ``Rule.compile`` stores ``self._compile_builder(flag).__get__(self)`` as the
    builder: this override returns a stand-in that compiles the real builder, puts it in its
    place on the rule, and calls it. ``_compile_builder`` is private to Werkzeug, the one
    private member of a dependency the app relies on (no public hook defers the builders):
    ``pyproject.toml`` bounds Werkzeug's version for it and ``tests/core/test_start_up.py``
    is its canary. Should a newer Werkzeug stop calling it from ``compile``, the rules simply
    compile eagerly again."""

    def _compile_builder(self, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
        compile_real = super()._compile_builder
        name = "_build_unknown" if append_unknown else "_build"

        def first_build(rule: Rule, *args: Any, **kwargs: Any) -> tuple[str, str]:
            real = compile_real(append_unknown).__get__(rule, None)
            setattr(rule, name, real)  # later calls go straight to the compiled builder
            return real(*args, **kwargs)

        return first_build
