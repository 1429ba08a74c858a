"""A schedule with real processes: two ``bin/worker`` processes share the database and both
look at the schedules every few tenths of a second; a rule due every minute fires once per
minute between them, and its effect is carried out once per firing."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from flask import Flask

from tests.automations.test_automations import add_rule, firings
from tests.notifications.test_deadlines_live import until
from tests.workflows.workers import start_worker, stop

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]  # real worker processes

SETTINGS = {"AUTOMATIONS_SWEEP_SECONDS": "0.1", "WORKFLOWS_WORKER": "off"}




def test_a_schedule_fires_once_per_period_across_two_workers(  # type: ignore[no-untyped-def]
        app: Flask, studio, tmp_path: Path, monkeypatch) -> None:
    from app.extensions import db
    from app.models.automations import Automation
    from app.models.base import utcnow

    for key, value in SETTINGS.items():
        monkeypatch.setitem(app.config, key, value)
    rule = add_rule(studio, name="Every minute", trigger="schedule", schedule="* * * * *",
                    effect="notify", text="tick at {{ at }}")
    with app.app_context():  # added a while ago: this minute is due at once
        row = db.session.query(Automation).filter_by(short_id=rule["id"]).one()
        row.created_at = utcnow() - timedelta(minutes=5)
        db.session.commit()
    workers = [start_worker(app, tmp_path, f"w{i}", **SETTINGS) for i in (1, 2)]
    try:
        until(lambda: any(r["status"] == "done" for r in firings(studio, rule)))
        time.sleep(3)  # both workers sweep this period many more times meanwhile
    finally:
        for worker in workers:
            stop(worker)
    rows = firings(studio, rule)
    periods = [r["trigger"] for r in rows]
    assert 1 <= len(rows) <= 2 and len(set(periods)) == len(periods), rows  # one per minute
    assert all(r["status"] == "done" and r["outcome"] == "told 1 member" for r in rows), rows
    ticks = [line for line in studio.get("/inbox").get_data(as_text=True).splitlines()
             if "tick at" in line]
    assert len(ticks) == len(rows), ticks
    for worker_log in ("w1.log", "w2.log"):
        assert "Traceback" not in (tmp_path / worker_log).read_text(errors="replace")
