"""The design-model server's JSON-RPC codes on top of ``app.core.jsonrpc``; a typed params reader.

Error policy (seed 001): HTTP is always 200; -32700 bad JSON, -32600 invalid request, -32601
"Unknown method: X", -32602 naming the bad parameter (``data.param``), -32000 application
errors (``data.code`` like NOT_FOUND, STALE_GUARD, LOCKED), -32001 upstream errors. The
standard codes and ``RpcError`` are the core's, re-exported here for the method modules.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

from app.core.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    SERVER_ERROR_MAX,
    RpcError,
)

__all__ = ["APP_ERROR", "INTERNAL_ERROR", "INVALID_PARAMS", "INVALID_REQUEST",
           "METHOD_NOT_FOUND", "PARSE_ERROR", "UPSTREAM_ERROR", "Params", "RpcError",
           "app_error", "dry", "invalid", "upstream_error"]

APP_ERROR = SERVER_ERROR_MAX  # -32000
UPSTREAM_ERROR = SERVER_ERROR_MAX - 1  # -32001

_MISSING: Any = object()
# Numbers beyond this (mm, feet or degrees) are mistakes, and would overflow transforms.
MAX_MAGNITUDE = 1e9


def invalid(param: str, message: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params: {param}: {message}", {"param": param})


def app_error(code: str, message: str, **details: Any) -> RpcError:
    return RpcError(APP_ERROR, message, {"code": code, **details})


def dry(result: dict[str, Any], dry_run: bool) -> dict[str, Any]:
    """A write's result, marked ``dryRun: true`` when it only previewed."""
    if dry_run:
        result["dryRun"] = True
    return result


def upstream_error(message: str, **details: Any) -> RpcError:
    return RpcError(UPSTREAM_ERROR, message, {"code": "UPSTREAM", **details})


class Params:
    """Read typed values out of a params object; every failure names its parameter path."""

    def __init__(self, raw: dict[str, Any], prefix: str = "") -> None:
        self.raw, self.prefix = raw, prefix

    def path(self, name: str) -> str:
        return f"{self.prefix}{name}"

    def has(self, name: str) -> bool:
        return self.raw.get(name) is not None

    def _get(self, name: str, default: Any) -> Any:
        value = self.raw.get(name)
        if value is None:
            if default is _MISSING:
                raise invalid(self.path(name), "is required")
            return default
        return value

    def int(self, name: str, default: Any = _MISSING, minimum: int | None = None,
            maximum: int | None = None) -> Any:
        value = self._get(name, default)
        if value is default:
            return value
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise invalid(self.path(name), "must be an integer")
        if minimum is not None and value < minimum:
            raise invalid(self.path(name), f"must be ≥ {minimum}")
        if maximum is not None and value > maximum:
            raise invalid(self.path(name), f"must be ≤ {maximum}")
        return value

    def num(self, name: str, default: Any = _MISSING, limit: float = MAX_MAGNITUDE) -> Any:
        value = self._get(name, default)
        if value is default:
            return value
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(value):
            raise invalid(self.path(name), "must be a finite number")
        if abs(value) > limit:
            raise invalid(self.path(name), f"must be between -{limit:g} and {limit:g}")
        return float(value)

    def str(self, name: builtins.str, default: Any = _MISSING,
            max_len: builtins.int = 200) -> Any:
        value = self._get(name, default)
        if value is default:
            return value
        if not isinstance(value, str) or not value.strip():
            raise invalid(self.path(name), "must be a non-empty string")
        if len(value) > max_len:
            raise invalid(self.path(name), f"must be at most {max_len} characters")
        return value

    def bool(self, name: builtins.str, default: bool = False) -> bool:
        value = self.raw.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise invalid(self.path(name), "must be true or false")
        return value

    def obj(self, name: builtins.str, default: Any = _MISSING) -> Any:
        value = self._get(name, default)
        if value is default:
            return value
        if not isinstance(value, dict):
            raise invalid(self.path(name), "must be an object")
        return Params(value, f"{self.path(name)}.")

    def list(self, name: builtins.str, default: Any = _MISSING,
             max_len: builtins.int = 10_000) -> Any:
        value = self._get(name, default)
        if value is default:
            return value
        if not isinstance(value, list):
            raise invalid(self.path(name), "must be an array")
        if len(value) > max_len:
            raise invalid(self.path(name), f"must hold at most {max_len} items")
        return value

    def int_list(self, name: builtins.str, default: Any = _MISSING) -> Any:
        items = self.list(name, default)
        if items is default:
            return items
        for i, v in enumerate(items):
            if isinstance(v, bool) or not isinstance(v, int):
                raise invalid(f"{self.path(name)}[{i}]", "must be an integer")
        return items

    def str_list(self, name: builtins.str, default: Any = _MISSING) -> Any:
        items = self.list(name, default)
        if items is default:
            return items
        for i, v in enumerate(items):
            if not isinstance(v, str) or not v or len(v) > 120:
                raise invalid(f"{self.path(name)}[{i}]", "must be a non-empty string")
        return items

    def vec(self, name: builtins.str, default: Any = _MISSING) -> Any:
        """A point or vector given as {x, y, z} (missing axes are 0) or [x, y, z]."""
        value = self._get(name, default)
        if value is default:
            return value
        if isinstance(value, list) and len(value) == 3:
            value = {"x": value[0], "y": value[1], "z": value[2]}
        if not isinstance(value, dict):
            raise invalid(self.path(name), "must be {x, y, z} or [x, y, z]")
        inner = Params(value, f"{self.path(name)}.")
        return (inner.num("x", 0.0), inner.num("y", 0.0), inner.num("z", 0.0))
