"""Modification handlers for rooms and connections (see ``operations`` for the registry)."""

from __future__ import annotations

from typing import Any

from .edit_context import (
    Context,
    OperationError,
    check_new_name,
    child_indent,
    clause_end,
    edited,
    references_to,
    relative_text,
    walls_text,
)
from .text_edit import (
    Edit,
    delete_clause,
    delete_statement,
    indent_before,
    insert_line_before,
    number,
    quote,
)


def add_room(ctx: Context, _target: str | None, p: dict[str, Any]) -> tuple[str, str]:
    name = p["name"]
    check_new_name(ctx, name)
    if p.get("position") is None and p.get("relativePosition") is None:
        raise OperationError("Room must have either 'position' or 'relativePosition'")
    plan = ctx.plan
    parent = ctx.room(p["parent"]) if p.get("parent") else None
    kind = "sub-room" if parent is not None else "room"
    line = f"{kind} {name}"
    if p.get("position") is not None:
        line += f" at ({number(p['position']['x'])},{number(p['position']['y'])})"
    line += f" size ({number(p['size']['width'])} x {number(p['size']['height'])})"
    if p.get("walls"):
        line += " " + walls_text(ctx, p["walls"])
    if p.get("relativePosition") is not None:
        line += " " + relative_text(p["relativePosition"])
    if p.get("height") is not None:
        line += f" height {number(p['height'])}"
    if p.get("label") is not None:
        try:
            line += f" label {quote(p['label'])}"
        except ValueError as exc:
            raise OperationError(str(exc)) from exc
    text = ctx.text
    if parent is not None:
        if parent.composed_span is not None:
            edit = insert_line_before(text, parent.composed_span.end - 1, line,
                                      child_indent(text, parent.sub_rooms))
        else:
            base = indent_before(text, parent.span.start) or ""
            edit = Edit(clause_end(parent), clause_end(parent),
                        f" composed of [\n{base}  {line}\n{base}]")
        return edited(ctx, [edit]), f"Added sub-room {name} to {parent.name}"
    if p.get("floor"):
        floor = next((f for f in plan.floors if f.name == p["floor"]), None)
        if floor is None:
            raise OperationError(f'Floor "{p["floor"]}" not found')
    elif plan.floors:
        floor = plan.floors[0]
    else:
        pos = plan.keyword_span.end
        edit = Edit(pos, pos, f"\n  floor f1 {{\n    {line}\n  }}")
        return edited(ctx, [edit]), f"Added room {name} on a new floor f1"
    edit = insert_line_before(text, floor.span.end - 1, line, child_indent(text, floor.rooms))
    return edited(ctx, [edit]), f"Added room {name} to floor {floor.name}"


def remove_room(ctx: Context, target: str | None, p: dict[str, Any]) -> tuple[str, str]:
    room = ctx.room(target)
    gone = [room, *room.descendants()]
    names = {r.name for r in gone}
    ref_rooms, ref_conns = references_to(ctx, names, {id(r) for r in gone})
    # references_to finds rooms by their relative clause, so each has one.
    relatives = [(r, r.relative) for r in ref_rooms if r.relative is not None]
    if (ref_rooms or ref_conns) and not p.get("removeReferences"):
        parts = [f"{r.name} ({rel.direction} {rel.reference}, line {rel.span.line})"
                 for r, rel in relatives]
        parts += [f"connection on line {c.span.line}" for c in ref_conns]
        raise OperationError(
            f'Room "{target}" is still referenced by: {"; ".join(parts)}. Removing it would '
            f"leave these references dangling; pass removeReferences: true to also remove them "
            f"(relative placements become explicit positions, connections are deleted)")
    edits = [delete_statement(ctx.text, room.span)]
    layout = ctx.analysis.layout
    fixed = []
    for ref, rel in relatives:
        placed = layout.get(ref) if layout else None
        if ref.at is not None:
            edits.append(delete_clause(ctx.text, rel.span))
        elif placed is not None:
            lx, ly = placed.local
            edits.append(Edit(rel.span.start, rel.span.end,
                              f"at ({number(lx)},{number(ly)})"))
        else:
            edits.append(delete_clause(ctx.text, rel.span))
        fixed.append(ref.name)
    for conn in ref_conns:
        edits.append(delete_statement(ctx.text, conn.span))
    msg = f"Removed {target}"
    if len(gone) > 1:
        msg += f" and its sub-rooms {', '.join(r.name for r in gone[1:])}"
    if fixed:
        msg += f"; gave {', '.join(fixed)} explicit positions"
    if ref_conns:
        msg += f"; removed {len(ref_conns)} connection(s)"
    return edited(ctx, edits), msg


def resize_room(ctx: Context, target: str | None, p: dict[str, Any]) -> tuple[str, str]:
    room = ctx.room(target)
    w, h = number(p["width"]), number(p["height"])
    if room.size_number_spans:
        sw, sh = room.size_number_spans
        edits = [Edit(sw.start, sw.end, w), Edit(sh.start, sh.end, h)]
    else:
        edits = [Edit(room.name_span.end, room.name_span.end, f" size ({w} x {h})")]
    return edited(ctx, edits), f"Resized to {w} x {h}"


