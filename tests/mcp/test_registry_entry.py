"""server.json, the entry the MCP registry lists, describes the server this repository ships:
it keeps the registry's rules, its version and command are the project's own, and the command it
names answers initialize with the server's icons (and every tool carries one)."""

from __future__ import annotations

import base64
import json
import sys
import tomllib
from typing import Any

import pytest
from flask import Flask
from jsonschema import Draft7Validator

from tests.mcp.clients import run
from tests.mcp.conftest import ROOT, app_env

# The registry's published rules for server.json (schema 2025-09-29, and its documentation),
# restated for the fields this entry uses: a reverse-DNS name with exactly one slash, a
# description of at most 100 characters, exact versions (no ranges, never "latest"), and each
# package's and remote's required fields.
_EXACT = {"type": "string", "minLength": 1, "maxLength": 255,
          "not": {"anyOf": [{"const": "latest"}, {"pattern": r"^[\^~<>=]|\.[x*]($|\.)"}]}}
_INPUT = {"type": "object", "required": ["name"],
          "properties": {"name": {"type": "string", "minLength": 1},
                         "description": {"type": "string"}, "isRequired": {"type": "boolean"},
                         "isSecret": {"type": "boolean"},
                         "format": {"enum": ["string", "number", "boolean", "filepath"]}}}
REGISTRY_RULES: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["$schema", "name", "description", "version"],
    "properties": {
        "$schema": {"type": "string",
                    "pattern": r"^https://static\.modelcontextprotocol\.io/schemas/"},
        "name": {"type": "string", "pattern": r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$",
                 "minLength": 3, "maxLength": 200},
        "description": {"type": "string", "minLength": 1, "maxLength": 100},
        "version": _EXACT,
        "packages": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["registryType", "identifier", "version", "transport"],
            "properties": {
                "registryType": {"enum": ["npm", "pypi", "oci", "nuget", "mcpb"]},
                "registryBaseUrl": {"type": "string"}, "identifier": {"type": "string"},
                "version": _EXACT, "runtimeHint": {"type": "string"},
                "transport": {"type": "object", "required": ["type"],
                              "properties": {"type": {"const": "stdio"}}},
                "environmentVariables": {"type": "array", "items": _INPUT},
                "packageArguments": {"type": "array"}, "runtimeArguments": {"type": "array"}}}},
        "remotes": {"type": "array", "items": {
            "type": "object", "required": ["type", "url"],
            "properties": {"type": {"enum": ["streamable-http", "sse"]},
                           "url": {"type": "string"},
                           "headers": {"type": "array", "items": _INPUT}}}},
    },
}


def _entry() -> dict[str, Any]:
    return json.loads((ROOT / "server.json").read_text())


def _project() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_server_json_keeps_the_registry_rules() -> None:
    rules = Draft7Validator(REGISTRY_RULES)
    entry = _entry()
    assert [e.message for e in rules.iter_errors(entry)] == []
    # The rules bite: each of these breaks one of them.
    for broken in ({**entry, "name": "harmonic"}, {**entry, "version": "^0.1"},
                   {**entry, "description": "x" * 101},
                   {**entry, "packages": [{**entry["packages"][0], "version": "latest"}]}):
        assert list(rules.iter_errors(broken)), broken


def test_server_json_describes_this_project() -> None:
    entry, project = _entry(), _project()
    (package,) = entry["packages"]
    assert entry["version"] == package["version"] == project["version"]
    assert package["registryType"] == "pypi" and package["identifier"] == project["name"]
    assert package["transport"] == {"type": "stdio"}
    # The installed command it runs is declared, and resolves to a function of ours.
    target = project["scripts"]["harmonic-mcp-server"]
    module, _, name = target.partition(":")
    assert callable(getattr(__import__(module, fromlist=[name]), name))
    # Its environment is what the stdio server reads (bin/mcp-server documents each).
    documented = (ROOT / "bin" / "mcp-server").read_text().split('"""')[1]
    names = [v["name"] for v in package["environmentVariables"]]
    assert names[0] == "HARMONIC_API_TOKEN" and all(n in documented for n in names)
    secret = next(v for v in package["environmentVariables"] if v["name"] == "HARMONIC_API_TOKEN")
    assert secret["isSecret"] and secret["isRequired"]
    (remote,) = entry["remotes"]
    assert remote["type"] == "streamable-http" and remote["url"].endswith("/mcp")


def _svg(icon: dict[str, Any]) -> bytes:
    prefix = "data:image/svg+xml;base64,"
    assert icon["mimeType"] == "image/svg+xml" and icon["src"].startswith(prefix)
    return base64.b64decode(icon["src"][len(prefix):])


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_command_it_names_serves_with_icons(app: Flask, studio, mode: str) -> None:  # type: ignore[no-untyped-def]
    from mcp import Client, StdioServerParameters

    # What the installed harmonic-mcp-server runs, without depending on the install.
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "import sys; from app.cli import mcp_server; sys.exit(mcp_server())"],
        env=app_env(app, HARMONIC_API_TOKEN=studio.token), cwd=str(ROOT))

    async def scenario() -> tuple[Any, list[Any]]:
        async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
            return client.server_info, (await client.list_tools()).tools

    info, tools = run(scenario)
    assert info.name == "harmonic" and info.version == _project()["version"]
    assert b"<svg" in _svg(info.icons[0].model_dump(by_alias=True))
    for tool in tools:
        assert tool.icons, tool.name
        assert _svg(tool.icons[0].model_dump(by_alias=True)).startswith(b"<svg"), tool.name
    kinds = {tool.name: _svg(tool.icons[0].model_dump(by_alias=True)) for tool in tools}
    assert kinds["navigate"] != kinds["render_floorplan"] != kinds["teach_start"]
