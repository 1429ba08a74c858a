"""Running a workflow from its page's form (inputs typed like their defaults) and the run
page's live part (GET /runs/<id>/live), which a page polls until the run has finished."""

from __future__ import annotations

from flask import Flask

from tests.workflows.conftest import drain


def form_post(agent, path: str, data: dict[str, str]):  # type: ignore[no-untyped-def]
    return agent.client.post(path, data=data, headers=agent.headers("application/json"))


def run_id_of(app: Flask, path: str):  # type: ignore[no-untyped-def]
    from app.workflows import runs

    with app.app_context():
        return runs.find(path.rsplit("/", 1)[1])["id"]


def test_the_run_form_is_built_from_the_workload(app: Flask, make_agent) -> None:  # type: ignore[no-untyped-def]
    bob = make_agent("bob")
    html = bob.get("/workflows/studio-check", accept="text/html").get_data(as_text=True)
    assert 'name="inputs[studio]" value="team"' in html and 'name="inputs[welcome]"' in html
    assert html.count('data-action="run_workflow"') == 1  # the page's form, not a JSON box
    assert 'placeholder="JSON"' not in html


def test_a_run_started_from_the_form_and_followed_live(app: Flask, studio, make_agent,  # type: ignore[no-untyped-def]
                                                       wf_settings) -> None:
    r = form_post(studio, "/workflows/studio-check/actions/run_workflow",
                  {"inputs[studio]": "team", "inputs[welcome]": "Hello from the form"})
    assert r.status_code == 201, r.get_data(as_text=True)
    path = r.get_json()["location"]
    live = studio.client.get(f"{path}/live", headers=studio.headers("text/html"))
    assert live.status_code == 200 and live.headers["X-Run-Status"] == "queued"
    assert "Waiting for a worker" in live.get_data(as_text=True)
    page = studio.get(path, accept="text/html").get_data(as_text=True)
    assert f'data-live-url="{path}/live"' in page and "pages/run.js" in page
    assert drain(app, run_id_of(app, path))["status"] == "succeeded"
    live = studio.client.get(f"{path}/live", headers=studio.headers("text/html"))
    assert live.headers["X-Run-Status"] == "succeeded"
    body = live.get_data(as_text=True)
    assert 'data-type="execution_completed"' in body and "<html" not in body
    assert "app: Harmonic" not in body  # no page poured into the timeline
    # A finished run's page no longer polls.
    assert "pages/run.js" not in studio.get(path, accept="text/html").get_data(as_text=True)
    import re

    home = studio.get("/studios/team").get_data(as_text=True)
    note = re.search(r"\((/studios/team/n/[0-9a-f]+)\)", home).group(1)
    assert "Hello from the form" in studio.get(note).get_data(as_text=True)
    # Only its starter sees it; unknown runs are 404; the anonymous are asked to sign in.
    assert make_agent("mallory").client.get(
        f"{path}/live", headers=make_agent("mallory").headers("text/html")).status_code == 403
    assert studio.client.get("/runs/ffffffff/live",
                             headers=studio.headers("text/html")).status_code == 404
    assert app.test_client().get(f"{path}/live").status_code in (302, 401)


def test_inputs_take_their_defaults_types(app: Flask, make_agent) -> None:  # type: ignore[no-untyped-def]
    from app.workflows.web import typed_inputs

    workload = {"studio": "team", "count": 3, "ratio": 0.5, "on": True, "tags": ["a"]}
    assert typed_inputs(workload, {"studio": "x", "count": "4", "ratio": "1.5", "on": "false",
                                   "tags": '["b", "c"]'}) == {
        "studio": "x", "count": 4, "ratio": 1.5, "on": False, "tags": ["b", "c"]}
    assert typed_inputs(workload, {"count": 5}) == {"count": 5}
    bob = make_agent("bob")
    r = form_post(bob, "/workflows/studio-check/actions/run_workflow", {"inputs[studoi]": "x"})
    assert r.status_code == 422 and "unknown input studoi" in r.get_json()["error"]["message"]


def test_wrongly_typed_inputs_are_refused(app: Flask) -> None:
    import pytest

    from app.services.errors import Invalid
    from app.workflows.web import typed_inputs

    with pytest.raises(Invalid) as refused:
        typed_inputs({"count": 3, "on": False}, {"count": "three", "on": "maybe"})
    assert [e["param"] for e in refused.value.errors] == ["inputs.count", "inputs.on"]
    assert "like its default 3" in refused.value.errors[0]["message"]


def test_pages_in_event_data_are_named_not_dumped() -> None:
    from app.workflows.web import _abridged, _message

    page = "---\napp: Harmonic\npath: /studios/team\n---\nnav: x\n\n# Team\n\n" + "x" * 400
    assert _abridged({"output": page}) == {"output": f"a page, “Team” ({len(page)} characters)"}
    assert _abridged("short\ntext") == "short\ntext"
    assert _message("boom") == "boom"
    assert _message("---\napp: Harmonic\n---\nnav: | x |\n\n# Not found\n\nno such note\n"
                    ) == "Not found: no such note"
    assert _message("Traceback\n  line 1") == "Traceback"
