"""The names a ``noetl.io/v2`` template sees, built from a run's rows, and what it was given.

As in NoETL: the workload's keys and the run's ``ctx`` keys are names of their own
(``{{ message }}``) as well as ``workload.<key>`` and ``ctx.<key>``; each finished step's result
is named by its step (``{{ fetch_posts.data }}``), and wins over a variable of the same name;
``execution_id`` is the run's id. Inside a loop's item, ``iter`` holds the iterator's item
(also a name of its own), ``_index``, ``_first``, ``_last`` and what the item's tasks ``set``;
inside a pipeline, ``_prev`` is the previous task's result, ``output`` the current task's
outcome ``{status, data, error, meta}``, ``results`` and each task's name its result; inside a
task, ``input`` is its rendered input. Beside these, ours: ``secrets``, ``keychain``,
``mcp``/``prompts`` (the document's mcp section), ``run``.

``ctx`` is durable: each job records what it set (``payload.ctx``) when it is marked done, and
a job's ``ctx`` is the workload with those records applied in job order. What was *given* when
the run started (``given``) is data: ``sqltext`` quotes it wherever it meets SQL.
"""

from __future__ import annotations

from typing import Any

from app.workflows import secrets
from app.workflows.queue import base_step
from app.workflows.templating import RenderError
from app.workflows.tools import StepError
from app.workflows.v2.keychain import credential

# Names a template may use whatever the document declares.
RESERVED = ("workload", "ctx", "iter", "input", "output", "_prev", "_task", "_attempt",
            "results", "execution_id", "catalog_id", "job", "event", "loop", "keychain",
            "secrets", "mcp", "prompts", "context", "run", "step", "error", "resources",
            "turns", "steps", "result", "loop_index")
JINJA_GLOBALS = ("range", "dict", "lipsum", "cycler", "joiner", "namespace")


class Keychain(dict[str, Any]):
    """``keychain.<name>``: a credential of the operator's, read by name when used."""

    def __init__(self, names: list[str]) -> None:
        super().__init__()
        self.names = names

    def __missing__(self, name: str) -> Any:
        try:
            value = credential(name)
        except StepError as exc:
            # Not a KeyError: Jinja would turn that into a vague "undefined" message.
            raise RenderError(exc.message) from None
        self[name] = value
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str)


def workload_of(run: dict[str, Any]) -> dict[str, Any]:
    compiled = run["compiled"]
    return {**(compiled.get("workload") or {}), **(run.get("inputs") or {})}


def ctx_of(run: dict[str, Any], done: list[dict[str, Any]],
           extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The workload, then what each done job set, in job order, then ``extra``."""
    ctx = workload_of(run)
    for row in done:
        ctx.update((row.get("payload") or {}).get("ctx") or {})
    ctx.update(extra or {})
    return ctx


def results_of(done: list[dict[str, Any]]) -> dict[str, Any]:
    """Each finished step's result by step name (the job that closed the step holds it)."""
    results: dict[str, Any] = {}
    for row in done:
        payload = row.get("payload") or {}
        if payload.get("closes"):
            results[base_step(row["step"])] = row["result"]
    return results


def base(run: dict[str, Any], done: list[dict[str, Any]],
         ctx_extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """What every template of a job sees (before its loop item, pipeline and task)."""
    compiled = run["compiled"]
    ctx = ctx_of(run, done, ctx_extra)
    results = results_of(done)
    declarations = compiled.get("declarations") or {}
    scope: dict[str, Any] = dict(ctx)
    scope.update(results)
    resources = {r["resource"]: results[r["name"]] for r in compiled.get("steps") or []
                 if r.get("type") == "resource" and r["name"] in results}
    turns = {s["turn"]["name"]: results[s["name"]] for s in compiled.get("steps") or []
             if s.get("type") == "turn" and s["name"] in results}
    scope.update({
        "workload": workload_of(run), "ctx": ctx, "steps": results,
        "execution_id": str(run["id"]), "catalog_id": compiled.get("path"),
        "job": {"uuid": str(run["id"]), "execution_id": str(run["id"]), "id": str(run["id"])},
        "run": {"id": str(run["id"]), "short_id": run["short_id"]},
        "secrets": secrets.Secrets(), "keychain": Keychain(compiled.get("keychain") or []),
        "mcp": declarations, "prompts": declarations.get("prompts") or {},
        "resources": resources, "turns": turns, "iter": {},
    })
    return scope


def iteration(scope: dict[str, Any], iterator: str, item: Any, index: int, length: int,
              it: dict[str, Any] | None = None) -> dict[str, Any]:
    # (``it``: what the item's tasks set in ``iter`` so far, for an item resumed)
    """``scope`` inside a loop's item: ``iter`` and the iterator's own name."""
    values = {iterator: item, "_index": index, "_first": index == 0,
              "_last": index == length - 1, **(it or {})}
    return {**scope, iterator: item, "iter": values, "loop_index": index,
            "loop": {"index": index, "first": index == 0, "last": index == length - 1,
                     "length": length}}


def outcome(data: Any = None, error: dict[str, Any] | None = None, kind: str = "",
            meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """A task's outcome as policies and ``set`` read it (``output``): status ok with its data,
    or error with ``{kind, message, retryable, code}``; http, postgres and python tasks add
    ``http.status``, ``pg.code``, ``py.exception``."""
    out: dict[str, Any] = {"status": "error" if error else "ok", "meta": meta or {}}
    if error:
        out["error"] = error
        out["data"] = None
    else:
        out["data"] = data
    if kind == "http":
        status = (error or {}).get("status_code") or (
            data.get("status_code") if isinstance(data, dict) else None)
        out["http"] = {"status": status,
                       "headers": data.get("headers", {}) if isinstance(data, dict) else {}}
    elif kind == "postgres":
        out["pg"] = {"code": (error or {}).get("code")}
    elif kind == "python":
        out["py"] = {"exception": (error or {}).get("exception")}
    return out


def given(run: dict[str, Any]) -> frozenset[str]:
    """The strings given when the run started (every string inside its inputs), except the
    inputs the workflow declares as SQL and values equal to the document's own default."""
    compiled = run["compiled"]
    defaults = compiled.get("workload") or {}
    declared = set(compiled.get("sql_inputs") or [])
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for key, value in (run.get("inputs") or {}).items():
        if key in declared or (key in defaults and defaults[key] == value):
            continue
        walk(value)
    found.discard("")
    return frozenset(found)
