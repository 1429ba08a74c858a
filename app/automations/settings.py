"""The settings automations read: app config first, then the environment, then a default."""

from __future__ import annotations

from app.core import config

DEFAULTS = {
    # How many automation effects in a row may cause another firing (a rule that triggers
    # itself, or two that trigger each other, stop there).
    "AUTOMATIONS_MAX_DEPTH": "3",
    # A rule that fires more often than this in one minute is paused and its owner told.
    "AUTOMATIONS_MAX_PER_MINUTE": "30",
    # How often each worker looks for schedules due and firings to carry out.
    "AUTOMATIONS_SWEEP_SECONDS": "1",
    # How far (seconds) an inbound webhook call's timestamp may be from now.
    "AUTOMATIONS_WEBHOOK_TOLERANCE": "300",
}


def get_float(name: str) -> float:
    try:
        return float(config.setting(name, DEFAULTS[name]))
    except ValueError:
        return float(DEFAULTS[name])


def get_int(name: str) -> int:
    return int(get_float(name))
