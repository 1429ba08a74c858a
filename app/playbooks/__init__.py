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
``web``       ``init_app``: wires all of the above into the app
"""
