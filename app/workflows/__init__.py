"""Workflows: declarative playbook YAML with an ``mcp:`` section, run on a durable job queue.

The pieces, each in its own module:

- ``document``: load YAML; ``schema``: the JSON Schema; ``validate``: schema + semantic checks
  with paths; ``compile``: turns, resources and tool calls into explicit steps.
- ``templating``: Jinja2's sandbox with undefined names as errors, SQL templates as bound
  parameters; ``secrets``: ``secrets.<name>`` from a provider, redacted wherever results go.
- ``tools``: the tool/resource types (mcp, page, http, rpc, sql, postgres, duckdb, python);
  ``gateway``: chat completions.
- ``queue``: runs, jobs, leases, heartbeats, events; ``runner``: executes one leased job;
  ``calls``: enqueue any registered callable as steps (replays of playbooks use this);
  ``worker``: the loop behind ``bin/worker`` and the in-process thread.
- ``web``: pages ``/workflows``, ``/workflows/<name>``, ``/runs/<id>``, the CLI group and the MCP
  resource ``harmonic://runs/{id}/events``.
"""
