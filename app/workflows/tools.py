"""What a tool or resource of a playbook does, per type: mcp, page, http, rpc, sql, and the
seed's plugin types postgres (read-only SQL on a DSN), duckdb (read-only SQL over the files of
``WORKFLOWS_DUCKDB_DIR``) and python (a registered function, never code from the document).

Each executor takes the tool definition (from the compiled document), the rendered spec and a
``Call`` (who runs it, under which idempotency key) and returns an ``Output``. Errors are
``StepError``: permanent ones (a 404, a refused host, a bad query) fail the step at once,
transient ones (a timeout, a 503) are retried by the queue.

Side effects inside this process (``mcp`` tools that are not read-only, embedded ``rpc``)
write a ledger row keyed by the idempotency key *into the same database transaction as the
effect itself* (the in-process request commits the shared session), so after a crash the
retried step finds the row and does not repeat the effect. Remote effects (``http``, remote
``rpc``) carry the key as an ``Idempotency-Key`` header.
"""

from __future__ import annotations

import importlib
import json
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
from sqlalchemy import create_engine, event, select, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.pool import NullPool

from app.core import netpolicy, outbound, tool_catalog
from app.core.dispatch import dispatch
from app.core.identity import Identity
from app.extensions import db
from app.models.workflows import WorkflowEffect
from app.playbooks import call_upstream, upstream_settings
from app.workflows import mcp_bridge, settings
from config import normalize_database_url

MAX_TEXT = 100_000
# Types whose ``sql`` binds its templates as parameters, and the placeholder prefix each uses.
BOUND_SQL = {"postgres": ":", "duckdb": "$"}
FUNCTIONS_GROUP = "harmonic.workflow_functions"
MAX_ROWS = 500
MAX_REDIRECTS = 5


class StepError(Exception):
    def __init__(self, message: str, permanent: bool = True) -> None:
        super().__init__(message)
        self.message, self.permanent = message, permanent


@dataclass
class Call:
    run_id: uuid.UUID
    step: str
    identity: Identity | None
    key: str  # idempotency key: stable across retries of the same step


@dataclass
class Output:
    value: Any  # what templates see as steps.<name> / resources.<name>
    text: str  # what a model sees
    is_error: bool = False
    summary: dict[str, Any] = field(default_factory=dict)  # what events record


def run(tool: dict[str, Any], spec: dict[str, Any], call: Call) -> Output:
    kind = tool["type"]
    return {"mcp": _mcp, "page": _page, "http": _http, "rpc": _rpc, "sql": _sql,
            "postgres": _postgres, "duckdb": _duckdb, "python": _python}[kind](spec, call)


# The ledger --------------------------------------------------------------------------------

def _applied(call: Call) -> Output | None:
    row = db.session.scalars(
        select(WorkflowEffect).where(WorkflowEffect.key == call.key)).one_or_none()
    if row is None:
        return None
    stored = row.result or {}
    return Output(value=stored.get("value"), text=stored.get("text") or
                  "(this call already happened in an earlier attempt)",
                  summary={"replayed_from_ledger": True, **(stored.get("summary") or {})})


def _with_ledger(call: Call, effect: Any) -> Output:
    """Run ``effect()`` so that its ledger row commits in the effect's own transaction.

    The row joins the session only when the effect commits (a ``before_commit`` hook), so no
    write lock is held while the effect is still working; if the effect never commits (it
    changed nothing), the row is written afterwards.
    """
    done = _applied(call)
    if done is not None:
        return done
    session = db.session()
    row = WorkflowEffect(key=call.key, run_id=call.run_id, step=call.step)

    def attach(committing: Any) -> None:
        if row not in committing:
            committing.add(row)

    event.listen(session, "before_commit", attach)
    try:
        out = effect()
    except BaseException:
        db.session.rollback()
        raise
    finally:
        event.remove(session, "before_commit", attach)
    if out.is_error:
        db.session.rollback()  # a refused call changed nothing; let a retry try again
        return out
    pause = settings.get_float("WORKFLOWS_CRASH_PAUSE")
    if pause > 0:
        time.sleep(pause)  # fault tests kill the worker here: effect done, step not recorded
    row.result = {"value": out.value, "text": out.text[:MAX_TEXT], "summary": out.summary}
    db.session.add(row)
    db.session.commit()
    return out


# mcp ---------------------------------------------------------------------------------------

