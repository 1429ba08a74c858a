"""Generate benchmark floorplans: an n-room grid of 10 x 8 rooms, like the reference's cases.

``python bench/floorplans_plans.py 100 > rooms-100.floorplan`` writes one plan; ``relative``
places every room but the first relative to its neighbour, ``connections`` adds a door between
horizontal neighbours.
"""

from __future__ import annotations

import math
import sys

WALL_PATTERNS = (
    "top: solid, right: door, bottom: window, left: door",
    "top: door, right: window, bottom: open, left: solid",
    "top: window, right: open, bottom: solid, left: open",
    "top: open, right: solid, bottom: door, left: window",
)


def generate_plan(rooms: int, relative: bool = False, connections: bool = False) -> str:
    cols = math.ceil(math.sqrt(rooms))
    lines = ["floorplan", "    floor f1 {"]
    doors = []
    for i in range(rooms):
        r, c = divmod(i, cols)
        name = f"Room_{r}_{c}"
        if relative and i:
            place = f"right-of Room_{r}_{c - 1}" if c else f"below Room_{r - 1}_{c}"
            line = f"        room {name} size (10 x 8) walls [{WALL_PATTERNS[i % 4]}] {place}"
        else:
            line = (f"        room {name} at ({c * 10},{r * 8}) size (10 x 8) "
                    f"walls [{WALL_PATTERNS[i % 4]}]")
        if i % 3 == 0:
            line += f' label "Room {r}-{c}"'
        lines.append(line)
        if connections and c:
            doors.append(f"connect Room_{r}_{c - 1}.right to {name}.left door")
    lines.append("    }")
    lines.extend(doors)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(generate_plan(int(sys.argv[1]) if len(sys.argv) > 1 else 100,
                                   relative="relative" in sys.argv[2:],
                                   connections="connections" in sys.argv[2:]))
