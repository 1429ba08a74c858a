"""Seed 004's own example documents, verbatim: they load, validate, compile and run.

The fixtures under ``seed004/`` are the seed's ``mcp:`` and ``workflow:`` blocks with a small
header the tests add (``seed004/README.md``). They run against a scripted model gateway (a real
local HTTP server) and a real PostgreSQL (a scratch schema per test, dropped afterwards).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from flask import Flask

from tests.conftest import PG_ADMIN_URL
from tests.workflows.conftest import drain, events_of, user_id
from tests.workflows.gateway import ScriptedGateway, answer, tool_call

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "seed004"
MARKER = "# --- seed 004, verbatim: the "
TOKEN = "tok-SEED004-do-not-leak-7c1e"


# The fixtures are the seed's text ------------------------------------------------------------

def _seed_file() -> Path | None:
    """Seed 004 at ../shared/seeds beside the repository root (for a linked git worktree,
    beside the main checkout's root as well)."""
    roots = [ROOT]
    dot_git = ROOT / ".git"
    if dot_git.is_file():  # a worktree: "gitdir: <main>/.git/worktrees/<name>"
        gitdir = Path(dot_git.read_text().split(":", 1)[1].strip())
        common = gitdir / "commondir"
        if common.is_file():
            roots.append((gitdir / common.read_text().strip()).resolve().parent)
    for root in roots:
        found = sorted((root.parent / "shared" / "seeds").glob("004_*.txt"))
        if found:
            return found[0]
    return None


def _seed_blocks(text: str) -> dict[str, str]:
    """The seed's example blocks: from a line ``mcp:`` or ``workflow:`` to the next blank line."""
    lines = text.splitlines()
    blocks = {}
    for name in ("mcp", "workflow"):
        start = lines.index(f"{name}:")
        end = lines.index("", start)
        blocks[name] = "\n".join(lines[start:end])
    return blocks


def _fixture_blocks(text: str) -> dict[str, str]:
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(MARKER):
            current = blocks.setdefault(line[len(MARKER):].split()[0], [])
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines) for name, lines in blocks.items()}


def test_the_fixture_blocks_are_the_seeds_text() -> None:
    seed = _seed_file()
    if seed is None:
        pytest.skip("seed 004 is not at ../shared/seeds/004_*.txt beside the repository root")
    expected = _seed_blocks(seed.read_text(encoding="utf-8"))
    mcp = _fixture_blocks((FIXTURES / "mcp.yaml").read_text(encoding="utf-8"))
    workflow = _fixture_blocks((FIXTURES / "workflow.yaml").read_text(encoding="utf-8"))
    assert mcp == {"mcp": expected["mcp"]}
    assert workflow == {"mcp": expected["mcp"], "workflow": expected["workflow"]}


# Validate and compile through the CLI ----------------------------------------------------------

@pytest.mark.parametrize("name", ["mcp", "workflow"])
def test_flask_workflows_validate_prints_no_error(app: Flask, name: str) -> None:
    path = str(FIXTURES / f"{name}.yaml")
    result = app.test_cli_runner().invoke(args=["workflows", "validate", path])
    assert result.exit_code == 0, result.output
    assert result.output == f"{path}: valid\n"


def test_the_documents_compile_into_the_seeds_steps(app: Flask) -> None:
    runner = app.test_cli_runner()
    mcp = runner.invoke(args=["workflows", "compile", str(FIXTURES / "mcp.yaml"), "--json"])
    assert mcp.exit_code == 0, mcp.output
    steps = json.loads(mcp.output)["steps"]
    assert [(s["name"], s["type"]) for s in steps] == [
        ("start", "noop"), ("resource.kb_articles", "resource"), ("mcp.t1", "turn"),
        ("mcp.t1#n.search_docs", "tool"), ("end", "noop")]
    assert steps[1]["tool"]["type"] == "postgres"

    flow = runner.invoke(args=["workflows", "compile", str(FIXTURES / "workflow.yaml"),
                               "--json"])
    assert flow.exit_code == 0, flow.output
    compiled = json.loads(flow.output)
    start, model_call = compiled["steps"]
    assert start["next"] == [{"step": "mcp_t1"}]
    assert model_call["type"] == "task" and model_call["save"] == {"storage": "event_log"}
    assert model_call["tool"]["name"] == "model_call" and model_call["tool"]["type"] == "http"
    # Templates stay templates in the compiled form: no secret is resolved before a run.
    assert model_call["tool"]["spec"]["url"] == "{{ secrets.llm_gateway }}/chat"


