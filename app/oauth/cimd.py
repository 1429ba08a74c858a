"""Client ID Metadata Documents: a client_id that is an https URL names a JSON document the
client publishes about itself (client_name, redirect_uris, logo_uri…); we fetch it.

The fetch is the app's outbound fetch (``app.core.outbound``: no cookies, no redirects,
one deadline of ``TIMEOUT`` seconds for the whole call, a size cap, a bounded number at once)
with ``public_only``: a client_id must not make this server call into its own network (SSRF),
so the host's every address must be public (``app.core.netpolicy.is_public_address``) and the
connection goes to an address that was checked. ``HARMONIC_OAUTH_CLIENT_HOSTS`` (an allow-list,
empty by default) admits named hosts regardless, and an entry with a scheme
(``http://127.0.0.1:8123``) admits plain http there. Who may make the server fetch one is the
authorization server's rule (``app.oauth.server.query_client``): a signed-in person, or a
client someone already consented to. Documents are cached per process for ``TTL`` seconds, at
most ``CACHE_SIZE`` of them.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from typing import Any
from urllib.parse import urlsplit

import httpx

from app.core import config, netpolicy, outbound

SETTING = "HARMONIC_OAUTH_CLIENT_HOSTS"
TTL = 3600.0
CACHE_SIZE = 256
MAX_BYTES = 64 * 1024
TIMEOUT = 5.0

_lock = threading.Lock()
_cache: OrderedDict[str, tuple[float, dict[str, Any]]] = OrderedDict()


class Refused(ValueError):
    """Why a client_id URL cannot be used, for the person and the client to read."""


def is_metadata_url(client_id: str) -> bool:
    """Whether ``client_id`` is a URL (a metadata document) rather than a registered id; a
    malformed URL counts as one, so that fetching it is refused with the reason."""
    try:
        parts = urlsplit(client_id)
    except ValueError:
        return client_id.startswith(("http://", "https://"))
    return parts.scheme in ("https", "http") and bool(parts.netloc) and "://" in client_id


def _check_target(url: str) -> bool:
    """Refused unless ``url`` may be fetched; True when only public addresses may be called
    (the host is not on the allow-list)."""
    try:
        where = netpolicy.target(url)
    except netpolicy.Refused as exc:
        raise Refused(f"client_id {exc.message}") from None
    entries = config.app_config().get(SETTING) or ()
    if netpolicy.allowed(where, entries):
        return False
    if where.scheme != "https":
        raise Refused("a client_id URL must use https")
    if urlsplit(url).path in ("", "/"):
        raise Refused("a client_id URL must have a path")
    return True


def fetch(client_id: str) -> dict[str, Any]:
    """The metadata document of ``client_id`` (cached), or Refused saying why not."""
    with _lock:
        hit = _cache.get(client_id)
        if hit is not None and hit[0] > time.monotonic():
            _cache.move_to_end(client_id)
            return hit[1]
    public_only = _check_target(client_id)
    try:
        response = outbound.fetch("GET", client_id, seconds=TIMEOUT, max_bytes=MAX_BYTES,
                                  public_only=public_only,
                                  headers={"Accept": "application/json"})
    except outbound.NotPublic as exc:
        raise Refused(f"the client_id host {exc}") from None
    except outbound.TooLarge:
        raise Refused("the client metadata document is too large") from None
    except httpx.HTTPError as exc:
        raise Refused(f"the client metadata document could not be fetched ({exc})") from None
    if response.status_code != 200:
        raise Refused(f"the client metadata document answered HTTP {response.status_code}")
    body = response.content
    try:
        document = json.loads(body)
    except ValueError:
        raise Refused("the client metadata document is not JSON") from None
    if not isinstance(document, dict) or document.get("client_id") != client_id:
        raise Refused("the client metadata document must name its own URL as client_id")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        raise Refused("the client metadata document lists no redirect_uris")
    with _lock:
        _cache[client_id] = (time.monotonic() + TTL, document)
        _cache.move_to_end(client_id)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return document
