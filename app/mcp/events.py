"""Resource change events: feature code says "this URI changed", transports tell subscribers.

``resource_updated(uri)`` is safe to call from anywhere (no listener means nobody is watching).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger("harmonic.mcp")

Listener = Callable[[str], None]
_listeners: list[Listener] = []


def listen(listener: Listener) -> None:
    if listener not in _listeners:
        _listeners.append(listener)


def unlisten(listener: Listener) -> None:
    if listener in _listeners:
        _listeners.remove(listener)


def resource_updated(uri: str) -> None:
    for listener in list(_listeners):
        try:
            listener(uri)
        except Exception:  # a broken listener must not fail the change that triggered it
            log.exception("resource listener failed for %s", uri)


def page_uri(path: str) -> str:
    """The resource URI under which a page of this app is readable (harmonic://page/...)."""
    return "harmonic://page/" + path.lstrip("/")
