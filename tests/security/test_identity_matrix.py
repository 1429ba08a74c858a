"""Every MCP tool and every action × every kind of token × every door, from the registries.

Tokens (``matrix.TOKEN_KINDS``): a person's read token and write token, an app's OAuth read
and write tokens (minted through the authorization-code flow) and an agent's token. Doors: MCP
over stdio (the stdio transport class of ``bin/mcp-server``, in this process, fed one message
at a time: a real process per cell would take minutes; ``test_token_kinds.py`` runs the real
process through the official SDK), over HTTP in a 2025-11-25 session and in stateless
2026-07-28 requests, and, for actions, the Markdown ``POST <page>/actions/<name>``.

Each cell is a probe: the call's arguments carry one unknown argument, so a call the
authorization question lets through stops at validation, and one it refuses says why; nothing
runs either way. A new tool or action enters the matrix by itself; a tool whose effect depends
on its arguments names the arguments that change it in ``VARIANTS``. Then real calls, one per
kind of effect per token per door: what may run does, and what is refused changes nothing.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask

from app.actions.registry import ACTIONS
from app.mcp.info import APP_MIME, UI_EXTENSION
from app.mcp.registry import REGISTRY
from tests.mcp.conftest import INIT, Http, messages_of
from tests.mcp.test_era_2026 import Stateless, meta
from tests.mcp.test_http import _FlaskClient
from tests.security import matrix
from tests.security.grants import agent_token, oauth_token

PROBE = matrix.PROBE
# Declared to every door, so a tool only an MCP Apps host may call is probed too.
CAPABILITIES = {"extensions": {UI_EXTENSION: {"mimeTypes": [APP_MIME]}}}


def _design_methods() -> dict[str, str]:
    """One design-model method per kind of effect, from its registry."""
    import app.design_model.rpc  # noqa: F401  (registers every method)
    from app.design_model.registry import EFFECTS

    found: dict[str, str] = {}
    for name, effect in sorted(EFFECTS.items()):
        found.setdefault(effect.kind, name)
    return found


# The arguments that change what a call does, for each tool whose effect depends on them
# (``Tool.effect_of``). execute_action runs every action: its cells are the actions' own.
VARIANTS: dict[str, Callable[[], list[dict[str, Any]]]] = {
    "replay": lambda: [{"dry_run": True}, {"dry_run": False}],
    "upstream_call": lambda: [{"method": name} for name in _design_methods().values()],
    "execute_action": lambda: [],
}


def tool_cells(paths: dict[str, str]) -> list[tuple[str, dict[str, Any], Any]]:
    """(tool, probe arguments, the call's declared effect) for every tool and every action."""
    cells = []
    for tool in REGISTRY.tools.values():
        assert tool.input_schema.get("additionalProperties") is False, \
            f"{tool.name} takes any argument: the matrix's probe would run it for real"
        if tool.effect_of is not None:
            assert tool.name in VARIANTS, f"name the arguments that change {tool.name}'s effect"
            variants = VARIANTS[tool.name]()
        else:
            variants = [{}]
        for args in variants:
            cells.append((tool.name, {**args, **PROBE}, tool.call_effect(args)))
    by_name = {act.name: path for path, _spec, act in _action_pages(paths)}
    for name, act in ACTIONS.items():
        cells.append(("execute_action", {"action": name, "path": by_name[name], **PROBE},
                      act.effect))
    return cells


def _action_pages(paths: dict[str, str]) -> list[tuple[str, Any, Any]]:
    studio = matrix.Studio(paths=paths)
    return studio.cells()


# -- the doors ---------------------------------------------------------------------------------

class StdioDoor:
    """bin/mcp-server's stdio transport in this process: each message goes through its
    per-call token check and the MCP engine, and the answer is the line it writes."""

    def __init__(self, app: Flask, token: str) -> None:
        from app.mcp.stdio import StdioTransport

        self.out = io.BytesIO()
        self.transport = StdioTransport(token, io.BytesIO(), self.out, lambda: app)
        self.transport.app = app
        self.transport.server.registry = REGISTRY
        self.ids = 0
        self.request("initialize", dict(INIT, capabilities=CAPABILITIES))

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        start = len(self.out.getvalue())
        self.transport.run_with_app({"jsonrpc": "2.0", "id": self.ids, "method": method,
                                     "params": params})
        lines = self.out.getvalue()[start:].decode().splitlines()
        answers = [json.loads(line) for line in lines if line.strip()]
        return next(a for a in answers if a.get("id") == self.ids)

    def call(self, name: str, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return 200, self.request("tools/call", {"name": name, "arguments": args})


class LegacyDoor:
    def __init__(self, client: Any, token: str) -> None:
        self.http = Http("http://localhost", token, _FlaskClient(client))
        self.http.initialize(CAPABILITIES)

    def call(self, name: str, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.http._ids += 1
        response = self.http.post({"jsonrpc": "2.0", "id": self.http._ids,
                                   "method": "tools/call",
                                   "params": {"name": name, "arguments": args}})
        return response.status_code, messages_of(response)[-1]


class ModernDoor:
    def __init__(self, client: Any, token: str) -> None:
        self.http = Stateless(client, token)

    def call(self, name: str, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        response = self.http.post("tools/call", {"name": name, "arguments": args,
                                                 "_meta": meta(CAPABILITIES)})
        return response.status_code, json.loads(response.get_data(as_text=True))


def open_doors(app: Flask, client: Any, token: str) -> dict[str, Any]:
    return {"stdio": StdioDoor(app, token), "HTTP 2025-11-25": LegacyDoor(client, token),
            "HTTP 2026-07-28": ModernDoor(client, token)}


def refused_by_authorization(status: int, answer: dict[str, Any]) -> str | None:
    """The reason when the one authorization question refused the call, else None."""
    if "error" in answer:  # an app's missing scope: 403 with the challenge (step-up)
        data = answer["error"].get("data") or {}
        return str(data.get("reason")) if status == 403 else None
    result = answer.get("result") or {}
    error = (result.get("structuredContent") or {}).get("error")
    if result.get("isError") and isinstance(error, dict) \
            and error.get("reason") in ("insufficient_scope", "person_only"):
        return str(error["reason"])
    return None


def reached_validation(name: str, answer: dict[str, Any]) -> bool:
    result = answer.get("result") or {}
    text = " ".join(block.get("text", "") for block in result.get("content") or [])
    return bool(result.get("isError")) and f"Invalid arguments for {name}" in text \
        and "zz_matrix_probe" in text


# -- the tokens --------------------------------------------------------------------------------

@pytest.fixture
def seeded(app: Flask, make_agent: Any) -> matrix.Studio:
    return matrix.seed(app, make_agent)


def tokens_of(app: Flask, client: Any, seeded: matrix.Studio, make_agent: Any
              ) -> dict[str, str]:
    """A token of each kind, all of carol (the creator of every sample item) or her agent."""
    carol = make_agent("carol")
    bot = agent_token(carol, "carolbot")
    joined = client.post("/studios/team/join/actions/join_studio", json={},
                         headers={"Authorization": f"Bearer {bot}", "Accept": "application/json"})
    assert joined.status_code == 200, joined.get_data(as_text=True)
    return {"read token": seeded.tokens["readonly"], "write token": carol.token,
            "OAuth read": oauth_token(app, "carol", matrix.PASSWORD, write=False)[0],
            "OAuth write": oauth_token(app, "carol", matrix.PASSWORD)[0],
            "agent token": bot}


def report(failures: list[str], checked: int) -> None:
    assert checked > 0
    assert not failures, f"{len(failures)} of {checked} cells wrong:\n" + "\n".join(failures[:40])


def check_refusal(where: str, identity: str, effect: Any, status: int, answer: dict[str, Any],
                  failures: list[str]) -> bool:
    """Whether the call was refused as it must be; a wrong answer is added to ``failures``."""
    reason = refused_by_authorization(status, answer)
    if matrix.may_run(identity, effect):
        if reason is not None:
            failures.append(f"{where} as {identity} ({effect}): refused ({reason})")
        return False
    scope = matrix.refusal_scope(identity, effect)
    expected = "insufficient_scope" if scope else "person_only"
    if reason != expected:
        failures.append(f"{where} as {identity} ({effect}): {status} {str(answer)[:160]}, "
                        f"expected {expected}")
    elif identity.startswith("OAuth") and scope and "HTTP" in where and status != 403:
        failures.append(f"{where} as {identity}: an app's missing scope is a 403 challenge")
    return True


def test_every_tool_and_action_for_every_token_at_every_mcp_door(
        app: Flask, client: Any, seeded: matrix.Studio, make_agent: Any) -> None:
    cells = tool_cells(seeded.paths)
    assert {name for name, _args, _effect in cells} == set(REGISTRY.tools)
    assert {args.get("action") for name, args, _e in cells if name == "execute_action"} \
        == set(ACTIONS)
    failures: list[str] = []
    checked = 0
    for identity, token in tokens_of(app, client, seeded, make_agent).items():
        for door_name, door in open_doors(app, client, token).items():
            for name, args, effect in cells:
                status, answer = door.call(name, args)
                checked += 1
                where = f"{door_name} {name}({args.get('action') or args.get('method') or ''})"
                if not check_refusal(where, identity, effect, status, answer, failures) \
                        and not reached_validation(name, answer):
                    failures.append(f"{where} as {identity}: {status} {str(answer)[:200]}")
    report(failures, checked)


def test_every_action_for_every_token_at_the_markdown_door(
        app: Flask, client: Any, seeded: matrix.Studio, make_agent: Any) -> None:
    failures: list[str] = []
    checked = 0
    for identity, token in tokens_of(app, client, seeded, make_agent).items():
        for path, _spec, act in seeded.cells():
            response = client.post(f"{path}/actions/{act.name}", json=PROBE,
                                   headers={"Authorization": f"Bearer {token}",
                                            "Accept": "text/markdown"})
            checked += 1
            text = response.get_data(as_text=True)
            scoped = "this token lacks the '" in text
            personal = "only the person may run it" in text
            where = f"POST {path}/actions/{act.name}"
            if matrix.may_run(identity, act.effect):
                if scoped or personal:
                    failures.append(f"{where} as {identity}: refused ({response.status_code})")
            elif response.status_code != 403 or not (
                    scoped if matrix.refusal_scope(identity, act.effect) else personal):
                failures.append(f"{where} as {identity}: {response.status_code} {text[:160]}")
    report(failures, checked)


# -- real calls: one per kind of effect --------------------------------------------------------

IGNORED = {"last_used_at", "last_seen_at"}  # a token's and a session's use, noted once a minute


def snapshot(app: Flask) -> str:
    """A digest of every row of every table (but the marks of a token's or session's use)."""
    from sqlalchemy import select

    from app.extensions import db

    digest = hashlib.sha256()
    with app.app_context():
        for table in db.metadata.sorted_tables:
            columns = [c for c in table.columns if c.name not in IGNORED]
            rows = db.session.execute(select(*columns)).all()
            digest.update(f"{table.name}:{sorted(map(repr, rows))}".encode())
        db.session.rollback()
    return digest.hexdigest()


def real_calls(handle: str) -> list[tuple[str, dict[str, Any], Any]]:
    """(tool, arguments, effect): one real call per kind of effect, as ``handle``."""
    from app.actions.effects import READ

    return [
        ("navigate", {"path": "/studios/team"}, READ),
        ("execute_action", {"action": "create_note", "path": "/studios/team/note",
                            "params": {"text": "by the matrix"}}, ACTIONS["create_note"].effect),
        ("execute_action", {"action": "create_api_token", "path": f"/u/{handle}/settings/tokens",
                            "params": {"name": "matrix"}}, ACTIONS["create_api_token"].effect),
        ("teach_stop", {}, REGISTRY.tools["teach_stop"].effect),
        ("replay", {"session_id": "nothing-here", "dry_run": False},
         REGISTRY.tools["replay"].call_effect({"dry_run": False})),
    ]


def test_real_calls_run_when_allowed_and_change_nothing_when_refused(
        app: Flask, client: Any, seeded: matrix.Studio, make_agent: Any) -> None:
    failures: list[str] = []
    checked = 0
    kinds_seen: set[tuple[str, bool]] = set()
    for identity, token in tokens_of(app, client, seeded, make_agent).items():
        handle = "carolbot" if identity == "agent token" else "carol"
        for door_name, door in open_doors(app, client, token).items():
            for name, args, effect in real_calls(handle):
                before = snapshot(app)
                status, answer = door.call(name, args)
                checked += 1
                where = f"{door_name} {name}({args.get('action', '')})"
                if check_refusal(where, identity, effect, status, answer, failures):
                    if snapshot(app) != before:
                        failures.append(f"{where} as {identity}: refused but changed rows")
                    kinds_seen.add((effect.kind, False))
                    continue
                result = answer.get("result") or {}
                ran = status == 200 and "result" in answer and (
                    not result.get("isError") or name == "replay")  # (no such playbook)
                if not ran:
                    failures.append(f"{where} as {identity}: {status} {str(answer)[:200]}")
                kinds_seen.add((effect.kind, True))
    report(failures, checked)
    # Every kind of effect was both run and refused somewhere.
    assert kinds_seen >= {(k, ran) for k in ("read", "write", "destructive")
                          for ran in (True, False)} - {("read", False)}, kinds_seen
