"""Progress a tool reports, paced for a listener that keeps what it is given (the run log).

Owns `ProgressPacer`. A tool (an MCP server's, usually) may report its progress thousands of
times a second; the run log keeps at most one line per tool per `INTERVAL` seconds, each
saying how many reports it stands for (`toolwire.events.ToolProgress.count`), and the latest
report held back is passed on when its tool finishes or the run stops. Every other event goes
through as it comes, in order. Imports only the events.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from toolwire.events import Event, Listener, RunStopped, ToolFinished, ToolProgress

INTERVAL = 1.0
"""The fewest seconds between two progress events of one tool that a paced listener gets."""


class ProgressPacer:
    """A run listener in front of ``listener``: passes each tool's progress at most once per
    ``interval`` seconds (on ``clock``), the reports held back counted in the next one passed."""

    __slots__ = ("_clock", "_held", "_last", "interval", "listener")

    def __init__(self, listener: Listener, interval: float = INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.listener = listener
        self.interval = interval
        self._clock = clock
        self._last: dict[str, float] = {}
        self._held: dict[str, tuple[ToolProgress, int]] = {}

    def __call__(self, event: Event) -> None:
        if type(event) is ToolProgress:
            held = self._held.pop(event.tool, None)
            count = event.count + (held[1] if held is not None else 0)
            now = self._clock()
            last = self._last.get(event.tool)
            if last is None or now - last >= self.interval:
                self._last[event.tool] = now
                self.listener(dataclasses.replace(event, count=count))
            else:
                self._held[event.tool] = (event, count)
            return
        if type(event) is ToolFinished:
            self._flush(event.call.name)
        elif type(event) is RunStopped:
            for tool in list(self._held):
                self._flush(tool)
        self.listener(event)

    def _flush(self, tool: str) -> None:
        held = self._held.pop(tool, None)
        self._last.pop(tool, None)
        if held is not None:
            self.listener(dataclasses.replace(held[0], count=held[1]))


__all__ = ["INTERVAL", "ProgressPacer"]
