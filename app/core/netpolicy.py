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
- ``is_public_address(address)``: whether an address is one the app may call for a URL it did
  not choose (a client's metadata document): globally reachable by IANA's special-purpose
  registries (IPv4 and IPv6, multicast and the deprecated ranges included), and for an IPv6
  address that carries an IPv4 one (IPv4-mapped and -compatible, NAT64 ``64:ff9b::/96``, 6to4
  ``2002::/16``, Teredo ``2001::/32``) the IPv4 address public too.
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


# -- public addresses --------------------------------------------------------------------------

# Every range of IANA's IPv4 and IPv6 Special-Purpose Address Registries that is not globally
# reachable, with multicast and the deprecated blocks, written out rather than left to
# ``ipaddress.is_global``, whose lists differ from one Python release to the next (3.11 calls
# 224.0.0.1, 3fff::1 and 64:ff9b:1::1 global). A globally reachable anycast address inside one
# of these blocks (192.0.0.9, 2001:1::1…) is refused with its block: no URL of ours needs one.
_NOT_PUBLIC = tuple(ipaddress.ip_network(block) for block in (
    "0.0.0.0/8",  # "this network"
    "10.0.0.0/8",  # private use
    "100.64.0.0/10",  # shared address space (carrier-grade NAT)
    "127.0.0.0/8",  # loopback
    "169.254.0.0/16",  # link local
    "172.16.0.0/12",  # private use
    "192.0.0.0/24",  # IETF protocol assignments (DS-Lite, NAT64 discovery, dummy address…)
    "192.0.2.0/24",  # documentation (TEST-NET-1)
    "192.88.99.0/24",  # deprecated 6to4 relay anycast
    "192.168.0.0/16",  # private use
    "198.18.0.0/15",  # benchmarking
    "198.51.100.0/24",  # documentation (TEST-NET-2)
    "203.0.113.0/24",  # documentation (TEST-NET-3)
    "224.0.0.0/4",  # multicast
    "240.0.0.0/4",  # reserved, and the limited broadcast 255.255.255.255
    "::/128",  # unspecified
    "::1/128",  # loopback
    "64:ff9b:1::/48",  # local-use IPv4/IPv6 translation
    "100::/64",  # discard only
    "100:0:0:1::/64",  # dummy IPv6 prefix
    "2001::/23",  # IETF protocol assignments: Teredo, benchmarking, ORCHID…
    "2001:db8::/32",  # documentation
    "3fff::/20",  # documentation
    "5f00::/16",  # segment routing (SRv6) SIDs
    "fc00::/7",  # unique local
    "fe80::/10",  # link local
    "fec0::/10",  # deprecated site local
    "ff00::/8",  # multicast
))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # the well-known prefix: IPv4 in the last 32 bits
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated ::a.b.c.d


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one reaches or names: IPv4-mapped (``::ffff:a.b.c.d``),
    IPv4-compatible (``::a.b.c.d``), NAT64 (``64:ff9b::a.b.c.d``), 6to4 (``2002:AABB:CCDD::``)
    or Teredo's client (``2001:0:…``); None for any other."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64 or (address in _IPV4_COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    return None


def is_public_address(address: str | ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether the app may connect to ``address`` on behalf of a URL it did not choose (see the
    module's docstring); text that is not an address is not public."""
    try:
        ip = ipaddress.ip_address(address.split("%")[0] if isinstance(address, str)
                                  else address)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        inner = embedded_ipv4(ip)
        if inner is not None:
            # Only the well-known NAT64 prefix and 6to4 reach the public IPv4 they carry;
            # mapped, compatible and Teredo addresses are never called.
            return (ip in _NAT64 or ip.sixtofour is not None) and is_public_address(inner)
    if any(ip in block for block in _NOT_PUBLIC if block.version == ip.version):
        return False
    return ip.is_global
