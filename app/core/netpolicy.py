"""The network policy: what counts as loopback, where authentication may be off, which upstream
URLs the app may call. Standard library only, so ``bin/serve`` can import it cheaply.

- ``is_loopback(host)``: one host or address (what a bind setting or ``REMOTE_ADDR`` holds):
  the whole of 127.0.0.0/8, ``::1`` in any spelling, IPv4-mapped loopback such as
  ``::ffff:127.0.0.1``, a bracketed IPv6 literal, and the exact name ``localhost`` (any case).
  Nothing is resolved: other spellings of an address (``2130706433``, ``0x7f000001``,
  ``127.1``), ``localhost.`` and names that merely start like loopback (``127.0.0.1.nip.io``,
  ``localhost.evil.com``) are not loopback, because their meaning depends on a resolver.
- ``authority_is_loopback(authority)``: the same for a ``Host`` header or an Origin's netloc,
  ``host[:port]`` and nothing else (``[::1].evil`` is not ``[::1]``).
- ``auth_may_be_off(switch_off, bind_host, remote_addr)``: the one rule of every door that can
  run without credentials (``/mcp`` with ``HARMONIC_MCP_AUTH=off``, the playbook wire endpoints
  with ``PLAYBOOK_AUTH=off``, ``bin/model-server`` which has no token at all, ``bin/serve``'s
  bind warning): the switch is off, the app binds a loopback host, and the caller is on
  loopback.
- ``check_url(url, entries, setting)``: the one evaluation of the outbound allow-lists
  (``HARMONIC_DESIGN_UPSTREAMS``, ``PLAYBOOK_UPSTREAMS``, ``WORKFLOWS_HTTP_ALLOW``). An entry
  is the word ``loopback``, a host (``revit.lan``, ``[::1]``), a host and port
  (``revit.lan:5210``) or an origin (``https://revit.lan:5210``). Hosts are compared as
  written, never resolved: an allow-listed name is the operator's choice, and any other name
  is refused before a connection is made. A refusal names the setting to change, never the
  entries of the list.
"""

from __future__ import annotations

import enum
import ipaddress
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import urlsplit

LOOPBACK_NAME = "localhost"
LOOPBACK_ENTRY = "loopback"  # the allow-list word for every loopback host


@lru_cache(maxsize=256)  # pure; asked on every /mcp request about the same few peers
def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (a name or an address, IPv6 bracketed or not) is loopback."""
    if not host:
        return False
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        if ":" not in host:  # brackets hold IPv6 literals only
            return False
    if host.lower() == LOOPBACK_NAME:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        # Python < 3.13 calls ::ffff:127.0.0.1 not loopback, yet it reaches 127.0.0.1.
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


# host[:port] where host is a bracketed IPv6 literal or a name/IPv4 without ':' '[' ']' '@' '/'.
_AUTHORITY = re.compile(r"(?P<host>\[[0-9A-Fa-f:.]+\]|[^\[\]:@/\\\s]+)(?::(?P<port>[0-9]{1,5}))?")


def split_authority(authority: str | None) -> tuple[str, int | None] | None:
    """``(host, port)`` of a ``host[:port]`` authority (IPv6 keeps its brackets), or None."""
    match = _AUTHORITY.fullmatch(authority or "")
    if match is None:
        return None
    port = match.group("port")
    if port is not None and not 0 < int(port) < 65536:
        return None
    return match.group("host"), int(port) if port is not None else None


def authority_is_loopback(authority: str | None) -> bool:
    """Whether a ``Host`` header or an Origin's netloc names a loopback host, and nothing else."""
    parts = split_authority(authority)
    return parts is not None and is_loopback(parts[0])


class BindOnly(enum.Enum):
    BIND_ONLY = "bind only"


BIND_ONLY = BindOnly.BIND_ONLY  # auth_may_be_off before any request: only the bind counts


def auth_may_be_off(switch_off: bool, bind_host: str | None,
                    remote_addr: str | None | BindOnly) -> bool:
    """Whether a door may serve a caller without credentials.

    Only when its switch says off, the app binds a loopback host, and the request comes from
    loopback (``remote_addr`` is ``BIND_ONLY`` for the checks made at start-up, before any
    request). A proxy on the same host makes every request arrive from loopback, which is why
    the switches stay on wherever one runs.
    """
    if not switch_off or not is_loopback(bind_host):
        return False
    if remote_addr is BIND_ONLY:
        return True
    return is_loopback(remote_addr)


# -- outbound allow-lists ----------------------------------------------------------------------

class Refused(ValueError):
    """Why an outbound URL may not be called, to follow the URL or its name and a colon."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Target(NamedTuple):
    scheme: str
    host: str  # lower case, IPv6 without brackets
    port: int  # the scheme's default when the URL names none


def parse_allow_list(raw: str | Iterable[str] | None) -> tuple[str, ...]:
    """The entries of a comma list (or of a sequence), stripped and in lower case."""
    items = raw.split(",") if isinstance(raw, str) else list(raw or ())
    return tuple(item.strip().lower() for item in items if item and item.strip())


def target(url: str) -> Target:
    """Scheme, host and port of an http(s) URL without credentials, or Refused saying why."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:  # e.g. a port that is not a number: refused, never a crash
        raise Refused(f"is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Refused("must be an http(s) URL like http://127.0.0.1:5210")
    if parts.username is not None or parts.password is not None:
        raise Refused("must not carry credentials")
    return Target(parts.scheme, parts.hostname.lower(),
                  port or (443 if parts.scheme == "https" else 80))


def _entry_matches(entry: str, where: Target) -> bool:
    if entry == LOOPBACK_ENTRY:
        return is_loopback(where.host)
    if "://" in entry:
        try:
            allowed = target(entry)
        except Refused:
            return False
        return allowed == where
    parts = split_authority(entry)
    if parts is None:
        # A bare IPv6 address ("::1") has colons that are not a port separator.
        return _is_address(entry) and entry == where.host
    name, port = parts
    return name.strip("[]") == where.host and (port is None or port == where.port)


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def allowed(where: Target, entries: Iterable[str]) -> bool:
    """Whether ``where`` matches an entry of the allow-list."""
    return any(_entry_matches(entry, where) for entry in parse_allow_list(entries))


def check_url(url: str, entries: Iterable[str], setting: str) -> Target:
    """The target of ``url`` when ``setting``'s allow-list ``entries`` admits it, else Refused."""
    where = target(url)
    if not allowed(where, entries):
        # The list itself is the operator's business: the refusal names the setting, never
        # its entries (which would map the hosts this server may reach).
        host = f"[{where.host}]" if ":" in where.host else where.host
        raise Refused(f"host '{host}:{where.port}' is not allowed: this server's operator "
                      f"allows a host by adding it to {setting}")
    return where
