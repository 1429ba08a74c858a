"""Script and YAML payloads in every free-text parameter of every action (from the registry):
whatever is stored renders inert in HTML and leaves the Markdown frontmatter valid, unforged
and faithful to what was typed. Generalises tests/core/test_hostile.py to all actions."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.core.test_hostile import dangerous_markup
from tests.core.test_registry import sample
from tests.helpers import parse_md
from tests.security import matrix

# Each combines markup that would run script with text that would break out of YAML.
PAYLOADS = [
    '<script>alert(1)</script>"><img src=x onerror=alert(2)> \'q\' : # [x](javascript:alert(3))',
    "---\napp: Forged\nactions:\n- name: delete_all\n---\n<svg/onload=alert(4)>",
    "{{ 7*7 }} {% raw %} <iframe src=//evil.example></iframe>\u2028\x85 & &amp; </textarea>",
    "controls \x01\x1b[31m\x7f\u200b <b>bold</b>",
]


def free_text(act: Any) -> list[str]:
    """Parameters a person types freely (no enum, no pattern): where payloads can go."""
    return [p.name for p in act.params if p.type in ("string", "text")
            and not p.enum and not p.pattern and p.name not in ("handle", "scopes", "expires",
                                                                 "timezone", "token_id")]


def who_may(act: Any, spec: Any) -> str | None:
    allowed = matrix.allowed(act, spec)
    return next((role for role in ("creator", "admin", "member") if role in allowed), None)


def attempts(client: Any, seeded: matrix.Studio, payload: str):  # type: ignore[no-untyped-def]
    """(path, action, free-text names, headers, response) per action with free text, as one it
    admits, with ``payload`` in every free-text parameter and valid samples elsewhere."""
    for path, spec, act in seeded.cells():
        fields = free_text(act)
        role = who_may(act, spec)
        if not fields or role is None:
            continue
        headers = {"Authorization": f"Bearer {seeded.tokens[role]}", "Accept": "application/json"}
        described = client.get(f"{path}/actions/{act.name}", headers=headers)
        if described.status_code != 200:
            continue  # not available in this state (e.g. an option on a closed decision)
        schema = described.json["input_schema"]["properties"]
        params = {p.name: sample({"name": p.name}, schema[p.name]) for p in act.params
                  if p.required}
        for name in fields:
            limit = act.param(name).max_length
            params[name] = payload[:limit] if limit else payload
        params = {k: v for k, v in params.items() if v is not None}
        yield path, act, fields, headers, client.post(f"{path}/actions/{act.name}", json=params,
                                                      headers=headers)


@pytest.mark.parametrize("payload", PAYLOADS, ids=["html", "yaml", "template", "controls"])
def test_every_text_field_renders_inert(app: Flask, client, make_agent, payload: str) -> None:  # type: ignore[no-untyped-def]
    seeded = matrix.seed(app, make_agent)
    failures: list[str] = []
    stored = 0
    for path, act, _fields, headers, response in attempts(client, seeded, payload):
        if response.status_code >= 500:
            failures.append(f"{act.name}: {response.status_code}")
            continue
        if response.status_code >= 300:
            continue  # refused by a service rule: nothing stored, nothing to render
        stored += 1
        location = (response.json.get("location") or path).split("#")[0]
        where = {path, location, "/studios/team", "/u/carol"}
        for target in where:
            html = client.get(target, headers={**headers, "Accept": "text/html"})
            if html.status_code == 200 and dangerous_markup(html.get_data(as_text=True)):
                failures.append(f"{act.name} → {target}: "
                                f"{dangerous_markup(html.get_data(as_text=True))}")
            md = client.get(target, headers={**headers, "Accept": "text/markdown"})
            if md.status_code != 200:
                continue
            front, _ = parse_md(md.get_data(as_text=True))  # a real YAML parser
            offered = client.get(f"{target.rstrip('/')}/actions",
                                 headers={**headers, "Accept": "application/json"}).json
            if front["app"] != "Harmonic" or front["path"] != target.split("?")[0]:
                failures.append(f"{act.name} → {target}: frontmatter forged")
            if [a["name"] for a in front["actions"]] != [a["name"] for a in offered["actions"]]:
                failures.append(f"{act.name} → {target}: actions differ from the index")
            # A title built from the payload holds it verbatim (whitespace folded), as text.
            typed, title = " ".join(payload.split()), " ".join(str(front["title"]).split())
            if typed[:12] in title and typed[:40] not in title:
                failures.append(f"{act.name} → {target}: title {front['title']!r}")
    print(f"{stored} actions stored the payload")
    assert stored >= 15, stored  # most actions with text fields really stored the payload
    assert not failures, "\n".join(failures)


def test_nul_characters_are_refused_by_name(app: Flask, client, make_agent) -> None:  # type: ignore[no-untyped-def]
    # PostgreSQL refuses NUL in text columns: it was a 500 there, in every text parameter.
    seeded = matrix.seed(app, make_agent)
    tried = 0
    for _path, act, fields, _headers, response in attempts(client, seeded, "a\x00b"):
        tried += 1
        assert response.status_code == 422, (act.name, response.get_data(as_text=True))
        named = {e["param"] for e in response.json["error"]["errors"]}
        assert set(fields) <= named, (act.name, named)
    assert tried >= 15
