"""The design-model server: a simulated Revit document and Rhino session over JSON-RPC 2.0.

``rpc.handle`` is the one dispatcher; ``bin/model-server`` serves it standalone on loopback
and ``web`` mounts it in the app at ``/design-model/rpc`` (token required). Method modules:
``revit_methods`` and ``rebar`` (Revit side), ``rhino_methods`` (Rhino side, seed 001). Each
method declares its params, result and example in ``registry``; ``validate`` checks calls
against that and ``catalog`` publishes it as ``rpc.discover`` (OpenRPC).

The public surface for other packages (they import nothing else from this package):
``method_effect(name)``, the declared effect (``app.actions.effects``) of a method, or None
when there is no such method; ``handle_rpc(payload, via)``, one request to the embedded server;
``rpc_url(base, allowed, param, setting)``, an upstream's allow-listed /rpc URL;
``openrpc_document()``, the catalog of every method (what ``rpc.discover`` answers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import app.design_model.methods  # noqa: F401  (registers every method)
from app.design_model import catalog, rpc, upstream
from app.design_model.registry import EFFECTS

if TYPE_CHECKING:
    from app.actions.effects import Effect


def method_effect(name: str) -> Effect | None:
    """What the method ``name`` does, as its registration declares it (None: unknown)."""
    return EFFECTS.get(name)


def handle_rpc(payload: Any, via: str = "inproc") -> dict[str, Any]:
    """One JSON-RPC request to the embedded design-model server, its response out (the door
    the call came through asked the authorization question already)."""
    return rpc.handle(payload, via=via)


def rpc_url(base_url: str, allowed: tuple[str, ...], param: str = "revitBaseUrl",
            setting: str | None = None) -> str:
    """The /rpc URL of an upstream design-model server, refused (-32602) off the allow-list."""
    return upstream.rpc_url(base_url, allowed, param, setting)


def openrpc_document() -> dict[str, Any]:
    """The embedded server's catalog: every method as OpenRPC (what ``rpc.discover`` answers)."""
    return catalog.document()
