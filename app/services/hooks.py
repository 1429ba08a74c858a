"""The callables a module tells of something (listeners, enders), each registered once."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


class Hooks(list[T]):
    """The registered callables, in the order registered."""

    def add(self, hook: T) -> T:
        """Register ``hook`` unless it is already (so a decorator, too)."""
        if hook not in self:
            self.append(hook)
        return hook
