"""OpenTelemetry for toolwire: runs as spans and metrics that follow the GenAI conventions.

`toolwire.telemetry.settings` turns it on (`instrument`) and holds what was asked for; it
imports no OpenTelemetry package. `toolwire.telemetry.spans` is the listener that turns a run's
events into spans and metrics (only opentelemetry-api); `toolwire.telemetry.content` writes
messages the conventions' way and takes secrets out of them; `toolwire.telemetry.export` sets
up the OpenTelemetry SDK with an OTLP/HTTP exporter for a process of toolwire's own (the command
line, a Ray worker). This package file imports nothing, so importing a module in it costs only
that module.
"""
