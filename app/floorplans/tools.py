"""The floorplan tools: render, validate and modify (their schemas: ``schemas``; the DSL
document: ``schema_doc``).

Plain functions with the reference tools' contract and no MCP or Flask dependency; the MCP and
web layers wrap them. Bad input always yields an error result, never an exception.
"""

from __future__ import annotations

import logging
from typing import Any

import jsonschema

from .language import Language, default_language
from .metadata import num, rooms_metadata
from .modify import modify
from .operations import find_operation
from .render_png import svg_to_png
from .render_svg import RenderOptions, render_svg
from .schemas import input_schema
from .validate import analyze

log = logging.getLogger(__name__)
MIN_TEXT_PX = 3.0  # PNG only: smaller room text would not be legible (the SVG keeps it all)


def _bad_args(tool: str, args: Any, language: Language) -> str | None:
    if not isinstance(args, dict):
        return "Invalid arguments: expected an object"
    schema = input_schema(tool, language)
    if tool == "modify_floorplan":  # operations are checked one by one, with their own errors
        schema = {**schema, "properties": {**schema["properties"],
                                           "operations": {"type": "array"}}}
    problems = sorted(jsonschema.Draft202012Validator(schema).iter_errors(args),
                      key=lambda e: list(e.absolute_path))
    if not problems:
        return None
    where = ".".join(str(p) for p in problems[0].absolute_path)
    return f"Invalid arguments: {where + ': ' if where else ''}{problems[0].message}"


def render_floorplan(args: Any, language: Language | None = None
                     ) -> tuple[bytes | str | None, str | None, dict[str, Any]]:
    """Render to PNG (bytes) or SVG (text): ``(image, mime type, result)``; image None on error."""
    language = language or default_language()
    problem = _bad_args("render_floorplan", args, language)
    if problem:
        return None, None, {"success": False, "errors": [{"message": problem}]}
    try:
        return _render(args, language)
    except Exception as exc:  # never let a rendering bug escape as a crash
        log.exception("floorplan rendering failed")
        return None, None, {"success": False,
                            "errors": [{"message": f"Rendering failed: {exc}"}]}


def _render(args: dict[str, Any], language: Language
            ) -> tuple[bytes | str | None, str | None, dict[str, Any]]:
    fmt = args.get("format", "png")
    analysis = analyze(args["dsl"], language)
    warnings = [w.to_dict() for w in analysis.warnings]
    if analysis.errors:
        result: dict[str, Any] = {"success": False,
                                  "errors": [e.to_dict() for e in analysis.errors]}
        if warnings:
            result["warnings"] = warnings
        return None, None, result
    plan = analysis.plan
    assert plan is not None  # a text without errors parsed
    all_floors = bool(args.get("renderAllFloors", False))
    index = int(args.get("floorIndex", 0))
    if plan.floors and not all_floors and index >= len(plan.floors):
        return None, None, {"success": False, "errors": [{
            "message": f"floorIndex {index} is out of range: the plan has "
                       f"{len(plan.floors)} floor(s), numbered from 0"}]}
    options = RenderOptions(width=int(args.get("width", 800)), height=int(args.get("height", 600)),
                            floor_index=index, all_floors=all_floors,
                            layout=args.get("multiFloorLayout", "sideBySide"),
                            min_text_px=MIN_TEXT_PX if fmt == "png" else 0.0,
                            glyph_text=fmt == "png")
    svg = render_svg(analysis, options)
    image: bytes | str = svg_to_png(svg) if fmt == "png" else svg
    size = _svg_size(svg)
    result = {"success": True, "format": fmt, "floorCount": len(plan.floors),
              "renderedFloor": "all" if all_floors else index,
              "imageSize": {"width": size[0], "height": size[1]},
              "rooms": rooms_metadata(analysis),
              "totalArea": num(sum(r.size[0] * r.size[1] for f in plan.floors
                                   for r in f.rooms if r.size))}
    if warnings:
        result["warnings"] = warnings
    return image, "image/png" if fmt == "png" else "image/svg+xml", result


def _svg_size(svg: str) -> tuple[int, int]:
    head = svg[:400]
    w = head.split(' width="', 1)[1].split('"', 1)[0]
    h = head.split(' height="', 1)[1].split('"', 1)[0]
    return int(w), int(h)


def rooms_of(dsl: str, language: Language | None = None) -> list[dict[str, Any]]:
    """The plan's rooms as render_floorplan lists them (name, position, size, sub-rooms),
    without drawing it; none when the text does not parse."""
    return rooms_metadata(analyze(dsl, language or default_language()))


def validate_floorplan(args: Any, language: Language | None = None) -> dict[str, Any]:
    """``{valid, errors, warnings?}``; valid means no errors (warnings allowed)."""
    language = language or default_language()
    problem = _bad_args("validate_floorplan", args, language)
    if problem:
        return {"valid": False, "errors": [{"type": "arguments", "message": problem}]}
    try:
        analysis = analyze(args["dsl"], language)
    except Exception as exc:
        log.exception("floorplan validation failed")
        return {"valid": False, "errors": [{"type": "internal",
                                            "message": f"Validation failed: {exc}"}]}
    result: dict[str, Any] = {"valid": analysis.valid,
                              "errors": [e.to_dict() for e in analysis.errors]}
    if analysis.warnings:
        result["warnings"] = [w.to_dict() for w in analysis.warnings]
    return result


def modify_floorplan(args: Any, language: Language | None = None) -> dict[str, Any]:
    """``{success, dsl, changes[{action,target,result,message}], errors?[{message,operation}]}``."""
    language = language or default_language()
    problem = _bad_args("modify_floorplan", args, language)
    if problem:
        dsl = args.get("dsl", "") if isinstance(args, dict) else ""
        return {"success": False, "dsl": dsl if isinstance(dsl, str) else "", "changes": [],
                "errors": [{"message": problem, "operation": None}]}
    try:
        return modify(args["dsl"], args["operations"], language)
    except Exception as exc:
        log.exception("floorplan modification failed")
        return {"success": False, "dsl": args["dsl"], "changes": [],
                "errors": [{"message": f"Modification failed: {exc}", "operation": None}]}


def apply_operation(dsl: str, action: str, parameters: dict[str, Any],
                    language: Language | None = None) -> dict[str, Any]:
    """Run one operation given flat parameters (as a page action receives them)."""
    params = dict(parameters) if isinstance(parameters, dict) else {}
    op: dict[str, Any] = {"action": action}
    definition = find_operation(action) if isinstance(action, str) else None
    if definition is not None and definition.takes_target:
        op["target"] = params.pop("target", None)
    op["params"] = params
    return modify_floorplan({"dsl": dsl, "operations": [op]}, language)
