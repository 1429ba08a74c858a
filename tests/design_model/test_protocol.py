"""JSON-RPC envelope rules on both doors, the token on the app door, the call log, handle()."""

from __future__ import annotations

import json
from pathlib import Path

from flask import Flask

from app.design_model import rpc as _registers_methods  # noqa: F401  fills METHODS
from app.design_model.registry import METHODS
from tests.design_model.conftest import MODEL_SERVER_GROUP, AppRpc, Rpc, ServerRpc

pytestmark = MODEL_SERVER_GROUP


def post_json(rpc: Rpc, body: object) -> object:
    status, text, _headers = rpc.post(json.dumps(body).encode())
    assert status == 200
    return json.loads(text) if text else None


def test_envelope_errors(rpc: Rpc) -> None:
    status, text, _h = rpc.post(b'{"jsonrpc": "2.0", "method": ')
    assert status == 200 and json.loads(text)["error"]["code"] == -32700
    status, text, _h = rpc.post(b"\xff\xfe")
    assert status == 200 and json.loads(text)["error"]["code"] == -32700
    nan = b'{"jsonrpc": "2.0", "id": 1, "method": "get_walls", "params": {"skip": NaN}}'
    assert json.loads(rpc.post(nan)[1])["error"]["code"] == -32700
    cases = [
        ({"jsonrpc": "1.0", "id": 1, "method": "get_walls"}, -32600),
        ({"jsonrpc": "2.0", "id": 1}, -32600),
        ({"jsonrpc": "2.0", "id": {"no": 1}, "method": "get_walls"}, -32600),
        ({"jsonrpc": "2.0", "id": 1, "method": "get_walls", "params": 5}, -32600),
        ({"jsonrpc": "2.0", "id": 1, "method": "get_walls", "params": [1]}, -32602),
        ([], -32600),
        (17, -32600),
    ]
    for body, code in cases:
        answer = post_json(rpc, body)
        assert isinstance(answer, dict) and answer["error"]["code"] == code, (body, answer)
    unknown = rpc.err("make_coffee", -32601)
    # Seed 001's message, then every method by name.
    assert unknown["message"].startswith("Unknown method: make_coffee. Methods: ")
    assert all(name in unknown["message"] for name in METHODS)


def test_concurrent_moves_with_one_guard_apply_once(server: ServerRpc) -> None:
    from concurrent.futures import ThreadPoolExecutor

    geo = server.ok("get_instance_geometry", elementId=3003)
    params = {"uniqueId": geo["uniqueId"], "delta": {"rotateZDeg": 1},
              "guard": {"snapshotStamp": geo["snapshotStamp"], "geomHash": geo["geomHash"]}}

    def move(_: int) -> dict:  # type: ignore[type-arg]
        return ServerRpc(server.base_url or "").call("apply_transform_delta", **params)

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(move, range(4)))
    assert sum("result" in a for a in answers) == 1, answers
    codes = {a["error"]["data"]["code"] for a in answers if "error" in a}
    assert codes <= {"STALE_GUARD", "CONFLICT", "DATABASE_BUSY"}, answers
    final = server.ok("get_instance_geometry", elementId=3003)["transform"]
    assert final != geo["transform"]


def test_batches_and_notifications(rpc: Rpc) -> None:
    answer = post_json(rpc, [
        {"jsonrpc": "2.0", "id": "a", "method": "get_walls", "params": {"count": 0}},
        {"jsonrpc": "2.0", "method": "select_elements", "params": {"elementIds": [3001]}},
        {"jsonrpc": "2.0", "id": "b", "method": "nope"},
        5,
    ])
    assert isinstance(answer, list) and len(answer) == 3
    assert answer[0] == {"jsonrpc": "2.0", "id": "a",
                         "result": {"ok": True, "totalCount": 11, "inputUnits": "mm",
                                    "internalUnits": "ft"}}
    assert answer[1]["error"]["code"] == -32601 and answer[2]["error"]["code"] == -32600
    # The notification ran, without an answer of its own.
    assert rpc.ok("get_selected_element_ids")["elementIds"] == [3001]
    assert post_json(rpc, {"jsonrpc": "2.0", "method": "get_walls"}) is None


