"""The design-model server: a simulated Revit document and Rhino session over JSON-RPC 2.0.

``rpc.handle`` is the one dispatcher; ``bin/model-server`` serves it standalone on loopback
and ``web`` mounts it in the app at ``/design-model/rpc`` (token required). Method modules:
``revit_methods`` and ``rebar`` (Revit side), ``rhino_methods`` (Rhino side, seed 001). Each
method declares its params, result and example in ``registry``; ``validate`` checks calls
against that and ``catalog`` publishes it as ``rpc.discover`` (OpenRPC).

The public surface for other packages: ``method_effect(name)``, the declared effect
(``app.actions.effects``) of a method, or None when there is no such method.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.actions.effects import Effect


def method_effect(name: str) -> Effect | None:
    """What the method ``name`` does, as its registration declares it (None: unknown)."""
    import app.design_model.rpc  # noqa: F401  (importing the dispatcher registers every method)
    from app.design_model.registry import EFFECTS

    return EFFECTS.get(name)
