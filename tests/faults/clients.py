"""HTTP agents for the fault suite: vote, join and write notes, retrying what is safe.

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


@dataclass
class Tally:
    """What the clients saw, shared by their threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    succeeded: int = 0
    dropped: int = 0  # requests whose connection died
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
            with tally.lock:
                tally.dropped += 1
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
