"""The running app's settings and object, for code below the adapters.

Feature domain modules read their settings here instead of importing Flask: this is the one
place outside the web and MCP adapters that knows settings live in ``current_app.config``.
Outside an app context (a bare CLI helper, a unit test) the settings are empty and callers
fall back to the environment.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, MutableMapping
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from flask import Flask, current_app, has_app_context

from config import Setting, env
from config import base_url as default_base


def app_config() -> MutableMapping[str, Any]:
    """The current app's config, or an empty mapping outside an app context."""
    return current_app.config if has_app_context() else {}


def setting(name: str, default: str) -> str:
    """A feature's setting: the app's config, else the environment, else ``default`` (an empty
    value counts as unset, as an empty environment variable does)."""
    value = app_config().get(name)
    if value not in (None, ""):
        return str(value)
    env = os.environ.get(name)
    return env if env not in (None, "") else default


class Settings:
    """A feature's declared settings, each read through ``setting`` with its own default."""

    def __init__(self, *declared: Setting) -> None:
        self.declared = declared
        self._defaults = {s.name: s.default or "" for s in declared}

    def __iter__(self) -> Iterator[Setting]:
        return iter(self.declared)

    def get(self, name: str) -> str:
        return setting(name, self._defaults[name])

    def get_float(self, name: str) -> float:
        """The setting as a number; a value that is not one counts as the default."""
        try:
            return float(self.get(name))
        except ValueError:
            return float(self._defaults[name])

    def get_int(self, name: str) -> int:
        return int(self.get_float(name))

    def get_list(self, name: str) -> list[str]:
        """A comma list, lower-cased, without empty entries."""
        return [part.strip().lower() for part in self.get(name).split(",") if part.strip()]


@cache
def app_version() -> str:
    """This install's version of Harmonic (its package's; "dev" when it was never installed)."""
    try:
        return metadata.version("harmonic")
    except metadata.PackageNotFoundError:
        return "dev"


def in_app() -> bool:
    return has_app_context()


def app_object() -> Flask:
    """The app itself (not the context-local proxy), for a thread that pushes its own
    context; must be called inside an app context."""
    return current_app._get_current_object()  # type: ignore[attr-defined]


def project_root() -> Path:
    """The repository (or install) folder that holds ``app/``: relative settings such as
    WORKFLOWS_DIR are read from there."""
    return Path(current_app.root_path).parent


def base_url() -> str:
    """This app's public origin (``HARMONIC_BASE_URL``, default ``http://HOST:PORT``), without a
    trailing slash: the OAuth issuer and the start of every absolute URL the app writes. Never
    the request's ``Host``: a client can send any."""
    configured = str(app_config().get("HARMONIC_BASE_URL") or "").rstrip("/")
    if configured:
        return configured
    return default_base(None, env("HOST"), env("PORT"))
