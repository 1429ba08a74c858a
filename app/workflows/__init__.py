"""Workflows: declarative playbook YAML with an ``mcp:`` section, run on a durable job queue.

The pieces, each in its own module:

- ``document``: load YAML; ``schema``: the JSON Schema; ``validate``: schema + semantic checks
  with paths; ``compile``: turns, resources and tool calls into explicit steps; ``checks``
  and ``declarations``: the checks and the compiled declarations both DSLs share.
- ``templating``: Jinja2's sandbox with undefined names as errors, SQL templates as bound
  parameters; ``secrets``: ``secrets.<name>`` from a provider, redacted wherever results go.
- ``tools``: the tool/resource types (mcp, page, http, rpc, sql, postgres, duckdb, python);
  ``gateway``: chat completions.
- ``queue``: runs, jobs, leases, heartbeats, events; ``runner``: executes one leased job,
  through the step kinds both DSLs share (``step_kinds``) and what a step sees
  (``run_context``); ``runs`` and ``admission``: starting a run (a step's sub-run too);
  ``calls``: enqueue any registered callable as steps (replays of playbooks use this);
  ``worker``: the loop behind ``bin/worker`` and the in-process thread.
- ``web``: pages ``/workflows``, ``/workflows/<name>``, ``/runs/<id>``, the CLI group and the MCP
  resource ``harmonic://runs/{id}/events``.
- ``v2``: NoETL's current DSL (``apiVersion: noetl.io/v2``), validated, compiled and run on the
  same queue (``docs/WORKFLOWS.md``).

The public surface for other packages, which import nothing else from here: the durable call
queue (``enqueue_calls``, ``CallStep``, ``callable_step``, ``CallContext``), ``StepError``,
``every`` (a task every worker runs every few seconds: ``periodic``), the catalog's
``entries`` (the playbooks listed at /workflows; search indexes them), and ``start_compiled``
(start a run of one of them for someone: automations do).
Names load on first use, so importing one module of this package does not import the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.workflows.calls import CallContext, CallStep, callable_step, enqueue_calls
    from app.workflows.catalog import entries
    from app.workflows.periodic import every
    from app.workflows.runs import start_compiled
    from app.workflows.tools import StepError

_PUBLIC = {"CallContext": "calls", "CallStep": "calls", "callable_step": "calls",
           "enqueue_calls": "calls", "StepError": "tools", "entries": "catalog",
           "every": "periodic", "start_compiled": "runs"}
__all__ = ["CallContext", "CallStep", "StepError", "callable_step", "enqueue_calls", "entries",
           "every", "start_compiled"]


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        return getattr(importlib.import_module(f"app.workflows.{_PUBLIC[name]}"), name)
    raise AttributeError(f"module 'app.workflows' has no attribute {name!r}")
