"""Calling the Revit side: in-process by default, over HTTP only to allow-listed URLs.

A request may name ``revitBaseUrl``; it is followed only when its host is on the allow-list
``HARMONIC_DESIGN_UPSTREAMS`` (comma list; default ``loopback``), evaluated by
``app.core.netpolicy.check_url``: entries are the word ``loopback`` (127.0.0.0/8, ::1,
localhost), a host (``revit.lan``), a host and port (``revit.lan:5210``) or an origin
(``https://revit.lan:5210``). Redirects are never followed, so an allowed host cannot bounce a
call elsewhere.
"""

from __future__ import annotations

import itertools
import os
from typing import Any
from urllib.parse import urlsplit

import httpx

from app.core import netpolicy, outbound
from app.design_model.protocol import Params, RpcError, invalid, upstream_error
from app.design_model.registry import METHODS, Ctx

ENV_ALLOWED = "HARMONIC_DESIGN_UPSTREAMS"
ENV_TIMEOUT = "HARMONIC_DESIGN_UPSTREAM_TIMEOUT"
_ids = itertools.count(1)


def allowed_from_env() -> tuple[str, ...]:
    return netpolicy.parse_allow_list(os.environ.get(ENV_ALLOWED, netpolicy.LOOPBACK_ENTRY))


def timeout_from_env() -> float:
    try:
        return max(0.1, float(os.environ.get(ENV_TIMEOUT, "10")))
    except ValueError:
        return 10.0


def rpc_url(base_url: str, allowed: tuple[str, ...], param: str = "revitBaseUrl",
            setting: str | None = None) -> str:
    """The /rpc URL to POST to, or a -32602 naming ``param`` when the URL is not allowed by
    ``setting``'s allow-list ``allowed`` (``HARMONIC_DESIGN_UPSTREAMS`` unless told)."""
    try:
        netpolicy.check_url(base_url, allowed, ENV_ALLOWED if setting is None else setting)
    except netpolicy.Refused as exc:
        raise invalid(param, exc.message) from None
    parts = urlsplit(base_url.strip())
    if parts.query or parts.fragment:
        raise invalid(param, "must not carry a query or a fragment")
    path = parts.path.rstrip("/")
    if not path.endswith("/rpc"):
        path += "/rpc"
    return f"{parts.scheme}://{parts.netloc}{path}"


class Revit:
    """One Revit endpoint: the embedded handler (``url`` None) or a remote /rpc."""

    def __init__(self, ctx: Ctx, url: str | None) -> None:
        self.ctx, self.url = ctx, url

    @classmethod
    def for_request(cls, ctx: Ctx, p: Params, stored: str | None = None) -> Revit:
        """From ``revitBaseUrl`` in the params, else a stored source URL, else in-process."""
        if p.has("revitBaseUrl"):
            return cls(ctx, rpc_url(p.str("revitBaseUrl", max_len=500), ctx.allowed_upstreams))
        if stored:
            return cls(ctx, rpc_url(stored, ctx.allowed_upstreams, "sourceUrl"))
        return cls(ctx, None)

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The method's result; raises RpcError with the upstream's own code on failure."""
        if self.url is None:
            return METHODS[method](self.ctx, Params(params))
        body = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}
        try:
            response = outbound.fetch("POST", self.url, json=body,
                                      seconds=self.ctx.upstream_timeout)
        except httpx.HTTPError as exc:
            raise upstream_error(f"Upstream {self.url} unreachable: {exc.__class__.__name__}: "
                                 f"{exc}", url=self.url) from exc
        if response.status_code != 200:
            raise upstream_error(f"Upstream {self.url} answered HTTP {response.status_code}",
                                 url=self.url, status=response.status_code)
        try:
            payload = response.json()
        except ValueError as exc:
            raise upstream_error(f"Upstream {self.url} answered with invalid JSON",
                                 url=self.url) from exc
        if not isinstance(payload, dict):
            raise upstream_error(f"Upstream {self.url} answered with a non-object", url=self.url)
        error = payload.get("error")
        if isinstance(error, dict):
            code = error["code"] if isinstance(error.get("code"), int) else -32000
            data = error.get("data") if isinstance(error.get("data"), dict) else None
            raise RpcError(code, str(error.get("message", "upstream error")), data)
        result = payload.get("result")
        if not isinstance(result, dict):
            raise upstream_error(f"Upstream {self.url} answered without a result object",
                                 url=self.url)
        return result
