"""server.json, the entry the MCP registry lists, describes the server this repository ships:
it keeps the registry's rules, its version and command are the project's own, and the command it
names answers initialize with the server's icons (and every tool carries one)."""

from __future__ import annotations

import base64
import json
import re
import sys
import tomllib
from typing import Any

import pytest
from flask import Flask
from jsonschema import Draft7Validator, FormatChecker

from tests.mcp.clients import run
from tests.mcp.conftest import ROOT, app_env

# The registry's published rules for server.json (schema 2025-09-29), restated by hand. Server:
# name (reverse-DNS namespace, exactly one slash, 3..200), description (1..100) and version
# (at most 255) required; repository (url and source required; id, subfolder); websiteUrl (a
# URI). ServerDetail adds $schema (a URI), packages, remotes and _meta. A Package takes no field
# besides those listed (additionalProperties false); its version is exact: not "latest".
# Package and runtime arguments are arrays of Argument objects, not restated (this entry has
# none, which test_server_json_describes_this_project checks).
_INPUT_FIELDS: dict[str, Any] = {
    "description": {"type": "string"}, "isRequired": {"type": "boolean"},
    "format": {"type": "string", "enum": ["string", "number", "boolean", "filepath"]},
    "value": {"type": "string"}, "isSecret": {"type": "boolean"}, "default": {"type": "string"},
    "placeholder": {"type": "string"}, "choices": {"type": "array", "items": {"type": "string"}}}
_INPUT: dict[str, Any] = {"type": "object", "properties": {
    **_INPUT_FIELDS, "variables": {"type": "object", "additionalProperties": {
        "type": "object", "properties": _INPUT_FIELDS}}}}
_KEY_VALUE: dict[str, Any] = {"type": "object", "required": ["name"], "allOf": [_INPUT],
                              "properties": {"name": {"type": "string"}}}
_STDIO = {"type": "object", "required": ["type"],
          "properties": {"type": {"type": "string", "enum": ["stdio"]}}}
_HEADERS = {"type": "array", "items": _KEY_VALUE}
_STREAMABLE = {"type": "object", "required": ["type", "url"],
               "properties": {"type": {"type": "string", "enum": ["streamable-http"]},
                              "url": {"type": "string"}, "headers": _HEADERS}}
_SSE = {"type": "object", "required": ["type", "url"],
        "properties": {"type": {"type": "string", "enum": ["sse"]},
                       "url": {"type": "string", "format": "uri"}, "headers": _HEADERS}}
_PACKAGE: dict[str, Any] = {
    "type": "object", "additionalProperties": False,
    "required": ["registryType", "identifier", "version", "transport"],
    "properties": {
        "registryType": {"type": "string"},
        "registryBaseUrl": {"type": "string", "format": "uri"},
        "identifier": {"type": "string"},
        "version": {"type": "string", "minLength": 1, "not": {"const": "latest"}},
        "fileSha256": {"type": "string", "pattern": "^[a-f0-9]{64}$"},
        "runtimeHint": {"type": "string"},
        "transport": {"anyOf": [_STDIO, _STREAMABLE, _SSE]},
        "runtimeArguments": {"type": "array"}, "packageArguments": {"type": "array"},
        "environmentVariables": {"type": "array", "items": _KEY_VALUE}}}
REGISTRY_RULES: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["name", "description", "version"],
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "name": {"type": "string", "pattern": r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$",
                 "minLength": 3, "maxLength": 200},
        "description": {"type": "string", "minLength": 1, "maxLength": 100},
        "version": {"type": "string", "maxLength": 255},
        "repository": {"type": "object", "required": ["url", "source"],
                       "properties": {"url": {"type": "string", "format": "uri"},
                                      "source": {"type": "string"}, "id": {"type": "string"},
                                      "subfolder": {"type": "string"}}},
        "websiteUrl": {"type": "string", "format": "uri"},
        "packages": {"type": "array", "items": _PACKAGE},
        "remotes": {"type": "array", "items": {"anyOf": [_STREAMABLE, _SSE]}},
        "_meta": {"type": "object"},
    },
}
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json"
FORMATS = FormatChecker()


@FORMATS.checks("uri")
def _is_uri(value: object) -> bool:
    """RFC 3986's absolute URI, as far as the registry's rules need: a scheme, then no space."""
    if not isinstance(value, str):
        return True  # (the type keyword judges other values)
    scheme = value.split(":", 1)[0]
    return (":" in value and bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", scheme))
            and not re.search(r"\s", value))


def _validator() -> Draft7Validator:
    return Draft7Validator(REGISTRY_RULES, format_checker=FORMATS)


def _entry() -> dict[str, Any]:
    return json.loads((ROOT / "server.json").read_text())


def _project() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_server_json_keeps_the_registry_rules() -> None:
    rules = _validator()
    entry = _entry()
    assert entry["$schema"] == SCHEMA_URL
    assert [e.message for e in rules.iter_errors(entry)] == []
    package, remote = entry["packages"][0], entry["remotes"][0]
    variable = package["environmentVariables"][0]
    # The rules bite: each mutated copy breaks one of them and is rejected.
    for broken in ({**entry, "name": "harmonic"}, {**entry, "name": "a/b/c"},
                   {**entry, "description": "x" * 101}, {**entry, "description": ""},
                   {**entry, "version": "1" * 256}, {**entry, "$schema": "not a uri"},
                   {**entry, "websiteUrl": "harmonic.example"},
                   {**entry, "repository": {"url": "https://example.com/h"}},
                   {key: value for key, value in entry.items() if key != "description"},
                   {**entry, "packages": [{**package, "version": "latest"}]},
                   {**entry, "packages": [{**package, "version": ""}]},
                   {**entry, "packages": [{**package, "runtime_hint": "uvx"}]},
                   {**entry, "packages": [{**package, "fileSha256": "ABC"}]},
                   {**entry, "packages": [{**package, "registryBaseUrl": "pypi dot org"}]},
                   {**entry, "packages": [{**package, "transport": {"type": "websocket"}}]},
                   {**entry, "packages": [{**package, "environmentVariables": [
                       {**variable, "format": "secret"}]}]},
                   {**entry, "packages": [{key: value for key, value in package.items()
                                           if key != "transport"}]},
                   {**entry, "remotes": [{**remote, "type": "stdio"}]},
                   {**entry, "remotes": [{"type": "sse", "url": "no scheme here"}]},
                   {**entry, "remotes": [{**remote, "headers": [{"isSecret": True}]}]}):
        assert list(rules.iter_errors(broken)), broken
    # ... and what the rules allow, they allow (a check that rejected everything passes above).
    for allowed in ({**entry, "websiteUrl": "https://harmonic.example"},
                    {**entry, "packages": [{**package, "fileSha256": "0" * 64}]},
                    {**entry, "remotes": [{"type": "sse", "url": "https://h.example/sse"}]}):
        assert [e.message for e in rules.iter_errors(allowed)] == []


def test_server_json_describes_this_project() -> None:
    entry, project = _entry(), _project()
    (package,) = entry["packages"]
    assert entry["version"] == package["version"] == project["version"]
    assert package["registryType"] == "pypi" and package["identifier"] == project["name"]
    assert package["transport"] == {"type": "stdio"}
    assert "packageArguments" not in package and "runtimeArguments" not in package
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
        args=["-c", "import sys; from app.entrypoints import mcp_server; sys.exit(mcp_server())"],
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
