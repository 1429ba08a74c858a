"""NoETL's current DSL (``apiVersion: noetl.io/v2``) beside our own: documents, runs, events.

A ``noetl.io/v2`` playbook is a list of steps, each running a ``tool`` (one task, or a
pipeline of named tasks) and routing by ``next: {spec: {mode}, arcs: [{step, when, set}]}``;
a step may ``loop`` over a list, tasks carry policies (``spec.policy.rules``), ``set`` writes
the run's mutable ``ctx``, and templates name workload keys, step results, ``ctx``, the loop's
iterator, ``_prev`` and ``execution_id`` as NoETL's do. The pieces:

- ``schema``: the document's shape; ``validate``: what a schema cannot say, with paths;
  ``compile``: the stored form a run executes;
- ``scope``: the names templates see, and what a run was given (``given``);
- ``sqltext``: SQL statements rendered as NoETL renders them, given values as literals;
- ``kinds``: what each tool kind does; ``keychain``: credentials by name; ``sandbox`` and
  ``sandbox_child``: inline python in a separate, limited process;
- ``pipeline``: a step's tasks with ``_prev``, policies and ``set``; ``steps``: one job of a
  v2 run (a step, a loop's item or end, a step resumed after its sub-run).

The document may also hold our ``mcp:`` section (a step ``turn: <name>`` runs a turn) and
``sql_inputs`` (the inputs it pastes into SQL as written: only an admin may set them).
"""
