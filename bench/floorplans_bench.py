"""Benchmark the floorplan pipeline on 10/100/500-room plans.

For each plan it measures, in the same run: the baseline (lark's raw LALR parse of the text with
the same grammar and parser settings, no tree processing), a bare lark parse (same grammar,
default settings) for context, parse + validate (model building, resolution, all checks), SVG
rendering, PNG rasterisation at 800 x 600 (of the SVG the tool rasterises) and the full
``render_floorplan`` tool call (PNG). It prints medians and the ratio of parse + validate to
the raw lark parse.

The stages are timed in turn within each round (interleaved), so load changes on a shared
machine hit all of them alike. The default clock is this process's CPU time, which a busy
machine disturbs far less than wall time; ``--clock wall`` measures elapsed time instead.

    .venv/bin/python bench/floorplans_bench.py [--repeat N] [--clock cpu|wall]
                                               [--relative] [--connections]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from floorplans_plans import generate_plan  # noqa: E402
from lark import Lark  # noqa: E402

from app.floorplans import tools  # noqa: E402
from app.floorplans.language import default_language  # noqa: E402
from app.floorplans.render_png import svg_to_png  # noqa: E402
from app.floorplans.render_svg import RenderOptions, render_svg  # noqa: E402
from app.floorplans.validate import analyze  # noqa: E402

STAGES = ("lark bare", "lark raw", "parse+val", "svg", "png", "tool png")


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
    svg = render_svg(analysis, RenderOptions(min_text_px=tools.MIN_TEXT_PX))  # as for PNG
    return {
        "lark bare": lambda: bare.parse(text),
        "lark raw": lambda: language.parser.parse(text),
        "parse+val": lambda: analyze(text),
        "svg": lambda: render_svg(analysis, RenderOptions()),
        "png": lambda: svg_to_png(svg),
        "tool png": lambda: tools.render_floorplan({"dsl": text}),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    ap.add_argument("--relative", action="store_true", help="relative placement for rooms")
    ap.add_argument("--connections", action="store_true", help="doors between neighbours")
    args = ap.parse_args()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    language = default_language()
    bare = Lark(language.grammar_text, parser="lalr")
    print(" ".join(f"{h:>9}" for h in ("rooms", *STAGES[:3], "ratio", *STAGES[3:]))
          + f"   (median ms of {args.repeat}, {args.clock} clock)")
    for rooms in (10, 100, 500):
        text = generate_plan(rooms, args.relative, args.connections)
        got = measure(stages_for(text, bare), args.repeat, clock)
        ratio = got["parse+val"] / got["lark raw"]
        cells = [f"{got[s]:>9.2f}" for s in STAGES]
        print(f"{rooms:>9} " + " ".join(cells[:3]) + f" {ratio:>9.2f} " + " ".join(cells[3:]))


if __name__ == "__main__":
    main()
