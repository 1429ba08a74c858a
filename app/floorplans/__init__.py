"""Floorplan DSL: grammar, parser, resolver/validator, SVG/PNG renderer and text-preserving edits.

The grammar file ``floorplan.lark`` is the single source of truth: the vocabularies (wall types,
sides, directions, alignments, door types, swings) used by the validator, the renderer, the tool
JSON Schemas and the ``floorplan://schema`` document are all read from it (see ``language``).
Public entry points for callers live in ``tools`` (no Flask, no MCP dependency).
"""
