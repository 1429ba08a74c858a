"""What building the app does for every process's start: URL builders compiled on first use
(app.core.url_rules) and the cyclic collector paused while the app is built, its objects then
frozen (app.create_app)."""

from __future__ import annotations

import gc
import uuid
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from werkzeug.routing import IntegerConverter, Map, PathConverter, Rule, UUIDConverter

from app.core.url_rules import LazyBuilderRule
from tests.conftest import make_app


def _sample(converter: Any) -> object:
    if isinstance(converter, IntegerConverter):
        return 7
    if isinstance(converter, UUIDConverter):
        return uuid.UUID("12345678-1234-5678-1234-567812345678")
    if isinstance(converter, PathConverter):
        return "some/path with space"
    return "some-name"


def _built(adapter: Any, endpoint: str, values: dict[str, object]) -> str:
    try:
        return adapter.build(endpoint, values, append_unknown=True)
    except Exception as exc:  # the same refusal counts as the same answer
        return f"refused: {type(exc).__name__}"


@pytest.mark.one_backend
def test_every_rule_builds_what_werkzeugs_own_rule_builds(app: Flask) -> None:
    rules = list(app.url_map.iter_rules())
    assert rules and all(isinstance(rule, LazyBuilderRule) for rule in rules)
    # Werkzeug's own Rule, compiled eagerly, for the same rules and converters.
    plain = Map([Rule(rule.rule, endpoint=rule.endpoint, methods=rule.methods,
                      defaults=rule.defaults, host=rule.host, subdomain=rule.subdomain)
                 for rule in rules], converters=app.url_map.converters,
                strict_slashes=app.url_map.strict_slashes)
    ours = Map([rule.empty() for rule in rules], converters=app.url_map.converters,
               strict_slashes=app.url_map.strict_slashes)
    fresh = next(iter(ours.iter_rules()))
    # The canary of the one private member app/ relies on (Werkzeug's Rule._compile_builder,
    # pyproject.toml bounds Werkzeug for it): the builders Werkzeug stored are our stand-ins,
    # until the first build. A Werkzeug that stopped calling it would fail here first.
    for name in ("_build", "_build_unknown"):
        assert getattr(vars(fresh)[name], "__func__", None).__name__ == "first_build", name
    ours_adapter = ours.bind("example.test", "/")
    plain_adapter = plain.bind("example.test", "/")
    compared = 0
    for rule in ours.iter_rules():
        values = {name: _sample(rule._converters.get(name)) for name in rule.arguments}
        values["extra"] = "a b&c"  # an argument the rule does not know: appended as a query
        for _ in range(2):  # the first build compiles the real builder, the second uses it
            assert (_built(ours_adapter, str(rule.endpoint), values)
                    == _built(plain_adapter, str(rule.endpoint), values)), rule.rule
        compared += 1
    assert compared == len(rules) > 200


def test_building_the_app_leaves_the_collector_as_it_was_and_freezes_what_it_made(
        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'start.db'}"
    was = gc.isenabled()
    try:
        for state in (True, False):
            (gc.enable if state else gc.disable)()
            gc.unfreeze()
            make_app(url, tmp_path / f"instance-{state}")
            assert gc.isenabled() is state
            assert gc.get_freeze_count() > 10_000  # the app's objects, skipped from now on
    finally:
        gc.unfreeze()
        (gc.enable if was else gc.disable)()
