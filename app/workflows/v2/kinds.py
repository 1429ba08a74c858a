"""What one task of each kind does in a ``noetl.io/v2`` run, and the result it hands on.

- ``noop``: nothing; its result is its input (routing, or naming values for later tasks).
- ``python``: ``code`` (inline, in ``sandbox``: the operator's setting) or ``function`` (a
  registered function, as in our own documents), called with the task's input.
- ``http``: one request through the app's outbound client, every hop on
  ``WORKFLOWS_HTTP_ALLOW``; result ``{data, status_code, headers, url}`` (``data`` parsed
  from JSON when the answer says it is JSON). ``params`` go to the query; a body is ``json``,
  ``payload`` or ``data`` (JSON unless the headers ask for a form), or text in ``body``. An
  answer of 400 or more is an error outcome with ``http.status``.
- ``postgres``: the statements of ``command`` (or ``query``, ``commands``…), rendered by
  ``sqltext``, run in one transaction on the credential its ``auth`` (or ``credential``)
  names; result: the last statement's ``{rows, columns, row_count}`` and ``statement_count``.
- ``duckdb``: the same in a fresh in-memory DuckDB that reads only the files of
  ``WORKFLOWS_DUCKDB_DIR`` (none when unset).
- ``mcp``, ``page``, ``rpc``: our own tool types (``app.workflows.tools``).

A task that fails raises ``TaskFailed`` with NoETL's error ``{kind, message, retryable, …}``,
which the task's policy reads as ``output.error``.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from app.workflows import settings, tools
from app.workflows.templating import RESULTS_ENV, RenderError, render_url, render_value
from app.workflows.tools import StepError
from app.workflows.v2 import sandbox
from app.workflows.v2.keychain import postgres_dsn
from app.workflows.v2.sqltext import render_sql, statements
from app.workflows.v2.validate import PYTHON_CODE, SQL_KEYS

MAX_ROWS = 1000  # rows a statement's result keeps
PRINTED_IN_EVENT = 2000  # characters of a python task's printout its event keeps
# Keys of a task that are the task's own, not its tool's configuration.
OWN_KEYS = ("kind", "name", "spec", "set", "input", "output")


class TaskFailed(Exception):
    """A task ended in an error outcome: ``error`` is what policies read as output.error."""

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message"))
        self.error = error


def failure(kind: str, exc: Exception) -> TaskFailed:
    """A StepError, RenderError or CodeError as the error outcome of a task of ``kind``."""
    if isinstance(exc, sandbox.CodeError):
        return TaskFailed({"kind": kind, "message": exc.message, "retryable": False,
                           "exception": exc.exception, "line": exc.line})
    if isinstance(exc, StepError):
        return TaskFailed({"kind": kind, "message": exc.message,
                           "retryable": not exc.permanent})
    return TaskFailed({"kind": "template", "message": str(exc), "retryable": False})


def config(task: dict[str, Any], scope: dict[str, Any], given: frozenset[str]) -> dict[str, Any]:
    """The task's own keys rendered in ``scope`` (its input already is); SQL by ``sqltext``,
    an http URL by ``render_url``; inline code never."""
    kind = task["kind"]
    out: dict[str, Any] = {}
    for key, value in task.items():
        if key in OWN_KEYS:
            continue
        if key in PYTHON_CODE or key == "libs":
            out[key] = value
        elif kind in ("postgres", "duckdb") and key in SQL_KEYS:
            parts = value if isinstance(value, list) else [value]
            out[key] = "\n;\n".join(render_sql(str(p), scope, given) for p in parts)
        elif key in ("url", "endpoint") and kind == "http" and isinstance(value, str):
            out[key] = render_url(value, scope, RESULTS_ENV)
        else:
            out[key] = render_value(value, scope, RESULTS_ENV)
    return out


def run(task: dict[str, Any], conf: dict[str, Any], data: dict[str, Any],
        scope: dict[str, Any], call: tools.Call) -> tuple[Any, dict[str, Any]]:
    """(the task's result, what its event records); TaskFailed for an error outcome."""
    kind = task["kind"]
    try:
        if kind == "noop":
            return (data or None), {}
        if kind == "python":
            return _python(conf, data, scope, call)
        if kind == "http":
            return _http(conf, call)
        if kind == "postgres":
            return _postgres(conf)
        if kind == "duckdb":
            return _duckdb(conf)
        spec = dict(conf)
        if kind == "mcp" and "arguments" not in spec:
            spec["arguments"] = data
        if kind == "rpc" and "params" not in spec:
            spec["params"] = data
        out = tools.run({"type": kind, "name": task["name"]}, spec, call)
    except (StepError, RenderError) as exc:
        raise failure(kind, exc) from None
    if out.is_error:
        raise TaskFailed({"kind": kind, "message": out.text[:500], "retryable": False})
    return out.value, out.summary


# python --------------------------------------------------------------------------------------

def _python(conf: dict[str, Any], data: dict[str, Any], scope: dict[str, Any],
            call: tools.Call) -> tuple[Any, dict[str, Any]]:
    if "function" in conf:
        out = tools.run({"type": "python", "name": conf["function"]},
                        {"function": conf["function"], "args": data}, call)
        return out.value, out.summary
    code = conf.get("code")
    if code is None:
        encoded = conf.get("code_b64") or conf.get("code_base64") or ""
        code = base64.b64decode(str(encoded)).decode("utf-8")
    context = {"workload": scope.get("workload"), "ctx": scope.get("ctx"),
               "iter": scope.get("iter") or {}, "execution_id": scope.get("execution_id"),
               "steps": scope.get("steps") or {}}
    value, printed = sandbox.run(str(code), data, json.loads(json.dumps(context, default=str)),
                                 conf.get("libs"))
    summary = {"printed": printed[-PRINTED_IN_EVENT:]} if printed else {}
    return value, summary


# http ----------------------------------------------------------------------------------------

def _with_query(url: str, params: Any) -> str:
    if not isinstance(params, dict) or not params:
        return url
    parts = urlsplit(url)
    extra = urlencode({k: v if isinstance(v, str) else json.dumps(v) if isinstance(
        v, dict | list) else str(v) for k, v in params.items()})
    return urlunsplit(parts._replace(query=f"{parts.query}&{extra}" if parts.query else extra))


def _http(conf: dict[str, Any], call: tools.Call) -> tuple[Any, dict[str, Any]]:
    method = str(conf.get("method") or "GET").upper()
    url = str(conf.get("url") or conf.get("endpoint") or "")
    headers = {str(k): str(v) for k, v in (conf.get("headers") or {}).items()}
    headers.setdefault("Idempotency-Key", call.key)
    form = "application/x-www-form-urlencoded" in " ".join(
        v.lower() for k, v in headers.items() if k.lower() == "content-type")
    params: dict[str, Any] = conf["params"] if isinstance(conf.get("params"), dict) else {}
    body: dict[str, Any] = {}
    chosen = next((conf[k] for k in ("json", "payload", "data") if k in conf), None)
    if method in ("GET", "DELETE", "HEAD") and isinstance(conf.get("data"), dict):
        params = {**conf["data"], **params}  # NoETL: a read's data is its query
    elif isinstance(chosen, dict | list):
        body = {"content": urlencode(chosen)} if form and isinstance(chosen, dict) else {
            "json": chosen}
    elif chosen is not None:
        body = {"content": str(chosen)}
    elif "body" in conf:
        body = ({"json": conf["body"]} if isinstance(conf["body"], dict | list)
                else {"content": str(conf["body"])})
    timeout = conf.get("timeout")
    seconds = float(timeout if isinstance(timeout, int | float) else 30)
    response, hops = tools.http_request(method, _with_query(url, params), headers, body,
                                        seconds)
    text = response.text[:tools.MAX_TEXT]
    if "json" in response.headers.get("Content-Type", "").lower():
        try:
            data: Any = response.json()
        except ValueError:
            data = text
    else:
        data = text
    result = {"data": data, "status_code": response.status_code,
              "headers": dict(response.headers), "url": str(response.url)}
    if response.status_code >= 400:
        status = response.status_code
        raise TaskFailed({"kind": "http", "status_code": status, "code": f"HTTP_{status}",
                          "retryable": status >= 500 or status == 429,
                          "message": f"{method} {response.url} answered {status}: "
                                     f"{text[:300]}"})
    return result, {"url": str(response.url), "status": response.status_code, "hops": hops}


# SQL -----------------------------------------------------------------------------------------

def _script(conf: dict[str, Any]) -> list[str]:
    text = next((conf[k] for k in SQL_KEYS if k in conf), "")
    found = statements(str(text))
    if not found:
        raise StepError("no SQL statement to run")
    return found


def _jsonable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = json.loads(json.dumps(rows, default=str))
    return result


def _postgres(conf: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    import psycopg  # lazy: the driver only for PostgreSQL
    from psycopg.rows import dict_row  # lazy: the driver only for PostgreSQL

    name = conf.get("auth") or conf.get("credential")
    if isinstance(name, dict):  # NoETL's {auth: {credential: <name>}}
        name = name.get("credential") or name.get("name")
    script = _script(conf)
    dsn = postgres_dsn(str(name))
    millis = max(1, settings.get_int("WORKFLOWS_SQL_SECONDS")) * 1000
    conninfo = tools.pg_conninfo(dsn, f"-c statement_timeout={millis}", f"credential '{name}'")
    last: dict[str, Any] = {}
    try:
        with psycopg.connect(conninfo, connect_timeout=10, row_factory=dict_row) as conn:
            with conn.transaction(), conn.cursor() as cursor:
                for statement in script:
                    cursor.execute(statement.encode())  # the text as rendered, no placeholders
                    if cursor.description is not None:
                        rows = cursor.fetchmany(MAX_ROWS)
                        last = {"rows": _jsonable(rows), "row_count": len(rows),
                                "columns": [c.name for c in cursor.description]}
                    else:
                        last = {"row_count": cursor.rowcount}
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TaskFailed({"kind": "postgres", "message": f"postgres: {reason}",
                          "code": getattr(exc, "sqlstate", None),
                          "retryable": isinstance(exc, psycopg.OperationalError)}) from None
    result = {"status": "success", **last, "statement_count": len(script)}
    return result, {"statements": len(script), "rows": last.get("row_count")}


def _duckdb(conf: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    import duckdb  # lazy: DuckDB only for a task that queries it

    script = _script(conf)
    try:
        conn = tools.duckdb_connect(tools.duckdb_folder())
    except duckdb.Error as exc:
        raise StepError(f"duckdb: {str(exc).splitlines()[0]}") from None
    last: dict[str, Any] = {}
    try:
        for statement in script:
            cursor = conn.execute(statement)
            if cursor.description:
                columns = [d[0] for d in cursor.description]
                rows = [dict(zip(columns, row, strict=True))
                        for row in cursor.fetchmany(MAX_ROWS)]
                last = {"rows": _jsonable(rows), "row_count": len(rows), "columns": columns}
            else:
                last = {"row_count": 0}
    except duckdb.Error as exc:
        raise TaskFailed({"kind": "duckdb", "message": f"duckdb: {str(exc).splitlines()[0]}",
                          "retryable": False}) from None
    finally:
        conn.close()
    result = {"status": "success", **last, "statement_count": len(script)}
    return result, {"statements": len(script), "rows": last.get("row_count")}
