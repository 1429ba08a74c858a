"""The quick yes of tool argument validation: it never passes what jsonschema refuses, it
applies to the tools agents call most, and refusals still come in jsonschema's words."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from app.mcp.flat_schema import TYPES, certainly_valid, plan

NAMES = st.sampled_from(["path", "url", "action", "params", "n", "flag"])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=3),
    max_leaves=5)


@st.composite
def flat_schemas(draw: st.DrawFn) -> dict[str, Any]:
    properties = draw(st.dictionaries(NAMES, st.sampled_from(sorted(TYPES)), max_size=5))
    schema: dict[str, Any] = {"type": "object", "properties": {
        name: {"type": kind, **({"description": "d"} if draw(st.booleans()) else {})}
        for name, kind in properties.items()}}
    if draw(st.booleans()):
        schema["required"] = draw(st.lists(NAMES, unique=True, max_size=3))
    closed = draw(st.sampled_from([None, True, False]))
    if closed is not None:
        schema["additionalProperties"] = closed
    return schema


SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) \
    | st.sampled_from([0.0, 1.0, -2.0]) | st.text(max_size=3)


@settings(max_examples=600, deadline=None)
@given(flat_schemas(), st.dictionaries(NAMES, SCALARS | JSON, max_size=5) | JSON)
def test_a_quick_yes_is_always_jsonschemas_yes(schema: dict[str, Any], value: Any) -> None:
    facts = plan(schema)
    assert facts is not None, schema
    if certainly_valid(facts, value):
        assert list(Draft202012Validator(schema).iter_errors(value)) == [], (schema, value)


def test_only_flat_schemas_are_read() -> None:
    assert plan({"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}}) \
        is None
    assert plan({"type": "object", "properties": {"s": {"enum": ["a"]}}}) is None
    assert plan({"type": "object", "additionalProperties": {"type": "string"}}) is None
    assert plan({"type": "object", "properties": {"o": {"type": "object",
                                                        "properties": {}}}}) is None
    assert plan({"type": "array"}) is None
    assert plan({"type": "object", "minProperties": 1}) is None


def test_the_agents_everyday_tools_take_the_quick_path(app) -> None:  # type: ignore[no-untyped-def]
    tools = app.extensions["mcp"]._registry().tools
    assert plan(tools["navigate"].input_schema) is not None


def test_refusals_still_name_the_problem(studio, client) -> None:  # type: ignore[no-untyped-def]
    from tests.mcp.conftest import Http
    from tests.mcp.test_http import _FlaskClient

    http = Http("http://localhost", studio.token, _FlaskClient(client))
    http.initialize()
    unknown = http.tool("navigate", path="/studios", page=2)
    assert unknown["isError"] is True
    assert "unknown argument page" in unknown["content"][0]["text"], unknown
    typed = http.tool("navigate", path=3)
    assert typed["isError"] is True
    assert "path: 3 is not of type 'string'" in typed["content"][0]["text"], typed