def _mcp(spec: dict[str, Any], call: Call) -> Output:
    name = spec.get("tool")
    arguments = spec.get("arguments") or {}
    if not isinstance(arguments, dict):
        raise StepError("spec.arguments must be an object")

    def effect() -> Output:
        try:
            result = mcp_bridge.call_tool(str(name), arguments, call.identity,
                                          session_id=f"workflow-{call.run_id.hex[:8]}")
        except (LookupError, ValueError) as exc:
            raise StepError(str(exc)) from None
        text = mcp_bridge.result_text(result)
        value = result.get("structuredContent") or {"text": text}
        return Output(value=value, text=text, is_error=bool(result.get("isError")),
                      summary={"tool": name, "is_error": bool(result.get("isError"))})

    if call.identity is None:
        raise StepError("this run has no user: start it as someone (e.g. --as <handle>)")
    declared = tool_catalog.call_effect(str(name), arguments)
    if declared is not None and declared.read_only:
        return effect()
    return _with_ledger(call, effect)


# page --------------------------------------------------------------------------------------

def _page(spec: dict[str, Any], call: Call) -> Output:
    path = str(spec.get("path") or "")
    if not path.startswith("/") or path.startswith("//"):
        raise StepError(f"spec.path must be a path of this app such as /studios/team, "
                        f"not {path!r}")
    if call.identity is None:
        raise StepError("this run has no user: start it as someone (e.g. --as <handle>)")
    for _ in range(MAX_REDIRECTS):
        result = dispatch("GET", path, call.identity, accept="text/markdown")
        location = result.headers.get("Location")
        if result.status in (301, 302, 303, 307, 308) and location:
            parts = urlsplit(location)
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            continue
        break
    else:
        raise StepError(f"too many redirects from {spec.get('path')}")
    if result.status >= 400:
        raise StepError(f"GET {path} answered {result.status}: {result.text[:500]}",
                        permanent=result.status < 500)
    return Output(value={"path": path, "status": result.status, "markdown": result.text},
                  text=result.text[:MAX_TEXT], summary={"path": path, "status": result.status})


# http --------------------------------------------------------------------------------------

def host_allowed(url: str) -> tuple[bool, str]:
    """(True, "") when ``WORKFLOWS_HTTP_ALLOW`` admits ``url``, else (False, why not)."""
    try:
        netpolicy.check_url(url, settings.get_list("WORKFLOWS_HTTP_ALLOW"), "WORKFLOWS_HTTP_ALLOW")
    except netpolicy.Refused as exc:
        return False, f"{url!r}: {exc.message}"
    return True, ""


def _http(spec: dict[str, Any], call: Call) -> Output:
    method = str(spec.get("method") or "GET").upper()
    url = str(spec.get("url") or "")
    headers = {str(k): str(v) for k, v in (spec.get("headers") or {}).items()}
    headers.setdefault("Idempotency-Key", call.key)
    body: dict[str, Any] = {}
    if "json" in spec:
        body["json"] = spec["json"]
    elif isinstance(spec.get("data"), dict | list):  # NoETL's http plugin: data is JSON
        body["json"] = spec["data"]
    elif "data" in spec:
        body["content"] = str(spec["data"])
    elif "body" in spec:
        body["content"] = str(spec["body"])
    response, hops = http_request(method, url, headers, body, float(spec.get("timeout") or 30))
    url = str(response.url)
    if response.status_code >= 400:
        raise StepError(f"{method} {url} answered {response.status_code}: "
                        f"{response.text[:300]}", permanent=response.status_code < 500
                        and response.status_code != 429)
    text = response.text[:MAX_TEXT]
    try:
        value: Any = response.json()
    except ValueError:
        value = text
    return Output(value={"status": response.status_code, "body": value}, text=text,
                  summary={"url": url, "status": response.status_code, "hops": hops})