def test_app_door_needs_a_token(app: Flask, demo: None) -> None:
    client = app.test_client()
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "get_walls"})
    anonymous = client.post("/design-model/rpc", data=body,
                            headers={"Content-Type": "application/json"})
    assert anonymous.status_code == 401
    assert anonymous.headers["WWW-Authenticate"].startswith("Bearer")
    assert anonymous.get_json()["error"]["code"] == -32000
    forged = client.post("/design-model/rpc", data=body,
                         headers={"Authorization": "Bearer not-a-token"})
    assert forged.status_code == 401
    assert AppRpc(client, "not-a-token").post(body.encode())[0] == 401


def test_call_log_has_one_line_per_call(server: ServerRpc, server_log: Path) -> None:
    before = server_log.read_text().count("\n") if server_log.exists() else 0
    server.ok("get_walls", count=0)
    server.err("make_coffee", -32601)
    server.err("get_walls", -32602, skip="x")
    lines = [json.loads(line) for line in server_log.read_text().splitlines()[before:]]
    assert [(entry["method"], entry["ok"], entry["code"]) for entry in lines] == [
        ("get_walls", True, None), ("make_coffee", False, -32601), ("get_walls", False, -32602)]
    assert all(isinstance(entry["ms"], float) and entry["ms"] >= 0 for entry in lines)


def test_handle_in_process(app: Flask, demo: None) -> None:
    from app.design_model.rpc import handle

    with app.app_context():
        answer = handle({"jsonrpc": "2.0", "id": 3, "method": "get_walls",
                         "params": {"typeName": "RC150"}})
        assert answer["id"] == 3 and answer["result"]["totalCount"] == 3
        made = handle({"jsonrpc": "2.0", "id": 4, "method": "create_wall", "params": {
            "start": [0, 0, 0], "end": [1000, 0, 0], "wallTypeName": "RC150",
            "levelName": "1FL", "confirm": True}})
        assert made["result"]["created"] == 1
        bad = handle({"jsonrpc": "2.0", "id": 5, "method": "get_walls", "params": {"skip": -1}})
        assert bad["error"]["code"] == -32602 and bad["error"]["data"]["param"] == "skip"
    with app.app_context():  # the write was committed, not left in a session
        again = handle({"jsonrpc": "2.0", "id": 6, "method": "get_walls",
                        "params": {"count": 0}})
        assert again["result"]["totalCount"] == 12


def test_method_table_is_the_documented_one() -> None:
    from app.design_model.registry import METHODS
    from app.design_model.rpc import handle  # noqa: F401  (importing fills the table)

    assert set(METHODS) == {
        "ping_server", "get_walls", "get_elements_by_category_and_level", "get_element_info",
        "update_wall_parameter", "set_parameter_for_elements", "create_wall",
        "delete_elements", "get_selected_element_ids", "select_elements",
        "get_instance_geometry", "apply_transform_delta", "preview_rebar_linear",
        "create_rebar_linear", "preview_rebar_by_spacing", "create_rebar_by_spacing",
        "rhino_import_snapshot", "rhino_get_selection", "rhino_commit_transform",
        "rhino_lock_objects", "rhino_unlock_objects", "rhino_refresh_from_revit",
        "rhino_import_by_ids", "rhino_select", "rhino_transform_objects", "rhino_get_objects",
    }


def test_read_only_token_reads_and_previews_only(app: Flask, demo: None, make_agent) -> None:  # type: ignore[no-untyped-def]
    reader = make_agent("reader", scopes="read")
    rpc = AppRpc(reader.client, reader.token)
    assert rpc.ok("get_walls", count=0)["totalCount"] == 11
    assert rpc.ok("update_wall_parameter", elementId=3001, param="Comments", value="x",
                  dryRun=True)["updated"] == 1
    refused = rpc.err("update_wall_parameter", -32000, elementId=3001, param="Comments",
                      value="x")
    assert refused["data"]["code"] == "FORBIDDEN"
    assert rpc.ok("get_element_info", elementId=3001)["element"]["parameters"][
        "Comments"]["value"] == ""
