"""The design-model server's catalog: an OpenRPC 1.x document built from the method registry.

``rpc.discover`` answers it on every door (``bin/model-server``, ``/design-model/rpc`` and the
playbook proxy ``/rpc`` when its upstream is the embedded server); the MCP resource
``design-model://catalog`` returns the same document. Every method lists its params (by name,
each with its JSON Schema and whether it is required), its result schema, its effect
(``x-effect``: read / write / destructive, idempotent), a description and an example call.
Nothing here is typed twice: it all comes from ``registry.SPECS``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from app.core.config import app_version
from app.design_model import methods  # noqa: F401  (fills SPECS)
from app.design_model.registry import SPECS, Spec

OPENRPC_VERSION = "1.3.2"
DISCOVER = "rpc.discover"


def method_names() -> list[str]:
    """Every method a caller may name, sorted (``rpc.discover`` included)."""
    return sorted([*SPECS, DISCOVER])


def describe(spec: Spec) -> dict[str, Any]:
    """One OpenRPC Method Object."""
    description = spec.description or spec.summary
    if spec.one_of:
        groups = "; ".join(" | ".join(group) for group in spec.one_of)
        description += f" Give exactly one of: {groups}."
    params = [{"name": p.name, "required": p.required, "schema": p.schema,
               **({"description": p.description} if p.description else {})}
              for p in spec.params]
    return {
        "name": spec.name,
        "summary": spec.summary,
        "description": description,
        "paramStructure": "by-name",
        "params": params,
        "result": {"name": f"{spec.name}Result", "schema": spec.result},
        "examples": [{"name": f"{spec.name} example",
                      "params": [{"name": key, "value": value}
                                 for key, value in spec.example.items()],
                      "result": {"name": f"{spec.name}Result", "value": {"ok": True}}}],
        "x-effect": spec.effect.describe(),
        **({"x-oneOf": [list(group) for group in spec.one_of]} if spec.one_of else {}),
    }


@cache
def document() -> dict[str, Any]:
    """The OpenRPC document (built once per process; the registry does not change)."""
    return {
        "openrpc": OPENRPC_VERSION,
        "info": {
            "title": "Harmonic design-model server",
            "version": app_version(),
            "description": (
                "A simulated Revit document and Rhino session over JSON-RPC 2.0. Params are "
                "by name. Errors: -32601 unknown method (data.methods lists them), -32602 "
                "invalid params (data.errors lists every problem, data.param the first), "
                "-32000 application errors (data.code), -32001 upstream errors. Writes accept "
                "dryRun: true; x-effect says what each method does."),
        },
        "methods": [describe(SPECS[name]) for name in sorted(SPECS)],
    }
