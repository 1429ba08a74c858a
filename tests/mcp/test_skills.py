"""The MCP skills extension (SEP-2640) in both eras: skills/list and skills/get, SKILL.md as a
resource, written from the same guide and registries as harmonic://context."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import pytest
import yaml

from app.actions.registry import ACTIONS
from app.core.agent_guide import SKILLS
from app.mcp.registry import REGISTRY
from tests.mcp.conftest import Http
from tests.mcp.test_era_2026 import Stateless

EXTENSION = "io.modelcontextprotocol/skills"


def _frontmatter(text: str) -> dict[str, Any]:
    match = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert match, text[:200]
    return dict(yaml.safe_load(match.group(1)))


def _check_listing(listing: dict[str, Any], read: Any) -> None:
    assert "nextCursor" not in listing
    entries = {e["uri"]: e for e in listing["skills"]}
    assert list(entries) == [f"skill://harmonic/{s.name}/SKILL.md" for s in SKILLS]
    for uri, entry in entries.items():
        text = read(uri)
        assert entry["frontmatter"] == _frontmatter(text)
        assert uri.split("/")[-2] == entry["frontmatter"]["name"]
        (file,) = entry["resources"]
        body = text.encode()
        assert file == {"uri": uri, "digest": "sha256:" + hashlib.sha256(body).hexdigest(),
                        "size": len(body)}


def test_skills_over_2025_sessions(live_server: str, studio) -> None:  # type: ignore[no-untyped-def]
    http = Http(live_server, studio.token)
    init = http.initialize()
    assert init["capabilities"]["extensions"][EXTENSION] == {}
    listing = http.call("skills/list")["result"]

    def read(uri: str) -> str:
        (content,) = http.call("resources/read", {"uri": uri})["result"]["contents"]
        assert content["mimeType"] == "text/markdown"
        return str(content["text"])

    _check_listing(listing, read)
    unknown = http.call("skills/get", {"uri": "skill://harmonic/nope/SKILL.md"})
    assert unknown["error"]["code"] == -32602 and "skills/list" in unknown["error"]["message"]
    listed = {r["uri"]: r for r in http.call("resources/list")["result"]["resources"]}
    for skill in SKILLS:
        shown = listed[f"skill://harmonic/{skill.name}/SKILL.md"]
        assert shown["name"] == skill.name and shown["description"] == skill.description


def test_skills_stateless_with_cache_hints(client, studio) -> None:  # type: ignore[no-untyped-def]
    modern = Stateless(client, studio.token)
    discovered = modern.call("server/discover")["result"]
    assert discovered["capabilities"]["extensions"][EXTENSION] == {}
    listing = modern.call("skills/list")["result"]
    assert listing["ttlMs"] > 0 and listing["cacheScope"] == "private"

    def read(uri: str) -> str:
        return str(modern.call("resources/read", {"uri": uri})["result"]["contents"][0]["text"])

    _check_listing(listing, read)
    uri = listing["skills"][0]["uri"]
    got = modern.call("skills/get", {"uri": uri})["result"]
    assert got["skill"] == listing["skills"][0] and "nextCursor" not in got
    assert got["ttlMs"] > 0 and got["cacheScope"] == "private"


@pytest.mark.parametrize("skill", SKILLS, ids=[s.name for s in SKILLS])
def test_a_skill_is_written_from_the_registries(client, studio, skill) -> None:  # type: ignore[no-untyped-def]
    modern = Stateless(client, studio.token)
    uri = f"skill://harmonic/{skill.name}/SKILL.md"
    text = modern.call("resources/read", {"uri": uri})["result"]["contents"][0]["text"]
    # Every action its pages offer and every tool it names, each with its description.
    offered = [a for a in ACTIONS.values() if set(a.pages) & set(skill.pages)]
    assert offered or skill.tools
    for act in offered:
        assert f"- `{act.signature()}`: {act.description}" in text
    for name in skill.tools:
        assert f"- `{name}`: {REGISTRY.tools[name].description.splitlines()[0]}" in text
    # Every name its steps mention is an action, a tool or a parameter that exists today.
    known = set(ACTIONS) | set(REGISTRY.tools)
    known |= {p.name for a in ACTIONS.values() for p in a.params}
    known |= {p for t in REGISTRY.tools.values() for p in t.input_schema.get("properties", {})}
    mentioned = set(re.findall(r"`([a-z]+(?:_[a-z]+)+|[a-z]+[A-Z][A-Za-z]+)`", skill.steps))
    assert mentioned and mentioned <= known, mentioned - known
    # harmonic://context points to it: one source for both.
    context = modern.call("resources/read", {"uri": "harmonic://context"})["result"]
    assert f"]({uri}): {skill.description}" in context["contents"][0]["text"]
