"""How what happens while an MCP call runs reaches the run that made it.

Owns `teller` (how the session's thread hands an event to the run whose tool is calling, in
that run's event loop and context) and `trace_context` (the current span's W3C trace context
for a call's ``_meta``, as the MCP conventions carry it). Must not import the loop, codecs or
the transport, nor OpenTelemetry unless it is already in use.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import sys
from collections.abc import Callable

from toolwire.events import Event, emit

__all__ = ["teller", "trace_context"]


def teller() -> Callable[[Event], None]:
    """How another thread gives an event to whoever listens where this is called (the run
    whose tool is calling): in this event loop, in this context."""
    loop, context = asyncio.get_running_loop(), contextvars.copy_context()

    def tell(event: Event) -> None:
        with contextlib.suppress(RuntimeError):  # the caller's loop has ended
            loop.call_soon_threadsafe(context.run, emit, event)

    return tell


def trace_context() -> dict[str, str] | None:
    """The current span's W3C trace context (``traceparent``...), for a call's ``_meta`` as
    the MCP conventions carry it, when OpenTelemetry is in use (never importing it)."""
    if "opentelemetry.propagate" not in sys.modules:
        return None
    from opentelemetry import propagate

    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier or None
