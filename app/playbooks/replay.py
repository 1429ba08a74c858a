"""Running a recipe: refuse what is unsafe before any call, dry-run for real, execute with gates.

Before any call, ``preflight`` asks every rule a run must pass, in this order, and the first
that refuses names itself (``governance.Refusal``: rule, message, what to do next):
``args``      every argument names a variable of the recipe (the closest one is suggested) and
              has its type;
``required``  every required variable has a value (all missing ones are listed);
``identity``  Harmonic steps (MCP tools) need a signed-in caller;
and for a real run:
``confirm``   every write step carries ``confirm: true`` (step-level or in its params) unless
              its ``expect.requireConfirm`` is false;
``approval``, ``retired``, ``dry_run_first``  recipe governance (``app.playbooks.governance``);
``preview``   every upstream write can be previewed (``upstream.previewable``): its caps and max
              bounds are checked against that preview before it writes, so one that cannot be
              previewed cannot be capped.
A dry run asks the same ``preflight`` as a real run with its arguments would, counting its own
success for the dry-run-first rule, and reports the answer (``realRun``: allowed, or the rule
that will refuse and what to do): what the dry run says is what the real run does.

Then per step, in order: substitute (``{{steps.x.result...}}`` reads earlier outputs), then
- dry run: reads run; writes run with ``dryRun: true`` at the upstream, so counts are the
  upstream's own plan, held to the bounds and caps; selectors are resolved to their targets
  through ``get_element_info``;
- execute: before each write, the upstream's preview is checked against the step's max bounds
  and the caps in force (the recipe's, else the operator's defaults), so 8 bars never get
  created when 6 is the cap; then the write, then every bound on the real result (a bound
  whose field is missing fails);
- the first failure stops the run with a precise report.
A dry run does not send a step that reads an output only a real run produces (the id of an
element a planned write would create): it is listed as planned, with what it waits for.
Over MCP, the person is asked (elicitation) before the first write when the client can; the
run reports progress per step. Every run is stored with its per-step record, the digests of
its recipe and arguments and the door it came through, and audited.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.identity import Identity
from app.db import writing
from app.extensions import db
from app.models.base import utcnow
from app.models.playbooks import Playbook, PlaybookRun
from app.playbooks import governance, settings, tools_bridge, upstream
from app.playbooks.governance import Refusal
from app.playbooks.recipe import (
    Recipe,
    Step,
    Unresolved,
    cap_checks,
    describe_caps,
    evaluate,
    missing_vars,
    placeholders,
    resolve_vars,
    substitute,
)
from app.playbooks.redact import Redactor
from app.services.errors import DomainError

_ids = itertools.count(1)
SELECTOR_PARAMS = ("selector", "host")


@dataclass
class Hooks:
    progress: Callable[[int, int, str], None] | None = None
    # Asked once before the first write: True go, False stop, None "cannot ask" (go on).
    confirm_writes: Callable[[str], bool | None] | None = None
    cancelled: Callable[[], bool] | None = None


@dataclass
class Preflight:
    """What ``preflight`` found: the resolved values (None when the arguments were refused),
    governance's verdict (when it was asked), the first refusal and what it lists."""

    values: dict[str, Any] | None
    verdict: governance.Verdict | None = None
    refusal: Refusal | None = None
    extra: dict[str, Any] = field(default_factory=dict)


# How each door names the replay's arguments, in a refusal's "next".
_ARGS_WORD = {"mcp": "args", "cli": "--arg name=value", "page": "args"}


