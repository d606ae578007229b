"""Sending spans and metrics to an OTLP collector, from a process that is toolwire's own.

Owns `Exporting`, `export_wanted` and `start_exporting`. The command line (and a Ray worker
running a traced batch's runs) calls `start_exporting`: when the process has no tracer
provider yet, it sets the OpenTelemetry SDK's, with a batching span processor and a periodic
metric reader that send OTLP over HTTP to ``OTEL_EXPORTER_OTLP_ENDPOINT`` (the exporters read
it, and the other ``OTEL_EXPORTER_OTLP_*`` variables, themselves; without it,
``http://localhost:4318``); ``OTEL_METRICS_EXPORTER=none`` sends spans only. A process that
already has a tracer provider keeps it: toolwire never replaces one. Library code never calls
this module.

The SDK and the exporter come with ``pip install "toolwire[otel]"``; they are imported only
when exporting starts. Imports only the errors.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from toolwire.errors import ConfigError

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
_ENDPOINT_VARS = (ENDPOINT_ENV, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def export_wanted(env: Mapping[str, str] | None = None) -> bool:
    """Whether the environment names an OTLP endpoint (and does not disable the SDK)."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(env.get(name, "").strip() for name in _ENDPOINT_VARS)


class Exporting:
    """The SDK providers `start_exporting` set (no meter provider when metrics are off);
    `flush` sends what is waiting, `close` sends it and stops (call it before the process ends,
    or the last spans are lost)."""

    def __init__(self, tracer_provider: Any, meter_provider: Any) -> None:
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.undelivered = 0
        """Spans the collector did not take (none listening, refused, too slow)."""
        self.delivered = 0

    def flush(self) -> None:
        self.tracer_provider.force_flush()
        if self.meter_provider is not None:
            self.meter_provider.force_flush()

    def close(self) -> None:
        self.tracer_provider.shutdown()
        if self.meter_provider is not None:
            self.meter_provider.shutdown()


def check_endpoints(env: Mapping[str, str] | None = None) -> None:
    """Raise `toolwire.ConfigError` for an endpoint variable that is not an http(s) URL."""
    env = os.environ if env is None else env
    for name in _ENDPOINT_VARS:
        value = env.get(name, "").strip()
        if not value:
            continue
        url = urlsplit(value)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ConfigError(
                f"{name} is {value!r}, which is not an http:// or https:// URL; set it to the "
                "collector's OTLP/HTTP address, such as http://localhost:4318")


def start_exporting() -> Exporting | None:
    """Set the SDK's tracer and meter providers, exporting OTLP over HTTP, unless the process
    has a tracer provider already (then None: that one is used as it is).

    Raises `toolwire.ConfigError` when the SDK or the OTLP exporter is not installed, or an
    endpoint variable is not a URL."""
    check_endpoints()
    try:
        from opentelemetry import metrics, trace
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise ConfigError(
            f"sending runs to an OTLP collector needs the OpenTelemetry SDK and its OTLP/HTTP "
            f'exporter ({exc.name} is missing): pip install "toolwire[otel]"') from None
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return None
    attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: "toolwire"}
    resource = Resource.create(attributes)
    tracer_provider = TracerProvider(resource=resource)
    spans = OTLPSpanExporter()
    trace.set_tracer_provider(tracer_provider)
    meter_provider = None
    if not _off("OTEL_METRICS_EXPORTER"):  # else no meter provider: measuring costs nothing
        reader = PeriodicExportingMetricReader(OTLPMetricExporter())
        meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
        metrics.set_meter_provider(meter_provider)
    exporting = Exporting(tracer_provider, meter_provider)
    tracer_provider.add_span_processor(BatchSpanProcessor(_counted(spans, exporting)))
    return exporting


def _counted(inner: Any, exporting: Exporting) -> Any:
    """``inner``, a span exporter, counting in ``exporting`` what the collector took and what
    it did not."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class Counted(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            result: SpanExportResult = inner.export(spans)
            if result == SpanExportResult.SUCCESS:
                exporting.delivered += len(spans)
            else:
                exporting.undelivered += len(spans)
            return result

        def shutdown(self) -> None:
            inner.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return bool(inner.force_flush(timeout_millis))

    return Counted()


def _off(name: str) -> bool:
    """Whether an ``OTEL_*_EXPORTER`` variable says ``none`` (a tracing-only backend such as
    Jaeger takes no metrics)."""
    return os.environ.get(name, "").strip().lower() == "none"


__all__ = ["ENDPOINT_ENV", "Exporting", "check_endpoints", "export_wanted", "start_exporting"]
