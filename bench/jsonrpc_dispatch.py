"""What jsonrpcserver costs the design-model server: one call dispatched against the same method
called directly, beside the model call's own cost, in the same run.

    .venv/bin/python bench/jsonrpc_dispatch.py [--quick | --smoke]

In-process, in an app context, on a fresh SQLite instance with the design-model demo loaded.
For a no-op method (added to the table for this run: the dispatch cost alone), a trivial one
(``get_selected_element_ids``: one small query) and a typical one (``get_walls`` with a type
filter: the query and the serialization of its walls):

- ``direct``: ``METHODS[name](ctx, Params(params))``, the method alone (the baseline);
- ``rpc.handle``: the core's request check, jsonrpcserver's ``dispatch_to_response`` (method
  lookup, argument binding, Success/Error), the transaction rules and the call log, as
  ``/design-model/rpc`` and ``bin/model-server`` run it;
- ``handle_body``: the same from the raw bytes to the JSON answer (parse and serialize too);
- ``jsonrpcserver + schema``: jsonrpcserver's own ``dispatch`` with its default jsonschema
  validator, which ``rpc`` turns off (the core checks requests item by item instead).

Goal: dispatch adds less than 10% to a typical model call.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

METHODS_MEASURED = {
    "no-op (no database)": ("bench_noop", {"x": 1}),
    "trivial: get_selected_element_ids": ("get_selected_element_ids", {}),
    "typical: get_walls": ("get_walls", {"typeName": "RC150"}),
}


def main() -> None:
    parser = harness.arguments(__doc__, postgres=False)
    parser.parse_args()

    inst = harness.make_instance()
    app = harness.app_for(inst)
    from jsonrpcserver import dispatch

    from app.actions.effects import READ
    from app.design_model import loader, rpc, settings
    from app.design_model.protocol import Params
    from app.design_model.registry import METHODS, Ctx, method
    from app.extensions import db

    n = harness.size(4000, 1000, 20)
    rows: list[list[str]] = []
    overheads: dict[str, float] = {}
    method("bench_noop", READ, "does nothing (the dispatch's cost alone)")(
        lambda ctx, p: {"ok": True})
    rpc.TABLE["bench_noop"] = rpc._bind("bench_noop", METHODS["bench_noop"])
    with app.app_context():
        conf = settings.current()
        loader.load_demo(db.session, conf.model, reset=True)
        db.session.commit()
        for label, (name, params) in METHODS_MEASURED.items():
            payload = {"jsonrpc": "2.0", "id": 1, "method": name, "params": params}
            raw = json.dumps(payload).encode()

            def direct(name: str = name, params: dict[str, Any] = params) -> Any:
                ctx = Ctx(model=conf.model, session=db.session,
                          allowed_upstreams=conf.allowed_upstreams,
                          upstream_timeout=conf.upstream_timeout)
                return METHODS[name](ctx, Params(params))

            answer = rpc.handle(payload)
            assert "result" in answer and answer["result"] == direct(), answer
            schema_answer = json.loads(dispatch(raw.decode(), rpc.TABLE,
                                                context=rpc._Call(None)))
            assert schema_answer["result"] == answer["result"], schema_answer
            calls = {
                "direct": direct,
                "rpc.handle": lambda payload=payload: rpc.handle(payload),
                "handle_body": lambda raw=raw: rpc.handle_body(raw),
                "jsonrpcserver + schema": lambda raw=raw: dispatch(
                    raw.decode(), rpc.TABLE, context=rpc._Call(None)),
            }
            samples = harness.interleaved(calls, rounds=5, per_round=max(n // 5, 1))
            base = samples["direct"].p50 * 1000
            for row, sample in samples.items():
                us = sample.p50 * 1000
                rows.append([label, row, f"{us:.1f}",
                             "—" if row == "direct" else f"{us - base:+.1f}",
                             "—" if row == "direct" else f"{(us - base) / base * 100:+.0f}%"])
            overheads[label] = (samples["rpc.handle"].p50 * 1000 - base) / base
    harness.print_table("Design-model call: jsonrpcserver dispatch against a direct call "
                        "(µs per call, median)",
                        ["method", "path", "µs", "added µs", "added"], rows)
    typical = overheads["typical: get_walls"]
    print(f"\nDispatch (rpc.handle) adds {typical * 100:.0f}% to a typical model call "
          f"(goal < 10%: {harness.goal(typical < 0.10)}).")
    harness.print_footer()


if __name__ == "__main__":
    main()
