"""Automations: rules a studio admin writes, each a trigger and an effect, behind one firing
gate.

Domain modules (no Flask): ``settings``; ``schedule`` (cron expressions and words, in a time
zone); ``firing`` (the gate: once per (rule, trigger key), the depth bound, pausing a rule
that fires too often); ``triggers`` (events heard in their causing transaction, and schedules
due); ``effects`` (carrying out a firing as the rule's owner); ``rules`` (creating, reading,
"Run now", inbound webhook calls). Adapters: ``web`` (wiring, the inbound endpoint, the
worker's sweep, CLI), ``pages``, ``actions``.

Nothing outside this package imports it.
"""
