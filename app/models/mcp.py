"""MCP state that must survive any one process: sessions with their navigation state,
server-to-client requests awaiting the client's answer, cancellations, and the tool-call audit.
Resource updates reach sessions from the change-event outbox (``app.models.changes``).

Because these live in the database, any gunicorn process or thread can serve any request of
any session.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Model, UTCDateTime, Uuid, utcnow


class McpSession(Model):
    __tablename__ = "mcp_sessions"

    # The Mcp-Session-Id itself: 43 url-safe characters from secrets.token_urlsafe(32).
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"), index=True)
    token_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    # The OAuth grant behind its token (its access tokens come and go; the grant stays).
    grant_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, index=True)
    protocol_version: Mapped[str] = mapped_column(String(16), nullable=False)
    client_name: Mapped[str] = mapped_column(String(200), default="", nullable=False)
    client_capabilities: Mapped[str] = mapped_column(Text, default="{}", nullable=False)
    log_level: Mapped[str] = mapped_column(String(16), default="info", nullable=False)
    current_path: Mapped[str | None] = mapped_column(Text)
    subscriptions: Mapped[str] = mapped_column(Text, default="[]", nullable=False)
    # The id of the newest change event (change_events) this session has been told about;
    # set when it first subscribes, None while it subscribes to nothing.
    events_seen: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class McpClientRequest(Model):
    """A request we sent to the client (elicitation, sampling); ``response`` is its answer."""

    __tablename__ = "mcp_client_requests"
    __table_args__ = (UniqueConstraint("session_id", "request_id",
                                       name="uq_mcp_client_requests_session_request"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    session_id: Mapped[str] = mapped_column(ForeignKey("mcp_sessions.id"), nullable=False)
    request_id: Mapped[str] = mapped_column(String(64), nullable=False)
    method: Mapped[str] = mapped_column(String(64), nullable=False)
    response: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    answered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class McpCancellation(Model):
    """notifications/cancelled as received by any process; the running call polls for it."""

    __tablename__ = "mcp_cancellations"
    __table_args__ = (Index("ix_mcp_cancellations_session_request", "session_id", "request_id"),)

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    session_id: Mapped[str] = mapped_column(ForeignKey("mcp_sessions.id"), nullable=False)
    request_id: Mapped[str] = mapped_column(String(64), nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)


class McpToolCall(Model):
    """The audit log: who called which tool, where, with which parameter names, and how it went.

    Parameter values are never stored (they may hold anything); only their names.
    """

    __tablename__ = "mcp_tool_calls"
    __table_args__ = (Index("ix_mcp_tool_calls_user_created", "user_id", "created_at"),
                      Index("ix_mcp_tool_calls_represented_created", "represented_user_id",
                            "created_at"))

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id"))
    token_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    session_id: Mapped[str | None] = mapped_column(String(64))
    transport: Mapped[str] = mapped_column(String(8), nullable=False)
    tool: Mapped[str] = mapped_column(String(128), nullable=False)
    path: Mapped[str | None] = mapped_column(Text)
    action: Mapped[str | None] = mapped_column(String(128))
    param_names: Mapped[str] = mapped_column(Text, default="", nullable=False)
    outcome: Mapped[str] = mapped_column(String(16), nullable=False)  # ok|tool_error|cancelled
    message: Mapped[str | None] = mapped_column(Text)
    duration_ms: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, nullable=False)
    # The person the caller (``user_id``) acted for in a representation session, if any.
    represented_user_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    # The context the call declared (app.core.declared), as JSON, if it declared one.
    context: Mapped[str | None] = mapped_column(Text)