def http_request(method: str, url: str, headers: dict[str, str], body: dict[str, Any],
                 timeout: float) -> tuple[Any, int]:
    """One request through the app's outbound client, every hop (redirects included) on
    ``WORKFLOWS_HTTP_ALLOW``, within one deadline; the response, whatever its status, and how
    many hops it took. StepError for a refused host or a transport failure (transient)."""
    deadline = time.monotonic() + timeout
    hops: list[str] = []
    for _ in range(MAX_REDIRECTS + 1):
        ok, why = host_allowed(url)
        if not ok:
            raise StepError(f"{why}{' (redirected)' if hops else ''}")
        hops.append(url)
        try:
            response = outbound.fetch(method, url, headers=headers,
                                      seconds=deadline - time.monotonic(), **body)
        except httpx.HTTPError as exc:
            raise StepError(f"{method} {url}: {type(exc).__name__}: {exc}",
                            permanent=False) from None
        if response.is_redirect and response.headers.get("Location"):
            url = urljoin(url, response.headers["Location"])
            if response.status_code in (301, 302, 303) and method != "GET":
                method, body = "GET", {}
            continue
        break
    else:
        raise StepError(f"too many redirects from {hops[0]}")
    return response, len(hops)


# rpc ---------------------------------------------------------------------------------------

# Faults of the connection, not answers of the upstream: worth a retry with the same key.
_TRANSIENT = {"UPSTREAM_TIMEOUT", "UPSTREAM_DOWN", "UPSTREAM_HTTP", "UPSTREAM_BAD_JSON"}


def _rpc(spec: dict[str, Any], call: Call) -> Output:
    # The playbook proxy's upstream, with its allow-list and timeouts: one definition of both.

    conf = upstream_settings()
    request = {"jsonrpc": "2.0", "id": 1, "method": str(spec.get("method")),
               "params": spec.get("params") or {}}

    def answer(response: dict[str, Any]) -> Output:
        if "error" in response:
            error = response["error"] or {}
            return Output(value={"error": error}, text=f"error {error.get('code')}: "
                          f"{error.get('message')}", is_error=True,
                          summary={"method": request["method"], "error": error.get("code")})
        result = response.get("result")
        return Output(value=result, text=json.dumps(result, ensure_ascii=False)[:MAX_TEXT],
                      summary={"method": request["method"]})

    if not conf.upstream:
        return _with_ledger(call, lambda: answer(call_upstream(request, conf)))
    response = call_upstream(request, conf, headers={"Idempotency-Key": call.key})
    error = response.get("error") or {}
    if (error.get("data") or {}).get("code") in _TRANSIENT:
        raise StepError(f"PLAYBOOK_UPSTREAM: {error.get('message')}", permanent=False)
    return answer(response)


# sql ---------------------------------------------------------------------------------------

_sql_engines: dict[str, Any] = {}
_sql_lock = threading.Lock()


def _read_only_engine(url: str) -> Any:
    """An engine whose connections cannot write, enforced by the database itself."""
    url = normalize_database_url(url)
    with _sql_lock:
        engine = _sql_engines.get(url)
        if engine is not None:
            return engine
        if url.startswith("sqlite:///"):
            path = url[len("sqlite:///"):]
            engine = create_engine("sqlite://", creator=lambda: sqlite3.connect(
                f"file:{path}?mode=ro", uri=True, check_same_thread=False))

            @event.listens_for(engine, "connect")
            def _query_only(dbapi_connection: Any, _record: Any) -> None:
                dbapi_connection.execute("PRAGMA query_only = ON")
        elif url.startswith("postgresql"):
            engine = create_engine(url, connect_args={
                "options": "-c default_transaction_read_only=on -c statement_timeout=10000"})
        else:
            raise StepError("WORKFLOWS_SQL_URL must be a sqlite:/// or postgresql:// URL")
        _sql_engines[url] = engine
        return engine


def _sql(spec: dict[str, Any], call: Call) -> Output:
    url = settings.get("WORKFLOWS_SQL_URL")
    if not url:
        raise StepError("sql tools need the WORKFLOWS_SQL_URL setting")
    query = _one_select(str(spec.get("query") or ""), "query")
    params = spec.get("params") or {}
    if not isinstance(params, dict):
        raise StepError("spec.params must be an object of :name values")
    try:
        with _read_only_engine(url).connect() as conn:
            result = conn.execute(text(query), params)
            columns = list(result.keys())
            fetched = result.fetchmany(MAX_ROWS)
            conn.rollback()
    except SQLAlchemyError as exc:
        reason = str(getattr(exc, "orig", exc)).splitlines()[0]
        raise StepError(f"sql: {reason}") from None
    return _rows(columns, fetched)


def _rows(columns: list[str], fetched: Sequence[Any]) -> Output:
    rows = json.loads(json.dumps([dict(zip(columns, row, strict=True)) for row in fetched],
                                 default=str))
    return Output(value={"columns": columns, "rows": rows},
                  text=json.dumps(rows, ensure_ascii=False)[:MAX_TEXT],
                  summary={"rows": len(rows)})


