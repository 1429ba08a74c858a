"""Environment settings of the design-model server, read once per app.

``HARMONIC_DESIGN_MODEL``            model name the server works on (default ``default``)
``HARMONIC_DESIGN_UPSTREAMS``        allow-list for ``revitBaseUrl`` (default ``loopback``)
``HARMONIC_DESIGN_UPSTREAM_TIMEOUT`` seconds per upstream call (default 10)
``HARMONIC_DESIGN_MODEL_LOG``        file that receives one JSON line per call (default: none)
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from app.core.config import app_config, in_app
from app.design_model import upstream

ENV_MODEL = "HARMONIC_DESIGN_MODEL"
ENV_LOG = "HARMONIC_DESIGN_MODEL_LOG"
CONFIG_KEY = "DESIGN_MODEL_SETTINGS"


@dataclass(frozen=True)
class Settings:
    model: str = "default"
    allowed_upstreams: tuple[str, ...] = ("loopback",)
    upstream_timeout: float = 10.0
    log_path: str | None = None

    @classmethod
    def from_env(cls) -> Settings:
        return cls(model=os.environ.get(ENV_MODEL) or "default",
                   allowed_upstreams=upstream.allowed_from_env(),
                   upstream_timeout=upstream.timeout_from_env(),
                   log_path=os.environ.get(ENV_LOG) or None)


def configure(config: MutableMapping[str, Any]) -> Settings:
    """Settings for an app's ``config``: an explicit ``DESIGN_MODEL_SETTINGS`` wins, else the
    environment (read once, then kept in the config)."""
    settings = config.get(CONFIG_KEY)
    if not isinstance(settings, Settings):
        settings = Settings.from_env()
        config[CONFIG_KEY] = settings
    return settings


def current() -> Settings:
    if in_app():
        return configure(app_config())
    return Settings.from_env()