def move_room(ctx: Context, target: str | None, p: dict[str, Any]) -> tuple[str, str]:
    room = ctx.room(target)
    x, y = number(p["x"]), number(p["y"])
    edits: list[Edit] = []
    if room.at_number_spans:
        sx, sy = room.at_number_spans
        edits += [Edit(sx.start, sx.end, x), Edit(sy.start, sy.end, y)]
        msg = f"Moved to ({x}, {y})"
    else:
        edits.append(Edit(room.name_span.end, room.name_span.end, f" at ({x},{y})"))
        msg = f"Added position ({x}, {y})"
    if room.relative is not None:
        # An explicit position wins over relative placement; drop the clause it overrides.
        edits.append(delete_clause(ctx.text, room.relative.span))
        msg += f"; removed relative placement {room.relative.direction} " \
               f"{room.relative.reference}"
    return edited(ctx, edits), msg


def rename_room(ctx: Context, target: str | None, p: dict[str, Any]) -> tuple[str, str]:
    room = ctx.room(target)
    new = p["newName"]
    if new == target:
        raise OperationError(f'Room "{target}" already has that name')
    check_new_name(ctx, new)
    edits = [Edit(room.name_span.start, room.name_span.end, new)]
    count = 0
    for other in ctx.plan.all_rooms():
        if other.relative and other.relative.reference == target:
            sp = other.relative.reference_span
            edits.append(Edit(sp.start, sp.end, new))
            count += 1
    for conn in ctx.plan.connections:
        for ref in (conn.source.room, conn.target.room, conn.opens_into):
            if ref is not None and not ref.is_outside and ref.name == target:
                edits.append(Edit(ref.span.start, ref.span.end, new))
                count += 1
    msg = f"Renamed to {new}"
    if count:
        msg += f" and updated {count} reference(s)"
    return edited(ctx, edits), msg


def update_walls(ctx: Context, target: str | None, p: dict[str, Any]) -> tuple[str, str]:
    room = ctx.room(target)
    if not p:
        raise OperationError("Give at least one wall side to update")
    edits: list[Edit] = []
    added: dict[str, str] = {}
    for side in ctx.vocab.wall_sides:
        if side not in p:
            continue
        specs = [s for s in room.walls if s.side == side]
        for spec in specs:
            edits.append(Edit(spec.type_span.start, spec.type_span.end, p[side]))
        if not specs:
            added[side] = p[side]
    if added:
        if room.walls:
            end = room.walls[-1].span.end
            text = "".join(f", {side}: {wtype}" for side, wtype in added.items())
            edits.append(Edit(end, end, text))
        else:
            anchor = room.size_span.end if room.size_span else room.name_span.end
            edits.append(Edit(anchor, anchor, " " + walls_text(ctx, added)))
    changed = ", ".join(f"{side}: {p[side]}" for side in ctx.vocab.wall_sides if side in p)
    return edited(ctx, edits), f"Walls set to {changed}"


def set_label(ctx: Context, target: str | None, p: dict[str, Any]) -> tuple[str, str]:
    room = ctx.room(target)
    label = p.get("label")
    if not label:
        if room.label_span is None:
            return ctx.text, "Room has no label"
        return edited(ctx, [delete_clause(ctx.text, room.label_span)]), "Removed label"
    try:
        literal = quote(label)
    except ValueError as exc:
        raise OperationError(str(exc)) from exc
    if room.label_string_span is not None:
        sp = room.label_string_span
        return edited(ctx, [Edit(sp.start, sp.end, literal)]), "Updated existing label"
    end = clause_end(room)
    return edited(ctx, [Edit(end, end, f" label {literal}")]), "Added label"


def add_connection(ctx: Context, _target: str | None, p: dict[str, Any]) -> tuple[str, str]:
    ends = []
    for key in ("from", "to"):
        ref = p[key]
        if ref["room"] != "outside":
            ctx.room(ref["room"])
        ends.append(ref["room"] + (f".{ref['wall']}" if ref.get("wall") else ""))
    line = f"connect {ends[0]} to {ends[1]} {p.get('doorType', ctx.vocab.door_types[0])}"
    if p.get("position") is not None:
        line += f" at {number(p['position'])}%"
    if p.get("opensInto"):
        line += f" opens into {p['opensInto']}"
    if p.get("swing"):
        line += f" swing: {p['swing']}"
    conns = ctx.plan.connections
    text = ctx.text
    if conns:
        last = conns[-1].span
        indent = indent_before(text, last.start)
        sep = "\n" + indent if indent is not None else " "
        edit = Edit(last.end, last.end, sep + line)
    else:
        sep = "" if text.endswith("\n") else "\n"
        edit = Edit(len(text), len(text), f"{sep}{line}\n")
    return edited(ctx, [edit]), f"Connected {ends[0]} to {ends[1]}"


def remove_connection(ctx: Context, _target: str | None, p: dict[str, Any]
                      ) -> tuple[str, str]:
    pair = {p["from"], p["to"]}
    found = [c for c in ctx.plan.connections
             if {c.source.room.name, c.target.room.name} == pair]
    if not found:
        raise OperationError(f'No connection between "{p["from"]}" and "{p["to"]}"')
    edits = [delete_statement(ctx.text, c.span) for c in found]
    return edited(ctx, edits), f"Removed {len(found)} connection(s)"