def _one_select(sql: str, key: str = "sql") -> str:
    statement = sql.strip().rstrip(";").strip()
    head = statement.lower()
    if not (head.startswith("select") or head.startswith("with")) or ";" in statement:
        raise StepError(f"spec.{key} must be one SELECT statement")
    return statement


# postgres ----------------------------------------------------------------------------------

def _postgres(spec: dict[str, Any], call: Call) -> Output:
    """One SELECT on ``spec.dsn`` inside a READ ONLY transaction, templates bound as params.

    The DSN usually comes from a secret: it is never quoted in an error (the runner redacts it
    anyway) and no connection is pooled, so nothing of it outlives the step.
    """
    import psycopg  # lazy: the driver only for PostgreSQL

    dsn = str(spec.get("dsn") or "")
    if dsn.startswith("postgresql+"):
        dsn = "postgresql" + dsn[dsn.index(":"):]
    if not (dsn.startswith(("postgresql://", "postgres://")) or "=" in dsn):
        raise StepError("spec.dsn must be a PostgreSQL DSN (postgresql://… or key=value)")
    statement = _one_select(str(spec.get("sql") or ""))
    params = spec.get("params") or {}
    if not isinstance(params, dict):
        raise StepError("spec.params must be an object of :name values")
    conninfo = pg_conninfo(dsn, "-c default_transaction_read_only=on -c statement_timeout=10000",
                           "spec.dsn")

    def connect() -> Any:
        return psycopg.connect(conninfo, connect_timeout=10)

    engine = create_engine("postgresql+psycopg://", creator=connect, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            # The database refuses any write in this transaction, whatever the SELECT calls.
            conn.exec_driver_sql("SET TRANSACTION READ ONLY")
            result = conn.execute(text(statement), params)
            columns = list(result.keys())
            fetched = result.fetchmany(MAX_ROWS)
            conn.rollback()
    except (SQLAlchemyError, psycopg.Error) as exc:
        reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        transient = isinstance(getattr(exc, "orig", exc), psycopg.OperationalError)
        raise StepError(f"postgres: {reason}", permanent=not transient) from None
    finally:
        engine.dispose()
    return _rows(columns, fetched)


def pg_conninfo(dsn: str, options: str, what: str) -> str:
    """``dsn`` with the server ``options`` added after its own (so ours win), or StepError
    saying that ``what`` is not a valid PostgreSQL DSN."""
    import psycopg  # lazy: the driver only for PostgreSQL
    from psycopg.conninfo import (  # lazy: the driver only for PostgreSQL
        conninfo_to_dict,
        make_conninfo,
    )

    try:
        own = conninfo_to_dict(dsn).get("options") or ""
        return make_conninfo(dsn, options=f"{own} {options}".strip())
    except psycopg.ProgrammingError:
        raise StepError(f"{what} is not a valid PostgreSQL DSN") from None


# duckdb ------------------------------------------------------------------------------------

def _duckdb(spec: dict[str, Any], call: Call) -> Output:
    """One SELECT in a fresh in-memory DuckDB that may read the files of WORKFLOWS_DUCKDB_DIR
    and nothing else (external access off, that folder allowed, the configuration locked).

    ``spec.tables`` names files of the folder (``{kb: kb.csv}``): each becomes a view, so the
    SQL reads ``FROM kb``; a path written in the SQL itself must be absolute, in the folder.
    """
    try:
        import duckdb  # lazy: DuckDB only for a task that queries it
    except ImportError:
        raise StepError("duckdb tools need the duckdb package") from None
    if not settings.get("WORKFLOWS_DUCKDB_DIR"):
        raise StepError("duckdb tools need the WORKFLOWS_DUCKDB_DIR setting (the folder whose "
                        "files they may read)")
    root = duckdb_folder()
    statement = _one_select(str(spec.get("sql") or ""))
    params = spec.get("params") or {}
    tables = spec.get("tables") or {}
    if not isinstance(params, dict) or not isinstance(tables, dict):
        raise StepError("spec.params and spec.tables must be objects")

    assert root is not None
    views = []
    for name, relative in tables.items():
        file = (root / str(relative)).resolve()
        if not re.fullmatch(r"[A-Za-z_]\w{0,62}", str(name)):
            raise StepError(f"spec.tables: '{name}' is not a table name")
        if not file.is_relative_to(root) or not file.is_file():
            raise StepError(f"spec.tables.{name}: no file {relative!r} in WORKFLOWS_DUCKDB_DIR")
        views.append(f'CREATE VIEW "{name}" AS SELECT * FROM {_literal(str(file))}')
    try:
        conn = duckdb_connect(root, views)
    except duckdb.Error as exc:
        raise StepError(f"duckdb: {str(exc).splitlines()[0]}") from None
    try:
        statements = conn.extract_statements(statement)
        if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
            raise StepError("spec.sql must be one SELECT statement")
        result = conn.execute(statement, params)
        columns = [d[0] for d in result.description or []]
        fetched = result.fetchmany(MAX_ROWS)
    except duckdb.Error as exc:
        raise StepError(f"duckdb: {str(exc).splitlines()[0]}") from None
    finally:
        conn.close()
    return _rows(columns, fetched)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def duckdb_folder() -> Any:
    """The resolved WORKFLOWS_DUCKDB_DIR, None when it is not set; StepError if it is not a
    folder."""
    folder = settings.get("WORKFLOWS_DUCKDB_DIR")
    if not folder:
        return None
    root = Path(folder).resolve()
    if not root.is_dir():
        raise StepError("WORKFLOWS_DUCKDB_DIR is not a folder")
    return root


def duckdb_connect(root: Any, first: Sequence[str] = ()) -> Any:
    """A fresh in-memory DuckDB that may read the files of ``root`` (a folder, or None: no
    files at all) and nothing else, its configuration locked; ``first`` runs before the lock
    (views over the folder's files)."""
    import duckdb  # lazy: DuckDB only for a task that queries it

    conn = duckdb.connect(":memory:")
    try:
        for statement in first:
            conn.execute(statement)
        if root is not None:
            conn.execute(f"SET allowed_directories = [{_literal(str(root) + '/')}]")
        conn.execute("SET enable_external_access = false")
        conn.execute("SET autoinstall_known_extensions = false")
        conn.execute("SET autoload_known_extensions = false")
        conn.execute("SET lock_configuration = true")
    except BaseException:
        conn.close()
        raise
    return conn


# python ------------------------------------------------------------------------------------

def find_function(name: str) -> Any:
    """A registered function: an entry point of FUNCTIONS_GROUP by name, or ``module:function``
    in a module listed in WORKFLOWS_PYTHON_MODULES. The document only ever names it."""
    if ":" not in name:
        found = [ep for ep in entry_points(group=FUNCTIONS_GROUP) if ep.name == name]
        if not found:
            known = sorted(ep.name for ep in entry_points(group=FUNCTIONS_GROUP))
            raise StepError(f"no function '{name}' in the entry points {FUNCTIONS_GROUP} "
                            f"(registered: {', '.join(known) or 'none'})")
        return found[0].load()
    module_name, _, attribute = name.partition(":")
    allowed = [m.strip() for m in settings.get("WORKFLOWS_PYTHON_MODULES").split(",")
               if m.strip()]
    if module_name not in allowed:
        raise StepError(f"module '{module_name}' is not allowed: this server's operator "
                        f"allows a module by adding it to WORKFLOWS_PYTHON_MODULES")
    if attribute.startswith("_"):
        raise StepError(f"'{attribute}' is private")
    function = getattr(importlib.import_module(module_name), attribute, None)
    if not callable(function):
        raise StepError(f"{module_name} has no function '{attribute}'")
    return function


def _python(spec: dict[str, Any], call: Call) -> Output:
    """``function(**args)``; its JSON-able result is the step's. Ledgered like other effects."""
    function = find_function(str(spec.get("function") or ""))
    args = spec.get("args") or {}
    if not isinstance(args, dict):
        raise StepError("spec.args must be an object of keyword arguments")

    def effect() -> Output:
        try:
            value = function(**args)
        except TypeError as exc:
            raise StepError(f"{spec['function']}: {exc}") from None
        try:
            value = json.loads(json.dumps(value, default=str))
        except (TypeError, ValueError):
            raise StepError(f"{spec['function']} returned something that is not JSON") from None
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return Output(value=value, text=text[:MAX_TEXT], summary={"function": spec["function"]})

    return _with_ledger(call, effect)
