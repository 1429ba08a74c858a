"""Advertised and accepted can never drift: crawl every page reachable from a studio, and for
each action a page advertises, post exactly the advertised parameters (accepted) and the same
plus one the page did not advertise (refused, naming it)."""

from __future__ import annotations

import re
import uuid
from typing import Any

from tests.helpers import parse_md

LINK = re.compile(r"\]\((/[^)\s#]*)\)")
# Values that pass the services' own rules too; heartbeats off keeps the sampler in the studio.
SAMPLES: dict[str, Any] = {"timezone": "UTC", "scopes": "read", "expires": "7d",
                           "deadline": "7d", "code": None, "heartbeats_required": False}


def sample(param: dict[str, Any], schema: dict[str, Any]) -> Any:
    """A value of the advertised type (schema from the action's JSON description)."""
    name = param["name"]
    if name in SAMPLES:
        return SAMPLES[name]
    if name == "handle":
        return f"h-{uuid.uuid4().hex[:8]}"
    return from_schema(schema)


def from_schema(schema: dict[str, Any]) -> Any:
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0]
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return max(1, int(schema.get("minimum", 1)))
    if kind == "array":
        return [from_schema(schema.get("items", {"type": "string"}))]
    if kind == "object":
        return {k: from_schema(v) for k, v in schema.get("properties", {}).items()
                if k in schema.get("required", [])}
    return "Sample text"


def crawl(agent, start: str, limit: int = 80) -> list[str]:  # type: ignore[no-untyped-def]
    seen, queue = [], [start]
    while queue and len(seen) < limit:
        path = queue.pop(0)
        if path in seen or "/actions" in path or path.startswith(("/u/", "/logout")):
            continue
        r = agent.get(path)
        if r.status_code != 200 or r.mimetype != "text/markdown":
            continue
        seen.append(path)
        for link in LINK.findall(r.get_data(as_text=True)):
            if link.startswith("/studios/team") and link not in seen:
                queue.append(link)
    return seen


def test_advertised_parameters_are_exactly_the_accepted_ones(studio) -> None:  # type: ignore[no-untyped-def]
    r = studio.act("/studios/team/note", "create_note", text="seed note")
    assert r.status_code == 201
    pages = crawl(studio, "/studios/team") + ["/studios/new", "/u/alice/settings",
                                              "/u/alice/settings/tokens"]
    assert r.json["location"] in pages and f"{r.json['location']}/edit" in pages
    checked = 0
    for path in pages:
        front, _ = parse_md(studio.get(path).get_data(as_text=True))
        for advertised in front["actions"]:
            name = advertised["name"]
            described = studio.get(f"{path}/actions/{name}", accept="application/json").json
            props = described["input_schema"]["properties"]
            assert [p["name"] for p in advertised["params"]] == list(props), (path, name)
            params = {p["name"]: sample(p, props[p["name"]]) for p in advertised["params"]}
            params = {k: v for k, v in params.items() if v is not None}
            extra = studio.act(path, name, **params, zz_not_advertised=1)
            assert extra.status_code == 422, (path, name, extra.get_data(as_text=True))
            assert any(e["param"] == "zz_not_advertised" for e in extra.json["error"]["errors"])
            ok = studio.act(path, name, **params)
            assert ok.status_code < 500, (path, name)
            if ok.status_code == 422:
                drift = [e for e in ok.json["error"]["errors"]
                         if e["message"].startswith(("unknown parameter", "must be a"))]
                assert not drift, (path, name, drift)
            checked += 1
    assert checked >= 8
