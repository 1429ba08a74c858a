"""The callables other modules register to be told of something (listeners, enders, observers,
backlog providers), each registered once."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


class Listeners(list[T]):
    """The registered callables, in the order registered."""

    def add(self, listener: T) -> T:
        """Register ``listener`` unless it is already (so a decorator, too)."""
        if listener not in self:
            self.append(listener)
        return listener
