"""``flask design-model load FILE`` and ``load-demo``: formats, errors, idempotence."""

from __future__ import annotations

import json
from pathlib import Path

from flask import Flask
from sqlalchemy import func, select

from app.design_model.rpc import handle
from app.extensions import db
from app.models.design_model import DesignElement

TRIANGLE = {"vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0]],
            "submeshes": [{"materialKey": "Steel", "intIndices": [0, 1, 2]}]}


def count(app: Flask, model: str) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(DesignElement).where(
            DesignElement.model == model)) or 0


def test_load_demo_is_idempotent(app: Flask) -> None:
    runner = app.test_cli_runner()
    first = runner.invoke(args=["design-model", "load-demo"])
    assert first.exit_code == 0 and "loaded the demo" in first.output
    loaded = count(app, "default")
    assert loaded == 2 + 4 + 11 + 5
    with app.app_context():
        handle({"jsonrpc": "2.0", "id": 1, "method": "update_wall_parameter",
                "params": {"elementId": 3001, "param": "Comments", "value": "kept"}})
    second = runner.invoke(args=["design-model", "load-demo"])
    assert second.exit_code == 0 and "already loaded" in second.output
    assert count(app, "default") == loaded
    with app.app_context():
        info = handle({"jsonrpc": "2.0", "id": 2, "method": "get_element_info",
                       "params": {"elementId": 3001}})
        assert info["result"]["element"]["parameters"]["Comments"]["value"] == "kept"
    reset = runner.invoke(args=["design-model", "load-demo", "--reset"])
    assert reset.exit_code == 0 and count(app, "default") == loaded
    with app.app_context():
        info = handle({"jsonrpc": "2.0", "id": 3, "method": "get_element_info",
                       "params": {"elementId": 3001}})
        assert info["result"]["element"]["parameters"]["Comments"]["value"] == ""


def test_load_file_into_a_named_model(app: Flask, tmp_path: Path) -> None:
    data = {"elements": [
        {"elementId": 10, "uniqueId": "lvl-0", "category": "OST_Levels", "name": "GF",
         "parameters": {"Elevation": {"value": 0, "units": "mm"}}},
        {"elementId": 11, "uniqueId": "col-1", "category": "OST_GenericModel",
         "family": "Block", "type": "T1", "level": "GF", "mark": "C1",
         "parameters": {"Comments": "hello", "Weight": {"value": 12.5, "units": "kg"}},
         "transform": [[1, 0, 0, 5], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
         "geometry": TRIANGLE},
    ]}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(data))
    runner = app.test_cli_runner()
    result = runner.invoke(args=["design-model", "load", str(path), "--model", "site-b"])
    assert result.exit_code == 0, result.output
    assert count(app, "site-b") == 2 and count(app, "default") == 0
    with app.app_context():
        row = db.session.scalars(select(DesignElement).where(
            DesignElement.unique_id == "col-1")).one()
        assert row.materials == [{"key": "Steel"}] and len(row.geom_hash) == 32
        assert row.parameters["Comments"] == {"value": "hello", "units": None}
    again = runner.invoke(args=["design-model", "load", str(path), "--model", "site-b"])
    assert again.exit_code != 0 and "--replace" in again.output
    replaced = runner.invoke(args=["design-model", "load", str(path), "--model", "site-b",
                                   "--replace"])
    assert replaced.exit_code == 0 and count(app, "site-b") == 2


def test_load_reports_where_a_file_is_wrong(app: Flask, tmp_path: Path) -> None:
    runner = app.test_cli_runner()
    bad_index = {"elements": [{"elementId": 1, "uniqueId": "a", "category": "OST_Walls",
                               "geometry": {**TRIANGLE, "submeshes": [
                                   {"materialKey": "x", "intIndices": [0, 1, 5]}]}}]}
    duplicate = {"elements": [{"elementId": 1, "uniqueId": "a", "category": "OST_Walls"},
                              {"elementId": 1, "uniqueId": "b", "category": "OST_Walls"}]}
    cases = {
        "$.elements[0].geometry.submeshes[0].intIndices[2]": bad_index,
        "$.elements[1].elementId": duplicate,
        "$.elements[0].category": {"elements": [{"elementId": 1, "uniqueId": "a",
                                                 "category": "Walls"}]},
        "$: must be an object": [],
    }
    for i, (where, data) in enumerate(cases.items()):
        path = tmp_path / f"bad{i}.json"
        path.write_text(json.dumps(data))
        result = runner.invoke(args=["design-model", "load", str(path), "--model", "bad"])
        assert result.exit_code != 0 and where in result.output, (where, result.output)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    result = runner.invoke(args=["design-model", "load", str(broken)])
    assert result.exit_code != 0 and "Error" in result.output
    assert count(app, "bad") == 0
