"""Whether a run may start, and with what: its inputs checked against the workflow and the
caller (``check_inputs``, ``is_workflow_admin``), and the run a step of another run starts
(``start_sub_run``). Below ``runs`` and the worker, so that a running step can start a run."""

from __future__ import annotations

import uuid
from typing import Any

from app.core.identity import Identity
from app.extensions import db
from app.models import User
from app.services.errors import Invalid
from app.workflows import queue, settings
from app.workflows.queue import JobSpec
from app.workflows.run_context import identity_for
from app.workflows.tools import StepError


def start_sub_run(compiled: dict[str, Any], inputs: dict[str, Any], parent: dict[str, Any],
                  run_id: uuid.UUID, waiting: tuple[uuid.UUID, str]) -> uuid.UUID:
    """Start (once: ``run_id`` is the same on every attempt) a run of ``compiled`` for a step of
    the ``parent`` run, as the parent's starter; it queues the parent's job ``waiting`` when
    it ends. StepError names what refuses it."""
    by = identity_for(parent)
    try:
        check_inputs(compiled, inputs, parent.get("user_id"), by)
    except Invalid as exc:
        details = "; ".join(f"{e['param']}: {e['message']}" for e in exc.errors)
        raise StepError(f"{exc.message} ({details})" if details else exc.message) from None
    limits = {s["name"]: s["retries"] + 1 for s in compiled["steps"]
              if s.get("retries") is not None}
    return queue.create_run(
        kind="workflow", workflow=compiled["name"], path=compiled["path"], inputs=inputs,
        compiled=compiled, user_id=parent.get("user_id"), by=by, run_id=run_id,
        parent=waiting, started={"parent": parent["short_id"]},
        first=[JobSpec(compiled["entry"], {"kind": step_kind(compiled, compiled["entry"])},
                       max_attempts=limits.get(compiled["entry"]))],
        max_attempts=settings.get_int("WORKFLOWS_MAX_ATTEMPTS"))


def check_inputs(compiled: dict[str, Any], inputs: dict[str, Any], user_id: uuid.UUID | None,
                 by: Identity | None = None, operator: bool = False) -> None:
    """Invalid unless ``inputs`` fit the workflow and this caller may start it with them."""
    workload = compiled.get("workload") or {}
    required = compiled.get("inputs_required") or []
    unknown = sorted(set(inputs) - set(workload) - set(required))
    if unknown:
        known = ", ".join(workload) or "none"
        reads = f"; it also reads: {', '.join(required)}" if required else ""
        raise Invalid(f"unknown input {', '.join(unknown)} (workload defines: {known}{reads})",
                      errors=[{"param": f"inputs.{k}", "message": f"not in workload ({known})"}
                              for k in unknown])
    missing = [k for k in required if k not in inputs]
    if missing:
        raise Invalid(f"missing input {', '.join(missing)}: the workflow reads it and its "
                      f"workload gives no default",
                      errors=[{"param": f"inputs.{k}", "message": "required: the workflow "
                               "reads it and its workload gives no default"} for k in missing])
    privileged = sorted(set(inputs) & set(compiled.get("inputs_privileged") or []))
    if privileged and not (operator or is_workflow_admin(user_id, by)):
        raise Invalid(f"only a workflow admin may set {', '.join(privileged)}: the workflow "
                      f"pastes it into SQL as written or names a credential with it (admins: "
                      f"WORKFLOWS_ADMINS, or the operator's command line)",
                      errors=[{"param": f"inputs.{k}", "message": "only a workflow admin may "
                               "set it (WORKFLOWS_ADMINS)"} for k in privileged])
    if compiled.get("inline_python") and not settings.inline_python():
        raise Invalid(f"step {compiled['inline_python']} runs inline python code, which is off "
                      f"on this server: {settings.INLINE_PYTHON_HOW}",
                      errors=[{"param": "workflow", "message": "inline python code is off "
                               "(WORKFLOWS_PYTHON_INLINE)"}])


def is_workflow_admin(user_id: uuid.UUID | None, by: Identity | None) -> bool:
    """A person (never an agent's or an app's token) whose handle WORKFLOWS_ADMINS lists."""
    if user_id is None or (by is not None and by.kind != "person"):
        return False
    admins = settings.get_list("WORKFLOWS_ADMINS")
    if not admins:
        return False
    user = db.session.get(User, user_id)
    return user is not None and user.handle.lower() in admins


def step_kind(compiled: dict[str, Any], step: str) -> str:
    return next((s["type"] for s in compiled["steps"] if s["name"] == step), "step")
