"""MCP tasks (the ``io.modelcontextprotocol/tasks`` extension): one row per task, so a task
created by one server process is answered (``tasks/get``), updated and cancelled by any other,
and run by whichever worker leases its queued job (``app.mcp.tasks``).

JSON values are stored as text, as the other MCP tables do.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Model, UTCDateTime, Uuid, utcnow
from app.models.provenance import ActsInSession, MadeBy


class McpTask(MadeBy, ActsInSession, Model):
    __tablename__ = "mcp_tasks"

    # The taskId itself: url-safe characters from secrets.token_urlsafe (unguessable).
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"), index=True)
    scopes: Mapped[str] = mapped_column(String(200), default="", nullable=False)
    # The kind of its creator's identity (app.core.identity.KINDS); its token and grant are
    # ``made_by_*``: the task runs later as that identity.
    caller_kind: Mapped[str] = mapped_column(String(16), default="person", nullable=False)
    tool: Mapped[str] = mapped_column(String(128), nullable=False)
    arguments: Mapped[str] = mapped_column(Text, default="{}", nullable=False)
    # working | input_required | completed | failed | cancelled
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    status_message: Mapped[str | None] = mapped_column(Text)
    progress: Mapped[float | None] = mapped_column(Float)
    total: Mapped[float | None] = mapped_column(Float)
    # The questions still open (SEP-2322 inputRequests) and the answers gathered so far.
    input_requests: Mapped[str] = mapped_column(Text, default="{}", nullable=False)
    input_responses: Mapped[str] = mapped_column(Text, default="{}", nullable=False)
    client_capabilities: Mapped[str] = mapped_column(Text, default="{}", nullable=False)
    result: Mapped[str | None] = mapped_column(Text)  # the tool's result (completed)
    error: Mapped[str | None] = mapped_column(Text)  # a JSON-RPC error object (failed)
    run_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)  # the newest queued run of it
    ttl_ms: Mapped[int] = mapped_column(Integer, nullable=False)
    poll_ms: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, index=True)
