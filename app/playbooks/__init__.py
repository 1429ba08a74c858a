"""Playbooks: teach mode, the recording JSON-RPC proxy, recipes with variables, safe replay.

The pieces, one job each:

``settings``  what the operator configures (upstream, allow-list, timeouts, redaction, auth)
``names``     session names, folders and recipe paths confined to the data directory
``redact``    secrets out of everything before it is written
``capture``   the capture folder: capture.jsonl (locked, fsynced lines), playbook.md, summary.yaml
``upstream``  one JSON-RPC call: the embedded design-model server or an allow-listed URL,
              following ``{queued, jobId}`` receipts to the real outcome
``teach``     teach sessions owned by an identity (rows in ``playbooks``) and recording
``recipe``    the recipe format: loading, validation, typed substitution, bounds
``generate``  a recipe from a capture (variables, selectors, bounds, step wiring)
``governance`` recipe versions (draft, reviewed, approved, retired), who may move them, which
              replays may run for real (approved or the teacher's own, dry run first), the audit
``replay``    running a recipe: refusals, dry run, confirm, caps, per-step report, stored runs
``tools_bridge`` replaying Harmonic steps through the registered MCP tools, in-process
``service``   finding playbooks, runs and recipes for a caller; generating and saving recipes
``api``       the seed-compatible JSON endpoints /teach/start, /teach/stop, /rpc, /replay
``pages``     /playbooks, /playbooks/<id>, runs, and their actions (through the registry)
``mcp_tools`` the MCP tools and resources, and capture of MCP tool calls while teaching
``cli``       ``flask playbooks replay``
``queued``    the ``queue_replay`` action: a replay as one step on the workflow queue
``web``       ``init_app``: wires all of the above into the app

The public surface for other packages, which import nothing else from here: the proxy's
upstream (``upstream_settings()``, ``call_upstream(payload, conf)``), which workflow ``rpc``
tools call with the same allow-list and timeouts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.playbooks import settings, upstream

if TYPE_CHECKING:
    from app.playbooks.settings import Settings


def upstream_settings() -> Settings:
    """The playbook proxy's upstream settings as configured now."""
    return settings.current()


def call_upstream(payload: dict[str, Any], conf: Settings,
                  should_stop: Callable[[], bool] | None = None,
                  headers: dict[str, str] | None = None) -> dict[str, Any]:
    """The upstream's JSON-RPC response to ``payload`` (never raises for upstream faults)."""
    return upstream.call(payload, conf, should_stop, headers)
