"""Tests of the floorplan DSL package (parser, validation, rendering, modification, tools)."""