# Running against PostgreSQL and the scripted gateway ------------------------------------------

@pytest.fixture
def kb_dsn() -> Iterator[str]:
    """A DSN whose search_path is a scratch schema holding the seed's table ``kb``."""
    import psycopg

    schema = f"seed004_{uuid.uuid4().hex[:10]}"
    url = PG_ADMIN_URL.replace("postgresql+psycopg://", "postgresql://")
    try:
        admin = psycopg.connect(url, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.skip(f"no PostgreSQL at {url}: {exc}")
    with admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        admin.execute(f'CREATE TABLE "{schema}".kb (id int PRIMARY KEY, title text, body text, '
                      f"topic text)")
        admin.execute(f'INSERT INTO "{schema}".kb VALUES '
                      "(1, 'Refunds', 'Refunds take 14 days.', 'billing'), "
                      "(2, 'Invoices', 'Invoices go out monthly.', 'billing'), "
                      "(3, 'Passwords', 'Reset it from settings.', 'accounts')")
        try:
            yield f"{url}?options={quote(f'-csearch_path={schema}')}"
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def _start(app: Flask, path: Path, inputs: dict[str, Any] | None = None) -> uuid.UUID:
    from app.workflows import runs

    with app.app_context():
        return runs.start(path.read_text(encoding="utf-8"), inputs or {},
                          user_id(app, "alice"))


def _secrets(app: Flask, monkeypatch: pytest.MonkeyPatch, **values: str) -> None:
    monkeypatch.setitem(app.config, "WORKFLOWS_SECRETS", ",".join(values))
    for name, value in values.items():
        monkeypatch.setenv(name.upper(), value)


def _page(studio: Any, app: Flask, run_id: uuid.UUID) -> str:  # type: ignore[no-untyped-def]
    from app.workflows import queue

    with app.app_context():
        short = queue.get_run(run_id)["short_id"]
    return studio.get(f"/runs/{short}", accept="text/html").get_data(as_text=True)


def test_the_mcp_block_runs_resource_tool_and_turn(
        app: Flask, studio, gateway: ScriptedGateway, kb_dsn: str,
        monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    _secrets(app, monkeypatch, pg_dsn=kb_dsn)
    gateway.replies = [tool_call("search_docs", {"query": "refunds"}),
                       answer("Refunds take 14 days; invoices are monthly.")]
    run_id = _start(app, FIXTURES / "mcp.yaml")
    run = drain(app, run_id)
    assert run["status"] == "succeeded", run["error"]
    assert run["result"]["answer"] == "Refunds take 14 days; invoices are monthly."

    events = events_of(app, run_id)
    flow = [(e["type"], e["step"]) for e in events]
    per_step = ["step_started", "action_started", "action_completed", "step_completed"]
    expected = [("execution_started", None)]
    for step in ("start", "resource.kb_articles", "mcp.t1", "mcp.t1#1.search_docs.0",
                 "mcp.t1#2", "end"):
        kinds = list(per_step)
        if step == "mcp.t1#2":
            kinds.insert(3, "result_saved")  # save: { storage: event_log }
        expected += [(kind, step) for kind in kinds]
    assert flow == expected + [("execution_completed", None)]

    first, second = gateway.requests
    assert first["model"] == "gpt-4o" and first["temperature"] == 0.2
    assert first["messages"][0] == {"role": "system", "content": "You are a helpful assistant."}
    user = first["messages"][1]["content"]
    # The resource read only the rows of the workload's topic, bound as a parameter.
    assert "Resource kb_articles" in user and "What are key points?" in user
    assert "Refunds" in user and "Invoices" in user and "Passwords" not in user
    assert [t["function"]["name"] for t in first["tools"]] == ["search_docs"]
    # https://search is not in WORKFLOWS_HTTP_ALLOW: the model is told, and answers anyway.
    told = next(m for m in second["messages"] if m["role"] == "tool")
    assert "host 'search:443' is not allowed" in told["content"]

    recorded = json.dumps([e["data"] for e in events], default=str)
    assert kb_dsn not in recorded and kb_dsn not in _page(studio, app, run_id)


def test_a_template_in_sql_is_a_bound_parameter_never_text(
        app: Flask, studio, gateway: ScriptedGateway, kb_dsn: str,
        monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    _secrets(app, monkeypatch, pg_dsn=kb_dsn)
    gateway.replies = [answer("Nothing found.")]
    run_id = _start(app, FIXTURES / "mcp.yaml", {"topic": "x' OR 'a'='a"})
    run = drain(app, run_id)
    assert run["status"] == "succeeded", run["error"]
    user = gateway.requests[0]["messages"][1]["content"]
    assert '"rows": []' in user  # no row has that topic, literally


def test_the_postgres_resource_reads_in_a_read_only_transaction(
        app: Flask, studio, gateway: ScriptedGateway, kb_dsn: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    _secrets(app, monkeypatch, pg_dsn=kb_dsn)
    text = (FIXTURES / "mcp.yaml").read_text(encoding="utf-8").replace(
        "sql: SELECT id, title, body FROM kb WHERE topic = {{ input.topic }}",
        "sql: SELECT nextval('kb_seq') FROM kb WHERE topic = {{ input.topic }}")
    doc = tmp_path / "write.yaml"
    doc.write_text(text, encoding="utf-8")
    import psycopg

    with psycopg.connect(kb_dsn, autocommit=True) as conn:
        conn.execute("CREATE SEQUENCE kb_seq")
    run = drain(app, _start(app, doc))
    assert run["status"] == "failed"
    assert "read-only transaction" in run["error"], run["error"]
    assert gateway.requests == []


def test_the_workflow_block_posts_to_the_gateway_with_secrets_that_stay_secret(
        app: Flask, studio, wf_settings, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    seed_gateway = ScriptedGateway(paths=("/v1/chat",))
    try:
        host = seed_gateway.url.split("/")[2]
        monkeypatch.setitem(app.config, "WORKFLOWS_HTTP_ALLOW", host)
        _secrets(app, monkeypatch, llm_gateway=seed_gateway.url, llm_token=TOKEN)
        seed_gateway.replies = [answer("Key points: refunds in 14 days; monthly invoices.")]
        run_id = _start(app, FIXTURES / "workflow.yaml")
        run = drain(app, run_id)
    finally:
        seed_gateway.close()
    assert run["status"] == "succeeded", run["error"]

    assert seed_gateway.paths == ["/v1/chat"]
    assert seed_gateway.headers[0]["Authorization"] == f"Bearer {TOKEN}"
    text = "Refunds are issued within 14 days. Invoices are sent monthly."
    assert seed_gateway.requests == [{
        "model": "gpt-4o", "system": "You are a helpful assistant.",
        "messages": [{"role": "user",
                      "content": f"Summarize the following text:\n{text}"}],
        "tools_allowed": ["search_docs"]}]
    body = run["result"]["body"]
    assert body["choices"][0]["message"]["content"].startswith("Key points")

    events = events_of(app, run_id)
    kinds = [(e["type"], e["step"]) for e in events]
    assert ("result_saved", "mcp_t1") in kinds and kinds[-1] == ("execution_completed", None)
    saved = next(e for e in events if e["type"] == "result_saved")
    assert saved["data"]["save"] == {"storage": "event_log"}
    recorded = json.dumps([e["data"] for e in events], default=str)
    assert TOKEN not in recorded and seed_gateway.url not in recorded
    assert "[redacted]/chat" in recorded  # the action's url, with the secret base hidden
    page = _page(studio, app, run_id)
    assert TOKEN not in page and seed_gateway.url not in page


def test_an_error_naming_a_secret_is_stored_redacted(
        app: Flask, studio, wf_settings, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    seed_gateway = ScriptedGateway(paths=("/v1/elsewhere",))  # so /v1/chat answers 404
    try:
        monkeypatch.setitem(app.config, "WORKFLOWS_HTTP_ALLOW", seed_gateway.url.split("/")[2])
        _secrets(app, monkeypatch, llm_gateway=seed_gateway.url, llm_token=TOKEN)
        run = drain(app, _start(app, FIXTURES / "workflow.yaml"))
    finally:
        seed_gateway.close()
    assert run["status"] == "failed"
    assert "POST [redacted]/chat answered 404" in run["error"]
    assert seed_gateway.url not in run["error"]


def test_a_secret_not_on_the_allow_list_fails_the_step_clearly(
        app: Flask, studio, wf_settings, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LLM_TOKEN", TOKEN)
    monkeypatch.setitem(app.config, "WORKFLOWS_SECRETS", "pg_dsn")
    run = drain(app, _start(app, FIXTURES / "workflow.yaml"))
    assert run["status"] == "failed"
    assert "secret 'llm_gateway' is not allowed: this server's operator allows a secret by " \
        "adding its name to WORKFLOWS_SECRETS" in run["error"]
    assert "pg_dsn" not in run["error"]  # the names it allows are the operator's business


# The seed's document as written, with only apiVersion and kind added ---------------------------

def _as_written() -> str:
    """The seed's two blocks, verbatim, after the two lines a user has to add."""
    blocks = _fixture_blocks((FIXTURES / "workflow.yaml").read_text(encoding="utf-8"))
    return f"apiVersion: noetl.io/v1\nkind: Playbook\n{blocks['mcp']}\n{blocks['workflow']}\n"


def test_the_document_as_written_validates_and_names_its_inputs(app: Flask,
                                                                tmp_path: Path) -> None:
    doc = tmp_path / "seed004.yaml"
    doc.write_text(_as_written(), encoding="utf-8")
    runner = app.test_cli_runner()
    checked = runner.invoke(args=["workflows", "validate", str(doc)])
    assert checked.exit_code == 0, checked.output
    compiled = json.loads(runner.invoke(args=["workflows", "compile", str(doc), "--json"]).output)
    assert compiled["name"] == "seed004" and compiled["workload"] == {}
    assert compiled["inputs_required"] == ["query", "text", "topic"]
    # Its templates read input.query, input.topic and input.text: a run without them is
    # refused before it starts, not failed half-way.
    refused = runner.invoke(args=["workflows", "run", str(doc)])
    assert refused.exit_code == 1
    assert "missing input query, text, topic: the workflow reads it" in refused.output
    from app.services.errors import Invalid
    from app.workflows import runs

    with app.app_context(), pytest.raises(Invalid) as caught:
        runs.start(_as_written(), {"topic": "billing"})
    assert [e["param"] for e in caught.value.errors] == ["inputs.query", "inputs.text"]


def test_the_document_as_written_runs_with_its_inputs(
        app: Flask, studio, wf_settings, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    from app.workflows import runs

    seed_gateway = ScriptedGateway(paths=("/v1/chat",))
    text = "Refunds are issued within 14 days."
    try:
        monkeypatch.setitem(app.config, "WORKFLOWS_HTTP_ALLOW", seed_gateway.url.split("/")[2])
        _secrets(app, monkeypatch, llm_gateway=seed_gateway.url, llm_token=TOKEN)
        seed_gateway.replies = [answer("Refunds take two weeks.")]
        with app.app_context():
            run_id = runs.start(_as_written(), {"query": "refunds", "topic": "billing",
                                                "text": text}, user_id(app, "alice"))
        run = drain(app, run_id)
    finally:
        seed_gateway.close()
    assert run["status"] == "succeeded", run["error"]
    assert run["workflow"] == "workflow"  # no metadata and no file: the default name
    assert seed_gateway.requests[0]["messages"] == [
        {"role": "user", "content": f"Summarize the following text:\n{text}"}]
