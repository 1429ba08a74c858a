"""The design-model catalog: ``rpc.discover`` (OpenRPC) on all three doors, params checked
against each method's declaration (every problem in one error), an unknown method that lists
the methods, "cannot host" errors that name what can, and upstream_call's schema over MCP
(stdio and HTTP, both eras)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask
from jsonschema import Draft202012Validator

from app.design_model import rpc as _registers_methods  # noqa: F401  fills METHODS
from app.design_model.registry import EFFECTS, METHODS
from tests.design_model.conftest import MODEL_SERVER_GROUP, Rpc
from tests.mcp.clients import TRANSPORTS, over

pytestmark = MODEL_SERVER_GROUP


class ProxyRpc(Rpc):
    """The playbook proxy ``/rpc`` (its upstream: the embedded server), with a token."""

    label = "proxy"

    def __init__(self, client: Any, token: str) -> None:
        self.client, self.token = client, token

    def post(self, body: bytes) -> tuple[int, str, dict[str, str]]:
        response = self.client.post("/rpc", data=body, headers={
            "Content-Type": "application/json", "Authorization": f"Bearer {self.token}"})
        return response.status_code, response.get_data(as_text=True), dict(response.headers)


@pytest.fixture(params=["server", "app", "proxy"])
def door(request: pytest.FixtureRequest, rpc: Rpc, make_agent: Any) -> Rpc:
    """The three doors: bin/model-server, /design-model/rpc and the proxy /rpc."""
    if request.param == "proxy":
        agent = make_agent("proxied")
        return ProxyRpc(agent.client, agent.token)
    if request.param != rpc.label:
        pytest.skip("the rpc fixture gives the other door")
    return rpc


def check_openrpc(doc: dict[str, Any]) -> None:
    """The OpenRPC 1.x structure: info, and methods with params (schemas) and a result."""
    assert doc["openrpc"].startswith("1.") and doc["info"]["title"] and doc["info"]["version"]
    names = [m["name"] for m in doc["methods"]]
    assert len(names) == len(set(names))
    for method in doc["methods"]:
        assert method["name"] and method["summary"] and method["description"]
        assert method["paramStructure"] == "by-name"
        assert method["x-effect"]["effect"] in ("read", "write", "destructive")
        for param in method["params"]:
            assert param["name"] and isinstance(param["required"], bool)
            Draft202012Validator.check_schema(param["schema"])
        assert method["result"]["name"]
        Draft202012Validator.check_schema(method["result"]["schema"])
        example = method["examples"][0]
        assert {p["name"] for p in example["params"]} <= {p["name"] for p in method["params"]}


def test_rpc_discover_on_every_door(door: Rpc) -> None:
    doc = door.ok("rpc.discover")
    check_openrpc(doc)
    methods = {m["name"]: m for m in doc["methods"]}
    assert set(methods) == set(METHODS)
    for name, method in methods.items():
        assert method["x-effect"] == EFFECTS[name].describe()
    rebar = methods["create_rebar_linear"]
    params = {p["name"]: p for p in rebar["params"]}
    assert params["barType"]["required"] and "D16" in params["barType"]["schema"]["enum"]
    assert params["count"]["schema"]["minimum"] == 1
    assert params["host"]["schema"]["type"] == "object" and not params["dryRun"]["required"]
    assert methods["delete_elements"]["x-effect"]["effect"] == "destructive"
    assert ["elementId", "uniqueId", "elementIds", "selector"] in \
        methods["get_element_info"]["x-oneOf"]


def test_every_example_is_a_valid_call(rpc: Rpc) -> None:
    """Each method's example passes its own checks (app errors, such as a placeholder id not
    found, may still answer; an invalid-params refusal may not)."""
    for method in rpc.ok("rpc.discover")["methods"]:
        params = {p["name"]: p["value"] for p in method["examples"][0]["params"]}
        answer = rpc.call(method["name"], **params)
        assert answer.get("error", {}).get("code") != -32602, (method["name"], answer)


def test_three_problems_in_one_error(door: Rpc) -> None:
    error = door.err("preview_rebar_linear", -32602, count="many", host=5)
    problems = {e["param"]: e["message"] for e in error["data"]["errors"]}
    assert problems == {"barType": "is required", "count": "must be an integer",
                        "host": "must be an object"}
    assert error["data"]["param"] == "barType"
    for param, message in problems.items():
        assert f"{param}: {message}" in error["message"]
    # create_* also says confirm, and a nested problem names its path.
    made = door.err("create_rebar_linear", -32602, barType="D99", count=0,
                    host={"elementId": "x"})
    assert [e["param"] for e in made["data"]["errors"]] == [
        "confirm", "barType", "count", "host.elementId"]
    # One problem reads as before: seed 001's message and data.param.
    single = door.err("get_walls", -32602, skip=-1)
    assert single["message"] == "Invalid params: skip: must be ≥ 0"
    assert single["data"]["param"] == "skip"


def test_unknown_method_lists_the_methods(door: Rpc) -> None:
    error = door.err("make_coffee", -32601)
    # Seed 001's message, then every method by name.
    assert error["message"].startswith("Unknown method: make_coffee. Methods: ")
    assert all(name in error["message"] for name in METHODS)
    assert set(error["data"]["methods"]) == set(METHODS) | {"rpc.discover"}
    assert "rpc.discover" in error["data"]["hint"]


def test_cannot_host_names_what_can(rpc: Rpc) -> None:
    error = rpc.err("preview_rebar_linear", -32000, host={"elementId": 3001}, barType="D13",
                    count=2)
    assert error["data"]["code"] == "INVALID_HOST"
    assert "OST_StructuralFraming" in error["message"]
    hosts = error["data"]["hostElementIds"]
    assert hosts and error["data"]["hostCategories"] == ["OST_StructuralFraming"]
    assert all(str(h) in error["message"] for h in hosts)
    for host in hosts:  # each named host really can: a preview on it succeeds
        assert rpc.ok("get_element_info", elementId=host)["element"]["category"] == \
            "OST_StructuralFraming"
    assert rpc.ok("preview_rebar_linear", host={"elementId": hosts[0]}, barType="D13",
                  count=2)["candidates"] == 2


@pytest.mark.parametrize(("transport", "mode", "version"), TRANSPORTS)
def test_upstream_call_schema_and_catalog_over_mcp(request: pytest.FixtureRequest, app: Flask,
                                                    studio: Any, demo: None, transport: str,
                                                    mode: str, version: str) -> None:
    async def scenario(client: Any) -> dict[str, Any]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        resource = await client.read_resource("design-model://catalog")
        discovered = await client.call_tool("upstream_call", {"method": "rpc.discover"})
        bad = await client.call_tool("upstream_call", {
            "method": "preview_rebar_linear", "params": {"count": "many", "host": 5}})
        unknown = await client.call_tool("upstream_call", {"method": "make_coffee"})
        return {"tool": tools["upstream_call"], "resource": resource.contents[0].text,
                "discovered": discovered, "bad": bad, "unknown": unknown}

    out = over(transport, mode, version, request, app, studio.token, scenario)
    tool = out["tool"]
    schema = tool.input_schema["properties"]
    assert set(schema["method"]["enum"]) == set(METHODS) | {"rpc.discover"}
    assert schema["params"]["type"] == "object"
    assert "design-model://catalog" in schema["params"]["description"]
    assert "rpc.discover" in tool.description and "design-model://catalog" in tool.description
    catalog = json.loads(out["resource"])
    check_openrpc(catalog)
    assert not out["discovered"].is_error
    assert out["discovered"].structured_content == catalog
    bad_text = out["bad"].content[0].text
    assert out["bad"].is_error and all(p in bad_text for p in ("barType", "count", "host"))
    assert out["unknown"].is_error and "get_walls" in out["unknown"].content[0].text
