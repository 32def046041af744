"""Time limits inside extraction: a deadline checked at safe points, and its exception."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


class TimeUp(Exception):
    """Raised inside extraction when the time limit is reached (caught by the method).

    `partial` may carry the method's anytime answer from where it was interrupted.
    """

    partial: Any = None


@dataclass
class Deadline:
    """A wall-clock limit checked at safe points; `None` seconds means no limit."""

    seconds: float | None
    start: float = field(default_factory=time.perf_counter)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def expired(self) -> bool:
        return self.seconds is not None and self.elapsed() > self.seconds

    def check(self) -> None:
        if self.expired():
            raise TimeUp
