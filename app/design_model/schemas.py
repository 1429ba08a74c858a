"""Parameter and result schemas the design-model methods share, declared once.

Each method's ``@method(..., params=...)`` is built from these pieces, so a selector, a point
or ``dryRun`` means the same everywhere in the catalog (``rpc.discover``).
"""

from __future__ import annotations

from typing import Any

from app.design_model.registry import Param

Schema = dict[str, Any]

INT: Schema = {"type": "integer"}
NUM: Schema = {"type": "number"}
STR: Schema = {"type": "string", "minLength": 1}
BOOL: Schema = {"type": "boolean"}
IDS: Schema = {"type": "array", "items": INT}
UIDS: Schema = {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 120}}
CATEGORY: Schema = {"type": "string", "minLength": 1, "examples": [
    "OST_Walls", "Walls", "OST_StructuralFraming", "Structural Framing"]}

SELECTOR: Schema = {
    "type": "object", "minProperties": 1, "additionalProperties": False,
    "description": "Elements by intent: every key given must match; at least one key",
    "properties": {"category": CATEGORY, "typeName": STR, "levelName": STR, "level": STR,
                   "familyName": STR, "mark": STR}}
# A point or vector in mm: {x, y, z} (missing axes are 0) or [x, y, z].
VEC: Schema = {"anyOf": [
    {"type": "object", "properties": {"x": NUM, "y": NUM, "z": NUM}},
    {"type": "array", "items": NUM, "minItems": 3, "maxItems": 3, "x-axes": ["x", "y", "z"]}],
    "x-message": "must be {x, y, z} or [x, y, z]"}
# A length in mm, or a string with a unit: 25, '25mm', '2.5cm', '1in'.
LENGTH_PATTERN = r"^\s*-?\d+(\.\d+)?\s*(mm|cm|m|in|ft)?\s*$"
LENGTH: Schema = {"anyOf": [{"type": "number", "minimum": 0},
                            {"type": "string", "pattern": LENGTH_PATTERN}],
                  "x-message": "must be a length like 25, '25mm' or '1in'"}
GUARD: Schema = {"type": "object", "description": "The snapshot the caller edited; a stale one is "
                 "refused with STALE_GUARD", "properties": {
                     "snapshotStamp": {"type": "string", "maxLength": 64},
                     "geomHash": {"type": "string", "maxLength": 64}}}
# 4×4 row-major; its rows are checked by xform.parse, which names the bad one.
MATRIX: Schema = {"type": "array", "description": "4×4 row-major transform: [[4 numbers] × 4]"}

DRY_RUN = Param("dryRun", BOOL, "true: plan and report, change nothing")
CONFIRM = Param("confirm", BOOL, "must be true to create (or pass dryRun: true to preview)")
ELEMENT_ID = Param("elementId", INT, "One element by its id")
UNIQUE_ID = Param("uniqueId", {**STR, "maxLength": 200}, "One element by its uniqueId")
ELEMENT_IDS = Param("elementIds", IDS, "Several elements by id")
SELECTOR_PARAM = Param("selector", SELECTOR, "Elements by category, typeName, levelName, "
                                             "familyName, mark")
# How Revit-side methods name their targets: exactly one of these.
TARGETS = (ELEMENT_ID, UNIQUE_ID, ELEMENT_IDS, SELECTOR_PARAM)
TARGET_GROUP = ("elementId", "uniqueId", "elementIds", "selector")
REVIT_BASE_URL = Param("revitBaseUrl", {"type": "string", "maxLength": 500, "format": "uri"},
                       "Call this Revit /rpc instead of the embedded one (allow-listed hosts "
                       "only)")
RHINO_UIDS = Param("uniqueIds", UIDS, "Rhino objects by uniqueId (default: the selection)")


def ok_result(properties: dict[str, Schema], required: tuple[str, ...] = ()) -> Schema:
    """A result object: always ``ok``, plus the given fields."""
    return {"type": "object", "required": ["ok", *required],
            "properties": {"ok": BOOL, **properties}}


ELEMENT_IDENTITY: Schema = {"type": "object", "properties": {
    "elementId": INT, "uniqueId": STR, "category": STR, "categoryName": STR, "familyName": STR,
    "typeName": STR, "levelName": STR, "levelId": INT, "mark": STR}}
ITEMS: Schema = {"type": "array", "items": {"type": "object"}}
DRY_FLAG = {"dryRun": BOOL}
