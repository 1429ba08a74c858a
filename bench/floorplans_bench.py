"""Benchmark the floorplan pipeline on 10/100/500-room plans.

For each plan it measures, in the same run: the baseline (lark's raw LALR parse of the text with
the same grammar and parser settings, no tree processing), a bare lark parse (same grammar,
default settings) for context, parse + validate (model building, resolution, all checks), SVG
rendering, PNG rasterisation at 800 x 600 (of the SVG the tool rasterises) and the full
``render_floorplan`` tool call (PNG). It prints medians and the ratio of parse + validate to
the raw lark parse. Then it times ``modify_floorplan`` operations on the largest plan (each
call re-analyses the plan after every operation, so its floor is one parse + validate).
Beside the PNG stage, "blank png" rasterises an empty SVG of the same pixel size through the same
``svg_to_png``: the pixmap and the PNG encoding alone, a floor no SVG of ours can go under.
Last, in a fresh process, the resident memory (RSS) after 1, 10 and 100 PNG renders of the
largest plan (``render_floorplan``): it should stay flat from 10 to 100.

The stages are timed in turn within each round (interleaved), so load changes on a shared
machine hit all of them alike. The default clock is this process's CPU time, which a busy
machine disturbs far less than wall time; ``--clock wall`` measures elapsed time instead.

    .venv/bin/python bench/floorplans_bench.py [--quick | --smoke] [--repeat N]
                                               [--clock cpu|wall] [--relative] [--connections]
    .venv/bin/python bench/floorplans_bench.py --memory ROOMS RENDERS   (internal: one process)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from floorplans_plans import generate_plan  # noqa: E402
from lark import Lark  # noqa: E402

from app.floorplans import tools  # noqa: E402
from app.floorplans.language import default_language  # noqa: E402
from app.floorplans.render_png import svg_to_png  # noqa: E402
from app.floorplans.render_svg import RenderOptions, render_svg  # noqa: E402
from app.floorplans.validate import analyze  # noqa: E402

STAGES = ("lark bare", "lark raw", "parse+val", "svg", "png", "blank png", "tool png")


def measure(stages: dict[str, Callable[[], object]], repeat: int,
            clock: Callable[[], float]) -> dict[str, float]:
    """Median milliseconds per stage, the stages interleaved in every round."""
    for fn in stages.values():
        fn()  # warm up (caches, font loading)
    samples: dict[str, list[float]] = {name: [] for name in stages}
    for _ in range(repeat):
        for name, fn in stages.items():
            start = clock()
            fn()
            samples[name].append((clock() - start) * 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


def stages_for(text: str, bare: Lark) -> dict[str, Callable[[], object]]:
    language = default_language()
    analysis = analyze(text)
    assert analysis.valid, analysis.errors[:3]
    # As the tool draws a PNG: illegible text left out, labels as glyph outlines.
    svg = render_svg(analysis, RenderOptions(min_text_px=tools.MIN_TEXT_PX, glyph_text=True))
    head = svg.split(">", 1)[0]
    size = [head.split(f' {k}="', 1)[1].split('"', 1)[0] for k in ("width", "height")]
    blank = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{size[0]}" height="{size[1]}">'
             '<rect width="1" height="1" fill="#ffffff"/></svg>')
    return {
        "lark bare": lambda: bare.parse(text),
        "lark raw": lambda: language.parser.parse(text),
        "parse+val": lambda: analyze(text),
        "svg": lambda: render_svg(analysis, RenderOptions()),
        "png": lambda: svg_to_png(svg),
        "blank png": lambda: svg_to_png(blank),
        "tool png": lambda: tools.render_floorplan({"dsl": text}),
    }


def modify_stages(rooms: int) -> dict[str, Callable[[], object]]:
    """One ``modify_floorplan`` call per operation kind on the ``rooms``-room plan."""
    text = generate_plan(rooms)
    mid = f"Room_{int(rooms ** 0.5) // 2}_1"

    def call(*operations: dict[str, object]) -> Callable[[], object]:
        def run() -> object:
            out = tools.modify_floorplan({"dsl": text, "operations": list(operations)})
            assert out["success"], out.get("errors")
            return out
        return run

    far = {"x": 10000, "y": 10000}
    return {
        "resize_room": call({"action": "resize_room", "target": mid,
                             "params": {"width": 10, "height": 7}}),
        "move_room": call({"action": "move_room", "target": mid, "params": far}),
        "rename_room": call({"action": "rename_room", "target": mid,
                             "params": {"newName": "Renamed"}}),
        "set_label": call({"action": "set_label", "target": mid, "params": {"label": "new"}}),
        "add_room": call({"action": "add_room", "params": {
            "name": "Annex", "position": far, "size": {"width": 5, "height": 5}}}),
        "5 operations in one call": call(
            {"action": "set_label", "target": mid, "params": {"label": "a"}},
            {"action": "resize_room", "target": mid, "params": {"width": 10, "height": 7}},
            {"action": "rename_room", "target": mid, "params": {"newName": "Renamed"}},
            {"action": "move_room", "target": "Renamed", "params": far},
            {"action": "add_room", "params": {"name": "Annex", "position": {"x": 20000, "y": 0},
                                              "size": {"width": 5, "height": 5}}}),
        "parse+val (the floor)": lambda: analyze(text),
    }


def rss_mb() -> float:
    """This process's resident memory in MiB (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
    except OSError:
        return 0.0


