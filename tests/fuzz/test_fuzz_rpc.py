"""The JSON-RPC doors under generated input: ``/rpc`` (the playbook proxy, while recording) and
``/design-model/rpc``. Every method with parameters built from the names the methods read, plus
raw bytes and batches: always JSON-RPC, never a 500, and a refused call changes no row."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from flask import Flask
from hypothesis import given
from hypothesis import strategies as st

from app import design_model
from app.design_model import rpc as _registers_methods  # noqa: F401  fills METHODS
from app.design_model.registry import METHODS
from tests.fuzz.conftest import budget, digest
from tests.fuzz.test_fuzz_actions import JSON_VALUES

# The parameter names the methods read (p.int("count"), p.str("uniqueId"), ...), found in
# their source so a new parameter is fuzzed without editing this file.
SOURCE = "\n".join(p.read_text() for p in Path(design_model.__file__).parent.glob("*.py"))
PARAM_NAMES = sorted(set(re.findall(r"p\.[a-z_]+\(\"([A-Za-z]+)\"", SOURCE)))


@st.composite
def calls(draw: Any, ids: list[str]) -> Any:
    values = JSON_VALUES | st.sampled_from(ids) | st.lists(st.sampled_from(ids), max_size=3) \
        | st.floats(-1e6, 1e6) | st.lists(st.floats(-1e4, 1e4), min_size=3, max_size=3)
    message: dict[str, Any] = {
        "jsonrpc": draw(st.just("2.0") | st.sampled_from(["1.0", "", 2])),
        "method": draw(st.sampled_from(sorted(METHODS)) | st.text(max_size=10)),
        "params": draw(st.dictionaries(st.sampled_from(PARAM_NAMES), values, max_size=5)
                       | JSON_VALUES),
    }
    if draw(st.integers(0, 5)):
        message["id"] = draw(st.integers(1, 10**6) | st.text(max_size=5))
    return message


def element_ids(app: Flask) -> list[str]:
    from app.extensions import db
    from app.models import DesignElement

    with app.app_context():
        return [e.unique_id for e in db.session.query(DesignElement).limit(20)] or ["none"]


def test_rpc_doors_never_fail_open(app: Flask, studio, demo, tried) -> None:  # type: ignore[no-untyped-def]
    assert len(PARAM_NAMES) > 20
    headers = {**studio.headers("application/json"), "Content-Type": "application/json"}
    assert studio.client.post("/teach/start?name=fuzz", headers=headers).status_code in (200, 201)
    ids = element_ids(app)
    bodies = (st.builds(json.dumps, calls(ids)).map(str.encode)
              | st.builds(json.dumps, st.lists(calls(ids), max_size=4)).map(str.encode)
              | st.binary(max_size=200))

    @budget(150)
    @given(st.sampled_from(["/rpc", "/design-model/rpc"]), bodies)
    def one(door: str, body: bytes) -> None:
        before = digest(app)
        response = studio.client.post(door, data=body, headers=headers)
        assert response.status_code in (200, 204), (door, body[:200], response.status_code)
        if response.status_code == 204 or not response.get_data():  # notifications only
            tried("notification")
            return
        answer = response.get_json()
        answers = answer if isinstance(answer, list) else [answer]
        assert all(a.get("jsonrpc") == "2.0" and ("result" in a) != ("error" in a)
                   for a in answers), answer
        refused = all("error" in a for a in answers)
        tried("error" if refused else "ok")
        if refused and door == "/design-model/rpc":
            # (/rpc records the refused call in the open teach session: that row may change.)
            assert digest(app) == before, (body[:200], answer)

    one()
    assert tried.outcomes["ok"] and tried.outcomes["error"], tried.outcomes
