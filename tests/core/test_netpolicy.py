"""The network policy: one loopback predicate, one authority parser, one "auth may be off only
on loopback" rule and one allow-list evaluation, checked directly with tricky spellings and
through the doors that use them (/mcp, the playbook wire endpoints, bin/model-server)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from app.core import netpolicy

ROOT = Path(__file__).resolve().parents[2]

LOOPBACK = ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "[::1]", "::ffff:127.0.0.1",
            "[::ffff:127.0.0.1]", "0:0:0:0:0:0:0:1", "localhost", "LOCALHOST", "LocalHost"]
# Other spellings of an address depend on a resolver or on inet_aton; names that merely start
# like loopback are somebody else's; a bare IPv6 address is not an authority.
NOT_LOOPBACK = ["localhost.", "127.0.0.1.nip.io", "localhost.evil.com", "[::1].evil", "0.0.0.0",
                "10.0.0.1", "::ffff:10.0.0.1", "2130706433", "0x7f000001", "017700000001",
                "127.1", "[::1]:5000", "::", "[127.0.0.1]", "localhost:5000", "", " ", None]


@pytest.mark.parametrize("host", LOOPBACK)
def test_loopback_hosts(host: str) -> None:
    assert netpolicy.is_loopback(host)


@pytest.mark.parametrize("host", NOT_LOOPBACK)
def test_not_loopback_hosts(host: str | None) -> None:
    assert not netpolicy.is_loopback(host)


@pytest.mark.parametrize("authority", [
    "127.0.0.1", "127.0.0.2:5000", "127.255.255.254:80", "[::1]", "[::1]:5000",
    "[::ffff:127.0.0.1]:5000", "[0:0:0:0:0:0:0:1]:1", "localhost", "LOCALHOST:5000",
    "localhost:65535"])
def test_loopback_authorities(authority: str) -> None:
    assert netpolicy.authority_is_loopback(authority)


@pytest.mark.parametrize("authority", [
    "::1", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1",  # an IPv6 authority needs its brackets
    "localhost.", "localhost.:5000", "127.0.0.1.nip.io", "127.0.0.1.nip.io:5000",
    "localhost.evil.com", "[::1].evil", "[::1].evil:5000", "[::1]:5000.evil", "0.0.0.0:5000",
    "10.0.0.1", "[::ffff:10.0.0.1]", "2130706433", "0x7f000001:80", "017700000001",
    "localhost:", "localhost:0", "localhost:65536", "localhost:5000:5000", "localhost:５０００",
    "user@localhost",
    "localhost/x", "evil.com@127.0.0.1", "", None])
def test_not_loopback_authorities(authority: str | None) -> None:
    assert not netpolicy.authority_is_loopback(authority)


def test_split_authority_keeps_the_port() -> None:
    assert netpolicy.split_authority("[::1]:5000") == ("[::1]", 5000)
    assert netpolicy.split_authority("revit.lan") == ("revit.lan", None)
    assert netpolicy.split_authority("[::1].evil") is None


def test_auth_may_be_off_needs_the_switch_a_loopback_bind_and_a_loopback_caller() -> None:
    may = netpolicy.auth_may_be_off
    assert may(True, "127.0.0.1", "127.0.0.2") and may(True, "::1", "::ffff:127.0.0.1")
    assert may(True, "localhost", netpolicy.BIND_ONLY)
    assert not may(False, "127.0.0.1", "127.0.0.1")  # the switch is on
    assert not may(True, "0.0.0.0", "127.0.0.1")  # bound to every interface
    assert not may(True, None, "127.0.0.1") and not may(True, "localhost.", netpolicy.BIND_ONLY)
    for remote in ("10.0.0.1", "::ffff:10.0.0.1", "", None):
        assert not may(True, "127.0.0.1", remote), remote


@pytest.mark.parametrize(("url", "entries"), [
    ("http://127.0.0.2:5210/rpc", "loopback"),
    ("http://[::1]:5210", "loopback"),
    ("http://localhost:5210", "loopback"),
    ("http://revit.lan:5210", "revit.lan"),
    ("http://revit.lan:5210", "other, REVIT.LAN:5210"),
    ("https://revit.lan", "https://revit.lan:443"),
    ("http://[::1]:5210", "[::1]:5210"),
    ("http://[::1]:5210", "::1"),
])
def test_allow_list_admits(url: str, entries: str) -> None:
    assert netpolicy.check_url(url, netpolicy.parse_allow_list(entries), "X")


@pytest.mark.parametrize(("url", "entries"), [
    ("http://127.0.0.1.nip.io:5210", "loopback"),
    ("http://localhost.evil.com:5210", "loopback"),
    ("http://2130706433:5210", "loopback"),
    ("http://[::ffff:10.0.0.1]:5210", "loopback"),
    ("http://revit.lan:5211", "revit.lan:5210"),
    ("http://revit.lan:5210", "https://revit.lan:5210"),
    ("http://evil.revit.lan", "revit.lan"),
    ("http://user@revit.lan", "revit.lan"),
    ("ftp://revit.lan", "revit.lan"),
    ("http://revit.lan:x", "revit.lan"),
    ("http://127.0.0.1", ""),
])
def test_allow_list_refuses(url: str, entries: str) -> None:
    with pytest.raises(netpolicy.Refused) as refused:
        netpolicy.check_url(url, netpolicy.parse_allow_list(entries), "SOME_SETTING")
    assert refused.value.message


def test_a_refusal_names_the_setting_never_its_entries() -> None:
    expected = ("host '10.0.0.1:80' is not allowed: this server's operator allows a host by "
                "adding it to SOME_SETTING")
    for entries in ((), ("loopback",), ("revit.lan", "10.9.9.9:5210", "https://ci.lan")):
        with pytest.raises(netpolicy.Refused) as refused:
            netpolicy.check_url("http://10.0.0.1/", entries, "SOME_SETTING")
        assert refused.value.message == expected


def test_the_module_needs_only_the_standard_library() -> None:
    # bin/serve imports it before anything else: beyond the app package itself (which needs
    # Flask and config), it must pull in nothing but the standard library.
    probe = ("import sys, app, config; before = set(sys.modules); import app.core.netpolicy; "
             "print(sorted(m for m in set(sys.modules) - before "
             "if m.split('.')[0] not in sys.stdlib_module_names and m.split('.')[0] != 'app'))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# -- through the doors -----------------------------------------------------------------------

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "pytest", "version": "1"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}


def _mcp(app: Flask, remote: str, body: dict[str, Any], **headers: str) -> Any:
    return app.test_client().post("/mcp", data=json.dumps(body),
                                  headers={**MCP_HEADERS, **headers},
                                  environ_base={"REMOTE_ADDR": remote})


@pytest.fixture
def mcp_auth_off(app: Flask, monkeypatch: pytest.MonkeyPatch) -> Flask:
    monkeypatch.setitem(app.config, "HARMONIC_MCP_AUTH", False)
    monkeypatch.setitem(app.config, "HARMONIC_HOST", "127.0.0.1")
    return app


def test_mcp_auth_off_serves_any_loopback_caller(mcp_auth_off: Flask) -> None:
    started = _mcp(mcp_auth_off, "127.0.0.2", INITIALIZE)
    assert started.status_code == 200, started.get_data(as_text=True)
    session = {"Mcp-Session-Id": started.headers["Mcp-Session-Id"],
               "MCP-Protocol-Version": "2025-11-25"}
    listed = _mcp(mcp_auth_off, "::1", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                  **session)
    assert listed.status_code == 200 and listed.get_json()["result"]["tools"]


@pytest.mark.parametrize("remote", ["10.0.0.1", "::ffff:10.0.0.1", "192.168.1.10"])
def test_mcp_auth_off_refuses_a_caller_off_loopback(mcp_auth_off: Flask, remote: str) -> None:
    refused = _mcp(mcp_auth_off, remote, INITIALIZE)
    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"].startswith("Bearer")


def test_mcp_auth_off_is_ignored_on_a_bind_off_loopback(mcp_auth_off: Flask,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(mcp_auth_off.config, "HARMONIC_HOST", "127.0.0.1.nip.io")
    assert _mcp(mcp_auth_off, "127.0.0.1", INITIALIZE).status_code == 401


@pytest.mark.parametrize(("host", "status"), [
    ("127.0.0.2:5000", 200), ("[::1]:5000", 200), ("LOCALHOST", 200),
    ("[::1].evil", 403), ("127.0.0.1.nip.io:5000", 403), ("localhost.evil.com", 403)])
def test_mcp_host_header_is_judged_by_the_same_predicate(app: Flask, make_agent, host: str,
                                                         status: int) -> None:
    agent = make_agent("hanna")
    answer = _mcp(app, "127.0.0.1", INITIALIZE, Host=host,
                  Authorization=f"Bearer {agent.token}")
    assert answer.status_code == status, answer.get_data(as_text=True)


@pytest.fixture
def playbook_auth_off(app: Flask, monkeypatch: pytest.MonkeyPatch) -> Flask:
    monkeypatch.setitem(app.config, "PLAYBOOK_AUTH", "off")
    monkeypatch.setitem(app.config, "HARMONIC_HOST", "127.0.0.1")
    return app


def _teach_stop(app: Flask, remote: str) -> Any:
    return app.test_client().post("/teach/stop", json={},
                                  environ_base={"REMOTE_ADDR": remote})


@pytest.mark.parametrize("remote", ["127.0.0.2", "::1", "::ffff:127.0.0.1"])
def test_playbook_auth_off_serves_any_loopback_caller(playbook_auth_off: Flask,
                                                      remote: str) -> None:
    answer = _teach_stop(playbook_auth_off, remote)
    assert answer.status_code == 200 and answer.get_json()["ok"] is True


@pytest.mark.parametrize("remote", ["10.0.0.1", "::ffff:10.0.0.1"])
def test_playbook_auth_off_refuses_a_caller_off_loopback(playbook_auth_off: Flask,
                                                         remote: str) -> None:
    answer = _teach_stop(playbook_auth_off, remote)
    assert answer.status_code == 401 and answer.get_json()["ok"] is False


def test_playbook_auth_on_refuses_even_loopback(app: Flask) -> None:
    assert _teach_stop(app, "127.0.0.1").status_code == 401


@pytest.mark.parametrize("host", ["127.0.0.1.nip.io", "localhost.evil.com", "0.0.0.0"])
def test_model_server_refuses_a_bind_off_loopback(host: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bin" / "model-server"), "--host", host],
                          capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "MODEL_SERVER_NO_REEXEC": "1"})
    assert done.returncode == 2 and "not a loopback address" in done.stderr
