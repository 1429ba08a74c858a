"""The settings automations read: app config first, then the environment, then a default."""

from __future__ import annotations

from app.core.config import Settings
from config import Setting

SETTINGS = Settings(
    Setting("AUTOMATIONS_MAX_DEPTH", "3",
            "how many automation effects in a row may cause another firing (a rule that "
            "triggers itself, or two that trigger each other, stop there)"),
    Setting("AUTOMATIONS_MAX_PER_MINUTE", "30",
            "a rule that fires more often than this in one minute is paused and its owner told"),
    Setting("AUTOMATIONS_SWEEP_SECONDS", "1",
            "how often each worker looks for schedules due and firings to carry out"),
    Setting("AUTOMATIONS_WEBHOOK_TOLERANCE", "300",
            "how far (seconds) an inbound webhook call's timestamp may be from now"),
)
get_float, get_int = SETTINGS.get_float, SETTINGS.get_int