def preflight(recipe: Recipe, args: dict[str, Any], dry_run: bool, identity: Identity | None,
              playbook: Playbook | None, source: Path | None, conf: settings.Settings,
              door: str = "", counted: bool = False) -> Preflight:
    """Every rule a run must pass before any call, in order; the first refusal wins.

    ``dry_run`` false asks the real run's rules too; ``counted`` (with ``dry_run`` false) is
    a successful dry run asking what a real run with its arguments would meet."""
    where = _ARGS_WORD.get(door, "Args")
    try:
        values = resolve_vars(recipe, args)
    except DomainError as exc:
        known = exc.details.get("variables")
        hint = (f"name only the recipe's variables in {where}: {', '.join(map(str, known))}"
                if isinstance(known, list) else
                f"give each value in {where} its variable's type (the recipe's inputs)")
        return Preflight(None, refusal=Refusal("args", exc.message, hint, 422),
                         extra={"errors": exc.errors,
                                **{k: v for k, v in exc.details.items()
                                   if k in ("unknown", "variables", "closest")}})
    missing = missing_vars(recipe, values)
    if missing:
        return Preflight(values, refusal=Refusal(
            "required", "Required variables not provided: " + ", ".join(missing) + ".",
            f"pass them in {where} (a dry run shows every placeholder)", 422),
            extra={"missing": missing})
    if identity is None and any(s.tool for s in recipe.steps):
        return Preflight(values, refusal=Refusal(
            "identity", "Harmonic steps (MCP tools) need a signed-in identity.",
            "send an API token" if door != "cli" else "give --user HANDLE", 422))
    if dry_run:
        return Preflight(values, governance.check(recipe, values, True, identity, playbook,
                                                  source, conf, door))
    unconfirmed = [s.name for s in recipe.steps if s.kind == "write" and s.require_confirm
                   and not s.confirmed]
    if unconfirmed:
        return Preflight(values, refusal=Refusal(
            "confirm", "Write steps need \"confirm\": true before they can run: "
            + ", ".join(unconfirmed) + ".", "read what they write (a dry run plans it), then "
            "add \"confirm\": true to those steps", 422), extra={"unconfirmed": unconfirmed})
    verdict = governance.check(recipe, values, False, identity, playbook, source, conf, door,
                               counted=counted)
    if verdict.refusal is not None:
        return Preflight(values, verdict, verdict.refusal)
    blind = list(dict.fromkeys(s.method for s in recipe.steps if s.kind == "write"
                               and s.method and not upstream.previewable(s.method, conf)))
    if blind:
        named = ", ".join(blind)
        return Preflight(values, verdict, Refusal(
            "preview", f"{named} cannot be previewed on {upstream.label(conf)}: the caps and "
            "max bounds of a write are checked against the upstream's own preview (dryRun: "
            "true) before it writes, so without one it does not run for real.",
            f"if the upstream honours dryRun: true for {named} (writes nothing), list "
            f"{'it' if len(blind) == 1 else 'them'} in PLAYBOOK_DRYRUN_METHODS or have its "
            "rpc.discover catalog declare a dryRun param; otherwise this write cannot be "
            "capped and does not replay", 409), extra={"unpreviewable": blind})
    return Preflight(values, verdict)


def real_run(check: Preflight) -> dict[str, Any]:
    """What a real run would meet, as a dry run reports it (``realRun``)."""
    if check.refusal is None:
        return {"allowed": True,
                "basis": check.verdict.basis if check.verdict is not None else "approved"}
    return {"allowed": False, **check.refusal.body()}


_BASIS = {"approved": "the recipe is approved", "teacher": "it is your own taught session"}


def real_run_words(answer: dict[str, Any]) -> str:
    """A dry run's ``realRun`` in one sentence, as every door prints it."""
    if answer.get("allowed"):
        why = _BASIS.get(str(answer.get("basis")), str(answer.get("basis")))
        return f"A real run with these arguments would be allowed ({why})."
    return (f"A real run with these arguments would be refused (rule {answer.get('rule')}): "
            f"{answer.get('message')} Next: {answer.get('next')}")


