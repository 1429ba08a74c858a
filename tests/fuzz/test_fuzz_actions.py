"""Every action endpoint of every page kind, with generated parameters and bodies: never a 500,
and an input that is refused leaves every row of the database as it was."""

from __future__ import annotations

import json
from typing import Any

from flask import Flask
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.conftest import budget, digest
from tests.security import matrix

HOSTILE_TEXT = st.sampled_from([
    "", " ", "\x00", "\ud7ff\ue000", "<script>alert(1)</script>", "' OR 1=1 --", "../../etc",
    "{{7*7}}", "%s%n", "\u202e", "x" * 5000, "9" * 400, "-1", "1e309", "NaN", "null", "true",
    "2026-02-30T25:61:00", "P1Y", "-7d", "999999999999d", "read,admin", "[]", "{}",
    "\ud800", "x\udfffy",  # lone surrogates: JSON can carry them, UTF-8 (and so SQL) cannot
])
SCALARS = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=40) | HOSTILE_TEXT)
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                           max_leaves=10)


def cells(seeded: matrix.Studio, client: Any, headers: dict[str, str]
          ) -> list[tuple[str, str, dict[str, Any]]]:
    """(path, action, a valid sample per parameter) for what the creator may try."""
    from tests.core.test_registry import sample

    found = []
    for path, spec, act in seeded.cells():
        if "creator" not in matrix.allowed(act, spec):
            continue
        described = client.get(f"{path}/actions/{act.name}", headers=headers)
        schema = described.json["input_schema"]["properties"] if described.is_json and \
            described.status_code == 200 else {}
        found.append((path, act.name, {p.name: sample({"name": p.name}, schema.get(p.name, {}))
                                       for p in act.params}))
    return found


# Appended to a valid value: each once broke something somewhere (NUL: PostgreSQL text; a lone
# surrogate: the driver's UTF-8, on both databases).
SPIKES = ("\x00", "\u202e", "'\"", "<script>", "{{x}}", "\r\n", "\ud800")


def in_a_form(value: Any) -> str:
    """A form field's text: a form is UTF-8, which has no lone surrogates."""
    text = value if isinstance(value, str) else json.dumps(value)
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def spiked(value: Any) -> st.SearchStrategy[Any]:
    if not isinstance(value, str):
        return st.just(value)
    return st.sampled_from(SPIKES).map(lambda spike: value + spike)


@st.composite
def requests(draw: Any, targets: list[tuple[str, str, dict[str, Any]]]
             ) -> tuple[str, str, Any]:
    """(url, kind, payload): JSON params, form fields or raw bytes for one action. Most
    parameters keep a valid sample so that inputs get past validation into the handlers."""
    path, action, valid = draw(st.sampled_from(targets))
    # One parameter (the victim) gets a hostile value; the others mostly stay valid, so the
    # hostile one reaches the handler and the database rather than stopping at validation.
    victim = draw(st.sampled_from(sorted(valid) or [""]))
    params = {}
    for name, value in valid.items():
        if value is None or not draw(st.integers(0, 6)):
            continue
        params[name] = draw(spiked(value) | HOSTILE_TEXT | JSON_VALUES) if name == victim \
            else draw(st.sampled_from([True, True, True, False]).flatmap(
                lambda keep, v=value: st.just(v) if keep else JSON_VALUES))
    params.update(draw(st.dictionaries(st.sampled_from(["zz", "csrf_token", ""]), JSON_VALUES,
                                       max_size=1)))
    kind = draw(st.sampled_from(["json", "json", "form", "raw"]))
    if kind == "form":
        params = {k: in_a_form(v) for k, v in params.items()}
    payload: Any = params if kind != "raw" else draw(st.binary(max_size=200) | st.just(
        b'{"a": ' * 300))
    return f"{path}/actions/{action}", kind, payload


def test_action_endpoints_never_fail_open(app: Flask, client, make_agent, tried) -> None:  # type: ignore[no-untyped-def]
    seeded = matrix.seed(app, make_agent)
    headers = {"Authorization": f"Bearer {seeded.tokens['creator']}",
               "Accept": "application/json"}
    targets = cells(seeded, client, headers)
    assert len(targets) >= 40

    @budget(150)
    @given(requests(targets))
    def one(request: tuple[str, str, Any]) -> None:
        url, kind, payload = request
        before = digest(app)
        if kind == "json":
            response = client.post(url, json=payload, headers=headers)
        elif kind == "form":
            response = client.post(url, data=payload, headers=headers)
        else:
            response = client.post(url, data=payload,
                                   headers={**headers, "Content-Type": "application/json"})
        tried(response.status_code)
        assert response.status_code < 500, (url, payload, response.get_data(as_text=True))
        assert response.is_json, (url, response.status_code)
        if response.status_code >= 400:
            assert digest(app) == before, (url, payload, response.status_code)
            assert response.json["ok"] is False and response.json["error"]["message"]

    one()
    print(dict(tried.outcomes))
    # The generator reaches the handlers, not only the validator.
    assert tried.outcomes[200] + tried.outcomes[201] > 0 and tried.outcomes[422] > 0


def test_the_digest_sees_every_kind_of_write(app: Flask, studio) -> None:  # type: ignore[no-untyped-def]
    before = digest(app)
    created = studio.act("/studios/team/note", "create_note", text="one")
    assert digest(app) != before
    before = digest(app)
    studio.act(f"{created.json['location']}/edit", "update_note", text="two")
    assert digest(app) != before
