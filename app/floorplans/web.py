"""Wiring floorplans into the app: the pages and their actions, and the MCP tools/resources."""

from __future__ import annotations

import importlib

from flask import Flask

from app.floorplans import pages

# Imported for their registrations: the actions (one per modify operation among them) and the
# MCP tools and resources; ``pages`` also brings the "floorplan" item kind (``store``);
# ``editing`` adds the live preview and the version pages to the pages' blueprint.
REGISTERS = ("app.floorplans.actions", "app.floorplans.mcp_tools", "app.floorplans.editing")


def init_app(flask_app: Flask) -> None:
    for name in REGISTERS:
        importlib.import_module(name)

    flask_app.register_blueprint(pages.bp)