class Runner:
    def __init__(self, recipe: Recipe, args: dict[str, Any], dry_run: bool,
                 identity: Identity | None, playbook: Playbook | None, hooks: Hooks | None = None,
                 source: Path | None = None, door: str = "") -> None:
        self.recipe, self.args, self.dry_run = recipe, args, dry_run
        self.identity, self.playbook = identity, playbook
        self.source, self.door = source, door
        self.verdict: governance.Verdict | None = None
        self.hooks = hooks or Hooks()
        self.conf = settings.current()
        self.redactor = Redactor(self.conf.redact_patterns)
        self.details: list[dict[str, Any]] = []
        self.outputs: dict[str, Any] = {}
        self.asked = False

    # -- public -----------------------------------------------------------------------------

    def run(self) -> tuple[dict[str, Any], PlaybookRun]:
        run = PlaybookRun(playbook_id=self.playbook.id if self.playbook else None,
                          user_id=self.identity.user_id if self.identity else None,
                          recipe_name=self.recipe.title[:200], dry_run=self.dry_run,
                          status="running", args=self.redactor.value(self.args), steps=[])
        run.assign_ids()
        # Each committed at once, even inside an action's block: the run is seen running.
        with writing():
            db.session.add(run)
            db.session.commit()
        status, error, extra = self._execute()
        with writing():
            self._record(run, status, error, extra)
            db.session.commit()
        return self._report(run, status, error, extra), run

    def _record(self, run: PlaybookRun, status: str, error: str | None,
                extra: dict[str, Any]) -> None:
        run.status = status
        run.error = error
        run.steps = self.redactor.value(self.details)
        run.finished_at = utcnow()
        run.recipe_version = self.recipe.version[:40]
        run.door = self.door[:16]
        verdict = self.verdict
        if verdict is not None:
            run.recipe_digest, run.args_digest = verdict.digest, verdict.args_digest
            run.state = verdict.state
        else:
            run.recipe_digest = governance.digest(self.recipe.raw)
        governance.audit("dry_run" if self.dry_run else "replay", self.identity,
                         playbook=self.playbook, version=verdict.version if verdict else None,
                         run=run, detail={"status": status, "door": self.door,
                                          "recipe": self.recipe.title,
                                          "state": verdict.state if verdict else "",
                                          "basis": verdict.basis if verdict else "",
                                          **{k: extra[k] for k in ("rule", "realRun")
                                             if k in extra}})

    # -- the run ----------------------------------------------------------------------------

    def _execute(self) -> tuple[str, str | None, dict[str, Any]]:
        check = preflight(self.recipe, self.args, self.dry_run, self.identity, self.playbook,
                          self.source, self.conf, self.door)
        self.verdict = check.verdict
        refusal = check.refusal
        if refusal is not None:
            extra = {"rule": refusal.rule, "next": refusal.next, "refusal": refusal.body(),
                     **check.extra}
            if refusal.status != 422:
                extra["httpStatus"] = refusal.status
            if self.dry_run:  # what refuses the dry run refuses a real run as well
                extra["realRun"] = real_run(check)
            return "refused", refusal.text(), extra
        values = check.values or {}
        status, error, extra = self._steps(values)
        if self.dry_run:
            # The same preflight a real run with these arguments will meet, counting this
            # dry run if it succeeded: the dry run cannot say "ok" while the real run refuses.
            extra["realRun"] = real_run(preflight(
                self.recipe, self.args, False, self.identity, self.playbook, self.source,
                self.conf, self.door, counted=status == "ok"))
        return status, error, extra

    def _steps(self, values: dict[str, Any]) -> tuple[str, str | None, dict[str, Any]]:
        total = len(self.recipe.steps)
        for index, step in enumerate(self.recipe.steps):
            if self.hooks.cancelled is not None and self.hooks.cancelled():
                return "cancelled", f"cancelled before step {step.name}", {}
            if self.hooks.progress is not None:
                self.hooks.progress(index, total, f"{index + 1}/{total} {step.name}")
            if step.kind == "write" and not self.dry_run and not self.asked:
                self.asked = True
                if self.hooks.confirm_writes is not None:
                    answer = self.hooks.confirm_writes(self.write_question(values))
                    if answer is False:
                        self.details.append({"name": step.name, "status": "skipped",
                                             "error": "the person declined the writes"})
                        return "declined", "Declined before the first write; nothing was " \
                                           "written", {}
            started = time.perf_counter()
            detail: dict[str, Any] = {"name": step.name,
                                      **({"method": step.method} if step.method
                                         else {"tool": step.tool})}
            self.details.append(detail)
            try:
                params = substitute(step.params, values, self.outputs, lenient=self.dry_run)
            except Unresolved as exc:
                detail.update(status="failed", error=f"{{{{{exc}}}}} has no value: the step it "
                                                      f"reads did not produce it")
                return "failed", f"step {step.name}: unresolved {exc}", {}
            pending = [p for p in placeholders(params) if p.startswith("steps.")] \
                if self.dry_run else []
            if pending:
                # An output only a real run produces (the id of what a planned write would
                # create): the step is shown as planned, not sent with a placeholder in it.
                detail.update(status="planned", request={"params": params},
                              note="not sent in a dry run: it reads "
                                   + ", ".join("{{" + p + "}}" for p in pending)
                                   + ", which only a real run produces")
                detail["plan"] = plan_words(step.method or step.tool or "", params, None, [])
                continue
            ok = (self._upstream_step if step.method else self._tool_step)(step, params, detail)
            detail["ms"] = round((time.perf_counter() - started) * 1000, 3)
            if not ok:
                return "failed", f"step {step.name}: {detail.get('error', 'failed')}", {}
        if self.hooks.progress is not None:
            self.hooks.progress(total, total, "done")
        return "ok", None, {}

    def write_question(self, values: dict[str, Any]) -> str:
        writes = [s.name for s in self.recipe.steps if s.kind == "write"]
        shown = ", ".join(f"{k}={v!r}" for k, v in values.items() if k in self.args) or "defaults"
        return (f"Replay {self.recipe.title} for real? It will write in {len(writes)} step(s): "
                f"{', '.join(writes)}. Arguments: {shown}.")

    # -- upstream steps ---------------------------------------------------------------------

    def _call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        payload = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}
        return upstream.call(payload, self.conf, self.hooks.cancelled)

    def _checks(self, step: Step, result: Any, only_max: bool) -> list[dict[str, Any]]:
        checks = list(step.checks)
        if step.kind == "write":
            checks += cap_checks(self.recipe)
        return [evaluate(c, result, only_max) for c in checks]

    def _upstream_step(self, step: Step, params: Any, detail: dict[str, Any]) -> bool:
        method = step.method or ""
        if not isinstance(params, dict):
            detail.update(status="failed", error="params must be an object")
            return False
        if self.dry_run:
            targets = self._targets(params)
            if targets:
                detail["targets"] = targets
        if step.kind == "write" and self.dry_run and not upstream.previewable(method,
                                                                               self.conf):
            detail.update(status="planned", request={"jsonrpc": "2.0", "method": method,
                                                     "params": params},
                          note=f"not sent: {method} is not known to honour dryRun on this "
                               f"upstream (PLAYBOOK_DRYRUN_METHODS, or its catalog), so a "
                               f"real run refuses it (rule preview)",
                          plan=plan_words(method, params, None, detail.get("targets", [])))
            return True
        if step.kind == "write" and self.dry_run:
            params = {**params, "dryRun": True}
        elif step.kind == "write":
            # Caps and max bounds before the write, on the upstream's own plan of what this
            # call would do (preflight refused any write that cannot be previewed).
            limits = [c for c in step.checks if c.max is not None] + cap_checks(self.recipe)
            preview = self._call(method, {**params, "dryRun": True})
            detail["preview"] = {"request": {"method": method,
                                             "params": {**params, "dryRun": True}},
                                 "response": preview}
            if "error" in preview:
                detail.update(status="failed", error="the preview (dryRun) failed: "
                              + str(preview["error"].get("message")))
                return False
            verdicts = [evaluate(c, preview.get("result"), only_max=True) for c in limits]
            detail["preview"]["checks"] = verdicts
            bad = [v for v in verdicts if not v["ok"]]
            if bad:
                detail.update(status="failed", error="stopped before writing: the preview "
                              "shows " + "; ".join(v["message"] for v in bad))
                return False
        request = {"jsonrpc": "2.0", "method": method, "params": params}
        response = self._call(method, params)
        detail["request"], detail["response"] = request, response
        if "error" in response:
            error = response["error"] if isinstance(response["error"], dict) else {}
            detail.update(status="failed", error=f"{method} answered error "
                                                 f"{error.get('code')}: {error.get('message')}")
            return False
        result = response.get("result")
        if not self._accept(step, result, detail):
            return False
        detail["status"] = "planned" if self.dry_run and step.kind == "write" else "ok"
        if self.dry_run and step.kind == "write" and isinstance(result, dict):
            detail["planned"] = {k: result[k] for k in ("created", "updated", "deleted",
                                                        "candidates") if k in result}
            detail["plan"] = plan_words(method, params, result, detail.get("targets", []))
        return True

    def _targets(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Selectors resolved to their elements (dry runs show what would be touched)."""
        found = []
        for key in SELECTOR_PARAMS:
            sel = params.get(key)
            if not isinstance(sel, dict) or not sel or any(
                    k in sel for k in ("elementId", "uniqueId", "elementIds")):
                continue
            answer = self._call("get_element_info", {"selector": sel})
            result = answer.get("result") if isinstance(answer, dict) else None
            if isinstance(result, dict) and isinstance(result.get("items"), list):
                found.append({"param": key, "selector": sel, "count": len(result["items"]),
                              "elementIds": [i.get("elementId") for i in result["items"]
                                             if isinstance(i, dict)]})
            elif isinstance(answer, dict) and "error" in answer:
                found.append({"param": key, "selector": sel,
                              "error": str(answer["error"].get("message"))})
        return found

    # -- Harmonic (MCP tool) steps ------------------------------------------------------------

    def _tool_step(self, step: Step, params: Any, detail: dict[str, Any]) -> bool:
        tool = step.tool or ""
        detail["request"] = {"tool": tool, "arguments": params}
        if self.dry_run and step.kind == "write":
            ok, note = tools_bridge.plan(tool, params, self.identity)
            detail.update(status="planned" if ok else "failed",
                          **({"note": note, "plan": note} if ok else {"error": note}))
            return ok
        ok, result, message = tools_bridge.call(tool, params, self.identity)
        detail["response"] = result if ok else {"error": message}
        if not ok:
            detail.update(status="failed", error=message)
            return False
        if not self._accept(step, result, detail):
            return False
        detail["status"] = "ok"
        return True

    def _accept(self, step: Step, result: Any, detail: dict[str, Any]) -> bool:
        """Keep a step's result for later steps and check its bounds (False fails the step)."""
        self.outputs[step.name] = result
        verdicts = self._checks(step, result, only_max=False)
        detail["checks"] = verdicts
        bad = [v for v in verdicts if not v["ok"]]
        if bad:
            detail.update(status="failed", error="; ".join(v["message"] for v in bad))
            return False
        return True

    # -- report -----------------------------------------------------------------------------

    def _report(self, run: PlaybookRun, status: str, error: str | None,
                extra: dict[str, Any]) -> dict[str, Any]:
        succeeded = sum(1 for d in self.details if d.get("status") in ("ok", "planned"))
        failed = sum(1 for d in self.details if d.get("status") == "failed")
        total = len(self.recipe.steps)
        report: dict[str, Any] = {
            "ok": status == "ok", "status": status, "dryRun": self.dry_run,
            "recipe": self.recipe.title,
            "steps": {"total": total, "succeeded": succeeded, "failed": failed,
                      "skipped": total - succeeded - failed},
            "details": run.steps, "runId": run.short_id, "run": run_path(run),
            "version": self.recipe.version}
        report["caps"] = describe_caps(self.recipe)
        if self.verdict is not None:
            report["governance"] = {"state": self.verdict.state, "basis": self.verdict.basis}
        if error:
            report["error"] = error
        report.update(extra)
        return report


# Parameters that say where a write goes (shown as its targets) or how it is sent, not what it
# sets.
_WHERE = frozenset({"selector", "host", "elementId", "elementIds", "uniqueId", "dryRun",
                    "confirm"})
PLAN_CHARS = 240


def _value(value: Any) -> str:
    if isinstance(value, str):
        return repr(value) if len(value) <= 60 else repr(value[:57] + "...")
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _elements(params: dict[str, Any], result: Any, targets: list[dict[str, Any]]) -> list[Any]:
    if isinstance(result, dict) and isinstance(result.get("elementIds"), list):
        return result["elementIds"]
    for target in targets:
        if isinstance(target.get("elementIds"), list):
            return target["elementIds"]
    if isinstance(params.get("elementIds"), list):
        return params["elementIds"]
    for key in ("elementId", "uniqueId"):
        if params.get(key) is not None:
            return [params[key]]
    return []


def plan_words(method: str, params: Any, result: Any, targets: list[dict[str, Any]]) -> str:
    """A planned write in words: "would call update_wall_parameter on element 3001:
    Comments = 'x'" (the targets the dry run resolved, the values it would set, the
    upstream's own counts)."""
    params = params if isinstance(params, dict) else {}
    text = f"would call {method}"
    ids = _elements(params, result, targets)
    if len(ids) == 1:
        text += f" on element {ids[0]}"
    elif ids:
        shown = ", ".join(str(i) for i in ids[:5]) + (", ..." if len(ids) > 5 else "")
        text += f" on {len(ids)} elements ({shown})"
    elif isinstance(params.get("selector"), dict):
        text += " on the elements matching " + _value(params["selector"])
    sets = []
    if "param" in params and "value" in params:
        sets.append(f"{params['param']} = {_value(params['value'])}")
    sets += [f"{k} = {_value(v)}" for k, v in params.items()
             if k not in _WHERE and not (k in ("param", "value") and "param" in params
                                         and "value" in params)]
    if sets:
        text += ": " + ", ".join(sets)
    if isinstance(result, dict):
        counts = [f"{result[k]} {k}" for k in ("created", "updated", "deleted")
                  if isinstance(result.get(k), int)]
        if counts:
            text += " (upstream plan: " + ", ".join(counts) + ")"
    return text if len(text) <= PLAN_CHARS else text[:PLAN_CHARS - 3] + "..."


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """The compact outcome of a run for an agent's structured result (MCP ``replay``): status,
    counts, the run's link and, when refused, the rule; every step's detail stays on the run's
    page (``run``)."""
    out: dict[str, Any] = {"ok": report["ok"], "status": report["status"],
                           "dry_run": report["dryRun"], "recipe": report["recipe"],
                           "version": report.get("version"), "run_id": report["runId"],
                           "run": report["run"], "steps": report["steps"]}
    for key in ("error", "rule", "next", "missing", "unconfirmed", "unknown", "closest",
                "variables", "unpreviewable"):
        if report.get(key):
            out[key] = report[key]
    if "realRun" in report:
        out["real_run"] = report["realRun"]
    if report.get("caps"):
        out["caps"] = {key: cap["value"] for key, cap in report["caps"].items()}
    if report.get("governance"):
        out["governance"] = report["governance"]
    planned = [d["plan"] for d in report.get("details") or [] if d.get("plan")]
    if planned:
        out["planned"] = planned[:3]
    return out


def run_path(run: PlaybookRun) -> str:
    if run.playbook_id is not None:
        playbook = db.session.get(Playbook, run.playbook_id)
        if playbook is not None:
            return f"/playbooks/{playbook.short_id}/runs/{run.short_id}"
    return f"/playbooks/runs/{run.short_id}"


def replay(recipe: Recipe, args: dict[str, Any], dry_run: bool, identity: Identity | None,
           playbook: Playbook | None, hooks: Hooks | None = None, source: Path | None = None,
           door: str = "") -> tuple[dict[str, Any], PlaybookRun]:
    """Run ``recipe`` read from ``source`` (a file; None when it has none) through ``door``."""
    return Runner(recipe, args, dry_run, identity, playbook, hooks, source, door).run()
