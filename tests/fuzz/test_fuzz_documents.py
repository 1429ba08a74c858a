"""Documents people and agents hand us, generated and mutated: floorplan DSL (through the
create/update actions), workflow playbooks (through ``flask workflows validate|compile``) and
recipes (substitution, and ``/replay`` of recipe files). No crash, no 500, nothing half-stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from flask import Flask
from hypothesis import given
from hypothesis import strategies as st

from app.design_model import rpc as _registers_methods  # noqa: F401  fills METHODS
from app.design_model.registry import METHODS
from app.playbooks import recipe as recipes
from app.services.errors import Invalid
from tests.floorplans.plans import plans
from tests.fuzz.conftest import budget, digest
from tests.fuzz.test_fuzz_actions import JSON_VALUES

ROOT = Path(__file__).resolve().parents[2]
NOISE = st.sampled_from(["", "{", "}", "[", "]", "room", "@", '"', "-", "x", "\n", "\x00",
                         "\u202e", "9" * 40, "-1e309", "connect", "{{", "#", ";", "\t" * 50])


@st.composite
def mutated(draw: Any, text: str) -> str:
    for _ in range(draw(st.integers(0, 4))):
        pos = draw(st.integers(0, len(text)))
        text = text[:pos] + draw(NOISE) + text[pos + draw(st.integers(0, 10)):]
    return text


def test_floorplan_dsl_through_the_actions(app: Flask, studio, tried) -> None:  # type: ignore[no-untyped-def]
    made = studio.act("/studios/team/floorplans", "create_floorplan", name="fuzz")
    assert made.status_code == 201
    plan_path = made.json["location"]
    texts = plans(max_rows=2, max_cols=2).flatmap(lambda p: mutated(p.dsl)) | st.text(
        max_size=300)

    @budget(60)
    @given(texts, st.booleans(), st.integers(0, 10**6))
    def one(dsl: str, create: bool, serial: int) -> None:
        before = digest(app)
        if create:
            response = studio.act("/studios/team/floorplans", "create_floorplan",
                                  name=f"f{serial}", dsl=dsl)
        else:
            response = studio.act(plan_path, "update_dsl", dsl=dsl)
        tried(response.status_code)
        assert response.status_code < 500, (dsl, response.get_data(as_text=True))
        if response.status_code >= 400:
            assert digest(app) == before, dsl
        elif create:
            drawing = studio.client.get(f"{response.json['location']}.svg",
                                        headers=studio.headers("image/svg+xml"))
            assert drawing.status_code < 500

    one()
    refused = sum(n for status, n in tried.outcomes.items() if status >= 400)
    assert refused and tried.outcomes[200] + tried.outcomes[201], tried.outcomes


def _mutate_node(draw: Any, node: Any, depth: int = 0) -> Any:
    """Replace, drop or keep each part of a parsed document (recursively)."""
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return draw(JSON_VALUES | st.sampled_from(
            ["{{ 1/0 }}", "{{ ''.__class__.__mro__ }}", "{{ undefined_name }}", "{% for %}",
             "{{ range(10**9)|list }}", "step", "end", "start", "../../etc/passwd"]))
    if isinstance(node, dict) and depth < 6:
        return {k: _mutate_node(draw, v, depth + 1) for k, v in node.items()
                if draw(st.integers(0, 12))}
    if isinstance(node, list) and depth < 6:
        return [_mutate_node(draw, v, depth + 1) for v in node if draw(st.integers(0, 12))]
    return node


# Ours, and NoETL's noetl.io/v2 documents of the workflow tests.
EXAMPLES = [*sorted((ROOT / "examples" / "workflows").glob("*.yaml")),
            *sorted((ROOT / "tests" / "workflows" / "v2").glob("*.yaml"))]


@st.composite
def workflow_texts(draw: Any) -> str:
    source = draw(st.sampled_from(EXAMPLES)).read_text()
    if draw(st.booleans()):
        return draw(mutated(source))
    return yaml.safe_dump(_mutate_node(draw, yaml.safe_load(source)), allow_unicode=True)


def test_workflow_loader_on_mutated_playbooks(app: Flask, tmp_path: Path, tried) -> None:
    runner = app.test_cli_runner()
    file = tmp_path / "fuzz.yaml"

    @budget(60)
    @given(workflow_texts())
    def one(text: str) -> None:
        file.write_text(text, encoding="utf-8", errors="surrogatepass")
        for command in ("validate", "compile"):
            result = runner.invoke(args=["workflows", command, str(file)])
            tried(f"{command}:{result.exit_code}")
            assert result.exit_code in (0, 1), (command, text, result.output)
            assert result.exception is None or isinstance(result.exception, SystemExit), (
                command, text, repr(result.exception))
            assert "Traceback" not in result.output

    one()
    assert tried.outcomes["validate:1"] and tried.outcomes["validate:0"], tried.outcomes


PLACEHOLDERS = st.sampled_from(["{{n}}", "{{ sel }}", "x{{n}}y", "{{steps.a.result.id}}",
                                "{{steps.a.result.items[0]}}", "{{steps..}}", "{{}}", "{{ n",
                                "{{steps.zz.result}}", "{{name}}/{{n}}", "{{__class__}}"])
PARAMS = st.recursive(JSON_VALUES | PLACEHOLDERS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=6) | PLACEHOLDERS, inner, max_size=3),
                      max_leaves=8)


@st.composite
def recipe_docs(draw: Any) -> dict[str, Any]:
    steps = draw(st.lists(st.fixed_dictionaries(
        {"method": st.sampled_from(sorted(METHODS)) | st.text(max_size=8), "params": PARAMS},
        optional={"name": st.sampled_from(["a", "b", "1bad", ""]), "expect": JSON_VALUES,
                  "tool": st.sampled_from(["navigate", "execute_action", "nope"])}),
        max_size=4))
    return draw(st.fixed_dictionaries(
        {"name": st.sampled_from(["fuzz", "fuzz@1.0.0", "", "../x"]), "steps": st.just(steps)},
        optional={"vars": st.dictionaries(st.sampled_from(["n", "sel", "name"]), JSON_VALUES,
                                          max_size=3),
                  "inputs": JSON_VALUES, "caps": JSON_VALUES, "version": JSON_VALUES}))


def test_recipe_substitution_never_raises_anything_unexpected(tried) -> None:
    @budget(200)
    @given(recipe_docs(), st.dictionaries(st.sampled_from(["n", "sel", "name", "N", "x"]),
                                          JSON_VALUES, max_size=3),
           st.dictionaries(st.sampled_from(["a", "b"]), JSON_VALUES, max_size=2))
    def one(doc: dict[str, Any], args: dict[str, Any], outputs: dict[str, Any]) -> None:
        try:
            recipe = recipes.load(doc)
            values = recipes.resolve_vars(recipe, args)
        except Invalid as exc:
            tried("invalid")
            assert exc.errors
            return
        for step in recipe.steps:
            try:
                recipes.substitute(step.params, values, outputs)
            except recipes.Unresolved:
                pass
            assert recipes.substitute(step.params, values, outputs, lenient=True) is not None \
                or step.params is None
        tried("substituted")

    one()
    assert tried.outcomes["invalid"] and tried.outcomes["substituted"], tried.outcomes


RUN_RECORDS = ("playbook_runs", "playbook_audit")


def test_replay_of_generated_recipe_files(app: Flask, studio, demo, tried) -> None:  # type: ignore[no-untyped-def]
    # In reviewed/ (approved), so real runs execute once their dry run succeeded.
    folder = Path(app.config["HARMONIC_DATA_DIR"]) / "playbooks" / "reviewed"
    folder.mkdir(parents=True, exist_ok=True)
    counter = iter(range(10**9))

    @budget(40)
    @given(recipe_docs() | st.builds(json.dumps, JSON_VALUES), st.booleans(),
           st.dictionaries(st.sampled_from(["n", "sel", "name"]), JSON_VALUES, max_size=2))
    def one(doc: Any, dry_run: bool, args: dict[str, Any]) -> None:
        path = folder / f"fuzz-{next(counter)}.json"
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
        body = {"RecipePath": f"reviewed/{path.name}", "DryRun": True, "Args": args}
        before = digest(app, skip=RUN_RECORDS)
        if not dry_run:  # first run is always a dry run
            first = studio.post("/replay", json=body)
            assert first.status_code in (200, 422), (doc, first.get_data(as_text=True))
            assert digest(app, skip=RUN_RECORDS) == before, (doc, first.json)
        response = studio.post("/replay", json={**body, "DryRun": dry_run})
        tried(response.status_code)
        # 409: refused by governance (its dry run did not succeed).
        assert response.status_code in (200, 409, 422), (doc, response.get_data(as_text=True))
        assert response.is_json
        if response.status_code in (409, 422) or dry_run:
            # Refused or dry: nothing changed but the run's own record.
            assert digest(app, skip=RUN_RECORDS) == before, (doc, response.json)

    one()
    assert tried.outcomes[422], tried.outcomes


def test_a_placeholder_key_stays_text() -> None:
    # Found by the fuzzer: "{{n}}" as a key with n = [] made an unhashable key (a 500 on
    # /replay). A key renders as text.
    assert recipes.substitute({"{{n}}": 1, "k{{n}}": 2}, {"n": [1, "a"]}, {}) == {
        '[1,"a"]': 1, 'k[1,"a"]': 2}