def memory_child(rooms: int, renders: int) -> None:
    """Render the plan as PNG ``renders`` times; print the RSS after 1, 10, ... as JSON."""
    text = generate_plan(rooms)
    marks = {1, 10, renders}
    out = {"start": rss_mb()}
    for n in range(1, renders + 1):
        result = tools.render_floorplan({"dsl": text})
        assert result, "render failed"
        if n in marks:
            out[str(n)] = rss_mb()
    print(json.dumps(out))


def memory(rooms: int, renders: int) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--memory", str(rooms), str(renders)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--smoke", action="store_true", help="one repeat, small plans (CI)")
    ap.add_argument("--repeat", type=int, default=None)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    ap.add_argument("--relative", action="store_true", help="relative placement for rooms")
    ap.add_argument("--connections", action="store_true", help="doors between neighbours")
    ap.add_argument("--memory", nargs=2, type=int, metavar=("ROOMS", "RENDERS"))
    args = ap.parse_args()
    if args.memory:
        memory_child(*args.memory)
        return
    args.repeat = args.repeat or harness.size(9, 3, 1)
    sizes = harness.size((10, 100, 500), (10, 100, 500), (10, 50))
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    language = default_language()
    bare = Lark(language.grammar_text, parser="lalr")
    print(" ".join(f"{h:>9}" for h in ("rooms", *STAGES[:3], "ratio", *STAGES[3:]))
          + f"   (median ms of {args.repeat}, {args.clock} clock)")
    for rooms in sizes:
        text = generate_plan(rooms, args.relative, args.connections)
        got = measure(stages_for(text, bare), args.repeat, clock)
        ratio = got["parse+val"] / got["lark raw"]
        cells = [f"{got[s]:>9.2f}" for s in STAGES]
        print(f"{rooms:>9} " + " ".join(cells[:3]) + f" {ratio:>9.2f} " + " ".join(cells[3:]))
    rooms = sizes[-1]
    got = measure(modify_stages(rooms), args.repeat, clock)
    floor = got["parse+val (the floor)"]
    harness.print_table(
        f"modify_floorplan on the {rooms}-room plan (median ms of {args.repeat}, "
        f"{args.clock} clock)", ["operation", "ms", "÷ parse+val"],
        [[name, f"{ms:.2f}", f"{ms / floor:.2f}"] for name, ms in got.items()])
    renders = harness.size(100, 100, 10)
    mem = memory(rooms, renders)
    growth = mem[str(renders)] - mem["10"]
    harness.print_table(
        f"Resident memory over {renders} PNG renders of the {rooms}-room plan "
        "(render_floorplan, one fresh process, MiB)",
        ["at start", "after 1", "after 10", f"after {renders}", f"10 → {renders}"],
        [[f"{mem['start']:.1f}", f"{mem['1']:.1f}", f"{mem['10']:.1f}",
          f"{mem[str(renders)]:.1f}", f"{growth:+.1f}"]])
    harness.print_footer()


if __name__ == "__main__":
    main()
