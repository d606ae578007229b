"""``--otel``: the commands that run agents send their runs to an OTLP collector.

Owns `add_otel_option` and `traced`. A command with the option traces its runs
(`toolwire.telemetry.settings.instrument`) when ``--otel`` is given or
``OTEL_EXPORTER_OTLP_ENDPOINT`` is set, exporting from this process with the OpenTelemetry SDK
(`toolwire.telemetry.export`), unless the process already has a tracer provider (one set up by
``opentelemetry-instrument``, say), which is then used as it is. Imports only what the commands
share.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from toolwire.cli.common import UserError
from toolwire.errors import ConfigError


def add_otel_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--otel", action="store_true",
                   help="send the run's OpenTelemetry spans and metrics to the OTLP/HTTP "
                        "collector at OTEL_EXPORTER_OTLP_ENDPOINT (default "
                        "http://localhost:4318; on whenever that variable is set; needs "
                        "toolwire[otel])")


@contextmanager
def traced(args: argparse.Namespace) -> Iterator[None]:
    """Trace the command's runs while the block runs, when asked to; send what is left when
    it ends."""
    from toolwire.telemetry.export import export_wanted, start_exporting

    asked = bool(getattr(args, "otel", False))
    if not hasattr(args, "otel") or not (asked or export_wanted()):
        yield
        return
    from toolwire.telemetry import settings

    exporting: Any = None
    try:
        exporting = start_exporting()
        settings.instrument()
    except ConfigError as exc:
        if asked:
            raise UserError(f"--otel: {exc}") from None
        print(f"toolwire: OTEL_EXPORTER_OTLP_ENDPOINT is set, but runs are not traced: {exc}",
              file=sys.stderr)
        yield
        return
    if exporting is not None:  # what the SDK logs of each failed attempt is said once below
        logging.getLogger("opentelemetry").setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        settings.uninstrument()
        if exporting is not None:
            exporting.close()
            if exporting.undelivered:
                from toolwire.telemetry.export import ENDPOINT_ENV

                where = os.environ.get(ENDPOINT_ENV) or "http://localhost:4318"
                print(f"toolwire: --otel: {exporting.undelivered} span(s) were not delivered: "
                      f"the OTLP collector at {where} did not take them (is one listening "
                      f"there? set {ENDPOINT_ENV} to its address)", file=sys.stderr)
