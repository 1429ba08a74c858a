"""The design model: Revit-side elements and the Rhino-side objects imported from them.

``DesignElement`` is one element of the (simulated) Revit document: identity columns that
selectors match on, parameters with units, and a geometry snapshot kept as block-local vertices
(feet) plus a placement ``transform`` (4×4, feet), so moving an element only rewrites the
transform. ``RhinoObject`` is what Rhino holds after an import: the mesh in millimetres, the
baseline transform B captured at import, the current transform C a person edits, the guard
(snapshot stamp + geometry hash) the commit sends back, and the locked/selected flags.

Both carry a ``model`` name so one database can hold several models; both use SQLAlchemy's
version counter so two concurrent writers to one row cannot both win silently.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Model, UTCDateTime, Uuid, utcnow

Matrix = list[list[float]]


class DesignElement(Model):
    __tablename__ = "design_elements"
    __table_args__ = (
        UniqueConstraint("model", "element_id", name="uq_design_elements_model_element_id"),
        UniqueConstraint("model", "unique_id", name="uq_design_elements_model_unique_id"),
        Index("ix_design_elements_model_category", "model", "category"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    model: Mapped[str] = mapped_column(String(80), nullable=False)
    element_id: Mapped[int] = mapped_column(Integer, nullable=False)
    unique_id: Mapped[str] = mapped_column(String(120), nullable=False)
    # "instance" for placed elements and levels, "type" for element types (wall types, ...).
    kind: Mapped[str] = mapped_column(String(16), nullable=False, default="instance")
    category: Mapped[str] = mapped_column(String(80), nullable=False)
    family: Mapped[str] = mapped_column(String(120), nullable=False, default="")
    type_name: Mapped[str] = mapped_column(String(120), nullable=False, default="")
    name: Mapped[str] = mapped_column(String(120), nullable=False, default="")
    level: Mapped[str | None] = mapped_column(String(80))
    mark: Mapped[str | None] = mapped_column(String(80))
    # {name: {"value": ..., "units": "mm" | None}}
    parameters: Mapped[dict[str, Any]] = mapped_column(JSON, nullable=False, default=dict)
    # Block-local location: {"curve": [p0, p1]} or {"point": p}, feet.
    location: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    vertices: Mapped[list[list[float]]] = mapped_column(JSON, nullable=False, default=list)
    submeshes: Mapped[list[dict[str, Any]]] = mapped_column(JSON, nullable=False, default=list)
    materials: Mapped[list[dict[str, Any]]] = mapped_column(JSON, nullable=False, default=list)
    transform: Mapped[Matrix] = mapped_column(JSON, nullable=False)
    snapshot_stamp: Mapped[str] = mapped_column(String(64), nullable=False)
    geom_hash: Mapped[str] = mapped_column(String(64), nullable=False)
    selected: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    version: Mapped[int] = mapped_column(Integer, nullable=False)

    __mapper_args__ = {"version_id_col": version}


class RhinoObject(Model):
    __tablename__ = "design_rhino_objects"
    __table_args__ = (
        UniqueConstraint("model", "unique_id", name="uq_design_rhino_objects_model_unique_id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    model: Mapped[str] = mapped_column(String(80), nullable=False)
    unique_id: Mapped[str] = mapped_column(String(120), nullable=False)
    element_id: Mapped[int | None] = mapped_column(Integer)
    vertices: Mapped[list[list[float]]] = mapped_column(JSON, nullable=False)  # block-local, mm
    submeshes: Mapped[list[dict[str, Any]]] = mapped_column(JSON, nullable=False)
    materials: Mapped[list[dict[str, Any]]] = mapped_column(JSON, nullable=False)
    baseline: Mapped[Matrix] = mapped_column(JSON, nullable=False)  # B, mm
    current: Mapped[Matrix] = mapped_column(JSON, nullable=False)  # C, mm
    snapshot_stamp: Mapped[str | None] = mapped_column(String(64))
    geom_hash: Mapped[str | None] = mapped_column(String(64))
    # The Revit endpoint it came from (None: the embedded one); re-checked on every use.
    source_url: Mapped[str | None] = mapped_column(String(500))
    locked: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    selected: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    imported_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utcnow)
    version: Mapped[int] = mapped_column(Integer, nullable=False)

    __mapper_args__ = {"version_id_col": version}
