"""Whether runs are traced, and how: `instrument`, `uninstrument` and `Telemetry`.

Owns `Telemetry` (the tracer and meter providers to use, None for OpenTelemetry's global ones,
and whether message content is captured), `instrument` (turns tracing on for every run of the
process), `uninstrument`, `current` and `for_agent` (what one agent's runs use, given its
``instrument`` argument), and `capture_from_env` (the conventions' environment variable
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``). Nothing here imports OpenTelemetry
until tracing is turned on, so a process that never turns it on pays nothing. Imports only the
errors.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolwire.errors import ConfigError

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_CAPTURE_ON = frozenset({"true", "1", "yes", "on", "span_only", "span_and_event"})


@dataclass(frozen=True, slots=True)
class Telemetry:
    """What traced runs use. ``tracer_provider`` and ``meter_provider`` None mean
    OpenTelemetry's global providers (the application's, whenever it sets them);
    ``capture_content`` puts messages, tool arguments and tool results on the spans, with
    secrets taken out."""

    tracer_provider: Any = None
    meter_provider: Any = None
    capture_content: bool = False


_current: Telemetry | None = None


def capture_from_env(env: Mapping[str, str] | None = None) -> bool:
    """Whether the conventions' environment variable asks for content capture (``true``, or
    ``SPAN_ONLY`` / ``SPAN_AND_EVENT`` as the newer conventions write it)."""
    value = (os.environ if env is None else env).get(CAPTURE_ENV, "")
    return value.strip().lower() in _CAPTURE_ON


def _check_api() -> None:
    try:
        importlib.import_module("opentelemetry.trace")
    except ImportError:
        raise ConfigError(
            "tracing runs needs the OpenTelemetry API: pip install opentelemetry-api "
            '(or "toolwire[otel]", which also brings the SDK and the OTLP exporter)') from None


def make(*, capture_content: bool | None = None, tracer_provider: Any = None,
         meter_provider: Any = None) -> Telemetry:
    """A `Telemetry`, checking that the OpenTelemetry API can be imported; content capture
    follows `capture_from_env` unless ``capture_content`` says otherwise."""
    _check_api()
    if capture_content is None:
        capture_content = capture_from_env()
    return Telemetry(tracer_provider, meter_provider, capture_content)


def instrument(*, capture_content: bool | None = None, tracer_provider: Any = None,
               meter_provider: Any = None) -> Telemetry:
    """Trace every agent run of this process from now on (``Agent(instrument=False)`` opts an
    agent out).

    Spans and metrics go to OpenTelemetry's global tracer and meter providers, the ones the
    application sets up (toolwire never replaces them), unless ``tracer_provider`` or
    ``meter_provider`` are given. ``capture_content=True`` records messages, tool arguments and
    tool results, with known secrets taken out; by default it follows the
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` environment variable. Raises
    `toolwire.ConfigError` when opentelemetry-api is not installed.
    """
    global _current
    _current = make(capture_content=capture_content, tracer_provider=tracer_provider,
                    meter_provider=meter_provider)
    return _current


def uninstrument() -> None:
    """Stop tracing runs that start from now on (runs already going keep their spans)."""
    global _current
    _current = None


def current() -> Telemetry | None:
    """What `instrument` turned on, or None."""
    return _current


def for_agent(instrument: bool | Telemetry | None) -> Telemetry | None:
    """What an agent's runs use: ``None`` follows `instrument`; ``True`` traces them (with the
    settings `instrument` gave, else the defaults); ``False`` never; a `Telemetry` as given."""
    if instrument is None:
        return _current
    if instrument is False:
        return None
    if instrument is True:
        return _current if _current is not None else make()
    return instrument


__all__ = ["CAPTURE_ENV", "Telemetry", "capture_from_env", "current", "for_agent", "instrument",
           "make", "uninstrument"]
