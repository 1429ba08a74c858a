"""Agents for the fault suite, over HTTP (vote, join, write notes) and over MCP (navigate,
then vote or join on the page navigated to), retrying what is safe to retry.

``Tally`` is what the clients saw and what the server confirmed (a ``Ledger``), shared by the
client threads; the fault tests compare it with the database afterwards.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.load.harness import Ledger, Population
from tests.mcp.conftest import Http, messages_of


@dataclass
class Tally:
    """What the clients saw, shared by their threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    succeeded: int = 0
    dropped: int = 0  # requests whose connection died
    dropped_mcp: int = 0  # of which MCP calls
    statuses: Counter[int] = field(default_factory=Counter)
    confirmed: Ledger = field(default_factory=Ledger)
    uncertain_notes: set[tuple[str, str]] = field(default_factory=set)
    progress: threading.Condition = field(default_factory=threading.Condition)

    def count(self, status: int) -> None:
        with self.lock:
            self.statuses[status] += 1
            if status < 300:
                self.succeeded += 1
        with self.progress:
            self.progress.notify_all()

    def drop(self, mcp: bool = False) -> None:
        """A request (an MCP call with ``mcp``) whose connection died before its answer."""
        with self.lock:
            self.dropped += 1
            self.dropped_mcp += mcp


def post_until_answered(http: httpx.Client, url: str, token: str, params: dict[str, Any],
                        tally: Tally, idempotent: bool, seconds: float = 90
                        ) -> httpx.Response | None:
    """POST until a definite answer. A dropped connection or a 503 is retried only when the
    action is ``idempotent`` (repeating it cannot add a second effect); otherwise None: the
    outcome is unknown."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            response = http.post(url, json=params, headers={
                "Authorization": f"Bearer {token}", "Accept": "application/json"})
        except httpx.TransportError:
            tally.drop()
            response = None
        if response is not None:
            tally.count(response.status_code)
            if response.status_code != 503:
                return response
        if not idempotent:
            return None
        time.sleep(0.1)
    raise AssertionError(f"{url}: no answer in {seconds} s")


def agent(base: str, population: Population, i: int, tally: Tally, steps: int,
          notes: bool = True) -> None:
    """Agent ``i``: ``steps`` times vote (alternating Yes / No), join the commitment, and
    (with ``notes``) write a note; the confirmed effects go into ``tally.confirmed``."""
    handle, token = population.handles[i], population.tokens[i]
    decision, commitment = population.decisions[0], population.commitments[0]
    note_form = f"/studios/{population.studio}/note"
    with httpx.Client(timeout=60) as http:
        for k in range(steps):
            choice = ("Yes", "No")[k % 2]
            votes = [{"option_title": "Yes", "accept": choice == "Yes"},
                     {"option_title": "No", "accept": choice == "No"}]
            voted = post_until_answered(http, f"{base}{decision}/actions/vote", token,
                                        {"votes": votes}, tally, idempotent=True)
            assert voted is not None and voted.status_code == 200, voted and voted.text
            joined = post_until_answered(http, f"{base}{commitment}/actions/join_commitment",
                                         token, {}, tally, idempotent=True)
            assert joined is not None and joined.status_code == 200, joined and joined.text
            if not notes:
                continue
            title = f"{handle} note {k}"
            wrote = post_until_answered(http, f"{base}{note_form}/actions/create_note", token,
                                        {"title": title, "text": f"Step {k} of {handle}."},
                                        tally, idempotent=False)
            if wrote is None:
                tally.uncertain_notes.add((title, handle))
            else:
                assert wrote.status_code == 201, wrote.text
                tally.confirmed.notes[(title, handle)] += 1
        last = ("Yes", "No")[(steps - 1) % 2]
        with tally.lock:
            tally.confirmed.votes[(0, handle, last)] += 1
            tally.confirmed.joins[(0, handle)] += 1


def mcp_until_answered(mcp: Http, name: str, arguments: dict[str, Any], tally: Tally,
                       seconds: float = 90) -> dict[str, Any]:
    """Call an idempotent MCP tool until it answers: a dropped connection or a 503 is
    retried on the same session (its state lives in the database, not in the process)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        message = {"jsonrpc": "2.0", "id": int(time.monotonic() * 1e6), "method": "tools/call",
                   "params": {"name": name, "arguments": arguments}}
        try:
            response = mcp.post(message)
        except httpx.TransportError:
            tally.drop(mcp=True)
            time.sleep(0.1)
            continue
        tally.count(response.status_code)
        if response.status_code == 503:
            time.sleep(0.1)
            continue
        assert response.status_code == 200, response.text
        result = messages_of(response)[-1]["result"]
        assert not result.get("isError"), result
        return dict(result["structuredContent"])
    raise AssertionError(f"{name}: no answer in {seconds} s")


def initialize_until_answered(mcp: Http, tally: Tally, seconds: float = 90) -> None:
    """Open ``mcp``'s session, again where a dropped connection cut the handshake (a session
    whose answer was lost stays unused)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        mcp.session_id = None
        try:
            mcp.initialize()
            return
        except httpx.TransportError:
            tally.drop(mcp=True)
        time.sleep(0.1)
    raise AssertionError(f"initialize: no answer in {seconds} s")


def mcp_agent(base: str, population: Population, i: int, tally: Tally, steps: int) -> None:
    """Agent ``i`` over MCP: ``steps`` times navigate to the decision and vote, navigate to
    the commitment and join, each action relying on the page navigated to before."""
    handle, token = population.handles[i], population.tokens[i]
    decision, commitment = population.decisions[0], population.commitments[0]
    with httpx.Client(timeout=60) as http:
        mcp = Http(base, token, client=http)
        initialize_until_answered(mcp, tally)
        for k in range(steps):
            choice = ("Yes", "No")[k % 2]
            votes = [{"option_title": "Yes", "accept": choice == "Yes"},
                     {"option_title": "No", "accept": choice == "No"}]
            mcp_until_answered(mcp, "navigate", {"path": decision}, tally)
            voted = mcp_until_answered(mcp, "execute_action",
                                       {"action": "vote", "params": {"votes": votes}}, tally)
            assert voted["path"] == decision, voted
            mcp_until_answered(mcp, "navigate", {"path": commitment}, tally)
            joined = mcp_until_answered(mcp, "execute_action",
                                        {"action": "join_commitment", "params": {}}, tally)
            assert joined["path"] == commitment, joined
    last = ("Yes", "No")[(steps - 1) % 2]
    with tally.lock:
        tally.confirmed.votes[(0, handle, last)] += 1
        tally.confirmed.joins[(0, handle)] += 1
