"""A run's events as OpenTelemetry spans and metrics, named as the GenAI conventions name them.

Owns `RunTelemetry`, the listener a traced run gets next to its run log (see
`toolwire.events`): one ``invoke_agent`` span per run, inside it one ``chat {model}`` span per
model call and one ``execute_tool {tool}`` span per tool call (calls run in parallel are sibling
spans), retries as ``toolwire.retry`` events on the model call's span, and the conventions'
histograms ``gen_ai.client.token.usage``, ``gen_ai.client.operation.duration`` and, for streamed
replies, ``gen_ai.client.operation.time_to_first_chunk``. While a tool runs its span is the
current span, so spans the tool makes itself sit under it. Also owns `batch_span` and
`remote_parent`, which carry one trace across the runs of a batch, in this process or another.

Imports opentelemetry-api (never the SDK): import this module only once tracing is turned on
(`toolwire.telemetry.settings`). Must not import the loop, codecs or the transport.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from toolwire.events import (
    Event,
    FirstToken,
    ModelChosen,
    ReplyReceived,
    RequestSent,
    RetryEvent,
    RunResumed,
    RunStopped,
    ToolAbandoned,
    ToolFinished,
    ToolStarted,
)
from toolwire.telemetry import content
from toolwire.telemetry.settings import Telemetry
from toolwire.transcript import Request, Usage
from toolwire.version import __version__

# --------------------------------------------------------------------------- the conventions' names

OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ = "gen_ai.usage.cache_read.input_tokens"
CACHE_WRITE = "gen_ai.usage.cache_creation.input_tokens"
REASONING = "gen_ai.usage.reasoning.output_tokens"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
ERROR_TYPE = "error.type"
TOKEN_TYPE = "gen_ai.token.type"
FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"

_REQUEST_PARAMETERS = {"max_tokens": "gen_ai.request.max_tokens",
                       "temperature": "gen_ai.request.temperature"}
_OPTION_PARAMETERS = {
    "top_p": "gen_ai.request.top_p", "top_k": "gen_ai.request.top_k",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty", "seed": "gen_ai.request.seed",
    "stop": "gen_ai.request.stop_sequences", "stop_sequences": "gen_ai.request.stop_sequences",
}
"""Request parameters a caller may pass in ``provider_options`` that the conventions name."""

_TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
                  16777216, 67108864)
_SECONDS_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                    40.96, 81.92)


class _Instruments:
    """The tracer and the histograms of one `Telemetry`, made once."""

    def __init__(self, settings: Telemetry) -> None:
        self.tracer = trace.get_tracer("toolwire", __version__,
                                       tracer_provider=settings.tracer_provider)
        meter = metrics.get_meter("toolwire", __version__, meter_provider=settings.meter_provider)
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage", "{token}", "Tokens used by a model call",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS)
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration", "s", "How long a model call took",
            explicit_bucket_boundaries_advisory=_SECONDS_BUCKETS)
        self.first_chunk = meter.create_histogram(
            "gen_ai.client.operation.time_to_first_chunk", "s",
            "Time from sending a streamed request to its first chunk",
            explicit_bucket_boundaries_advisory=_SECONDS_BUCKETS)


@functools.lru_cache(maxsize=16)
def _instruments(settings: Telemetry) -> _Instruments:
    return _Instruments(settings)


def error_type(error: BaseException) -> str:
    """``error.type`` for an exception: its class's qualified name."""
    cls = type(error)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _failed(span: Span, kind: str, description: str | None = None) -> None:
    span.set_attribute(ERROR_TYPE, kind)
    span.set_status(Status(StatusCode.ERROR, description))


def _usage_attributes(usage: Usage) -> dict[str, Any]:
    attributes: dict[str, Any] = {INPUT_TOKENS: usage.input_tokens,
                                  OUTPUT_TOKENS: usage.output_tokens}
    if usage.cache_read_tokens:
        attributes[CACHE_READ] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        attributes[CACHE_WRITE] = usage.cache_write_tokens
    if usage.reasoning_tokens:
        attributes[REASONING] = usage.reasoning_tokens
    if usage.cost is not None:  # the conventions name no cost: toolwire's own attribute
        attributes["toolwire.usage.cost"] = usage.cost
    return attributes


def _model_attributes(model: object) -> dict[str, Any]:
    """What the model says of itself for telemetry (``telemetry``: the provider's name in the
    conventions, ``server.address``, ``server.port``), with ``_OTHER`` for an unknown provider."""
    given = getattr(model, "telemetry", None)
    attributes: dict[str, Any] = dict(given) if isinstance(given, Mapping) else {}
    attributes.setdefault(PROVIDER, "_OTHER")
    return attributes


class RunTelemetry:
    """Turns the events of one run into spans and metrics (a `toolwire.events.Listener`).

    Made when the run starts, in the caller's context: the run's ``invoke_agent`` span is a
    child of whatever span is current there. ``tools`` maps tool names to `toolwire.Tool`s;
    a tool whose function has a ``telemetry`` mapping (MCP tools do) adds it to its spans.
    """

    def __init__(self, settings: Telemetry, *, model: object, request: Request,
                 tools: Mapping[str, Any], stream: bool, resumed: bool = False) -> None:
        made = _instruments(settings)
        self._made = made
        self._tools = tools
        self._stream = stream
        self._redact = content.Redactor.shared() if settings.capture_content else None
        self._inputs = content.InputMessages(self._redact) if self._redact is not None else None
        self._model = _model_attributes(model)
        self._measured: dict[str | None, tuple[dict[str, Any], ...]] = {}
        self._request_model = request.model
        attributes = {OPERATION: "invoke_agent", **self._model, REQUEST_MODEL: request.model}
        if resumed:
            attributes["toolwire.run.resumed"] = True
        self._run = made.tracer.start_span("invoke_agent", kind=SpanKind.INTERNAL,
                                           attributes=attributes)
        self._run_context = trace.set_span_in_context(self._run)
        self._chat: Span | None = None
        self._chat_started = 0.0
        self._first_chunk: float | None = None
        self._calls: dict[int, tuple[Span, object]] = {}
        self._handlers: dict[type, Callable[[Any], None]] = {
            RequestSent: self._request, ReplyReceived: self._reply, RetryEvent: self._retry,
            ToolStarted: self._tool_started, ToolFinished: self._tool_finished,
            RunStopped: self._stopped, RunResumed: self._resumed, FirstToken: self._first,
            ToolAbandoned: self._abandoned, ModelChosen: self._chosen,
        }

    def __call__(self, event: Event) -> None:
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(event)

    # ------------------------------------------------------------------ model calls

    def _request(self, event: RequestSent) -> None:
        request = event.request
        attributes: dict[str, Any] = {OPERATION: "chat", **self._model,
                                      REQUEST_MODEL: request.model}
        for field, name in _REQUEST_PARAMETERS.items():
            value = getattr(request, field)
            if value is not None:
                attributes[name] = value
        if request.provider_options:
            _option_attributes(request.provider_options, attributes)
        if self._stream:
            attributes["gen_ai.request.stream"] = True
        if self._redact is not None and self._inputs is not None:
            attributes["gen_ai.input.messages"] = self._inputs(request.messages)
            if request.system:
                attributes["gen_ai.system_instructions"] = content.system_instructions(
                    request.system, self._redact)
        self._chat = self._made.tracer.start_span(
            f"chat {request.model}", context=self._run_context, kind=SpanKind.CLIENT,
            attributes=attributes)
        self._chat_started = time.perf_counter()
        self._first_chunk = None

    def _first(self, event: FirstToken) -> None:
        if self._chat is not None:
            self._first_chunk = event.seconds

    def _retry(self, event: RetryEvent) -> None:
        if self._chat is None:
            return
        self._chat.add_event("toolwire.retry", {
            "toolwire.retry.attempt": event.attempt, "toolwire.retry.wait": event.wait,
            ERROR_TYPE: error_type(event.error),
            "exception.message": str(event.error)[:500]})

    def _chosen(self, event: ModelChosen) -> None:
        """A fallback chain's choice: the model that answered the call (``none``: no model
        did), an event per model passed over before it, and what the history lost."""
        if self._chat is None:
            return
        for name, why, error in event.failed:
            self._chat.add_event("toolwire.fallback", {
                "toolwire.fallback.from": name, "toolwire.fallback.why": why,
                "exception.message": error[:500]})
        self._chat.set_attribute("toolwire.fallback.model", event.model or "none")
        if event.losses:
            self._chat.set_attribute("toolwire.fallback.losses", event.losses)

    def _reply(self, event: ReplyReceived) -> None:
        span, self._chat = self._chat, None
        if span is None:
            return
        reply = event.reply
        finish = reply.raw_stop or reply.stop
        attributes: dict[str, Any] = {FINISH_REASONS: (finish,), **_usage_attributes(reply.usage)}
        if reply.model:
            attributes[RESPONSE_MODEL] = reply.model
        if reply.id:
            attributes[RESPONSE_ID] = reply.id
        if self._first_chunk is not None:
            attributes[FIRST_CHUNK] = self._first_chunk
        if self._redact is not None:
            attributes["gen_ai.output.messages"] = content.output_messages(reply, finish,
                                                                           self._redact)
        span.set_attributes(attributes)
        span.end()
        measured, inputs, outputs = self._metric_attributes(reply.model)
        made = self._made
        made.duration.record(event.seconds, measured)
        made.tokens.record(reply.usage.input_tokens, inputs)
        made.tokens.record(reply.usage.output_tokens, outputs)
        if self._first_chunk is not None:
            made.first_chunk.record(self._first_chunk, measured)

    def _metric_attributes(self, response_model: str | None) -> tuple[dict[str, Any], ...]:
        """The attributes of a model call's measurements, and of its input and output token
        counts; made once per response model."""
        found = self._measured.get(response_model)
        if found is None:
            measured = {OPERATION: "chat", **self._model, REQUEST_MODEL: self._request_model}
            if response_model:
                measured[RESPONSE_MODEL] = response_model
            found = (measured, {**measured, TOKEN_TYPE: "input"},
                     {**measured, TOKEN_TYPE: "output"})
            self._measured[response_model] = found
        return found

    def _chat_failed(self, kind: str, error: BaseException | None) -> None:
        span, self._chat = self._chat, None
        if span is None:
            return
        _failed(span, kind, str(error)[:500] if error is not None else None)
        span.end()
        self._made.duration.record(time.perf_counter() - self._chat_started,
                                   {**self._metric_attributes(None)[0], ERROR_TYPE: kind})

    # ------------------------------------------------------------------ tool calls

    def _tool_span(self, event: ToolStarted | ToolFinished) -> Span:
        call = event.call
        attributes: dict[str, Any] = {OPERATION: "execute_tool", TOOL_NAME: call.name,
                                      TOOL_CALL_ID: call.id, TOOL_TYPE: "function"}
        tool = self._tools.get(call.name)
        if tool is not None:
            if tool.description:
                attributes[TOOL_DESCRIPTION] = tool.description
            extra = getattr(tool.fn, "telemetry", None)
            if isinstance(extra, Mapping):
                attributes.update(extra)
        if self._redact is not None:
            attributes["gen_ai.tool.call.arguments"] = content.arguments_text(call, self._redact)
        return self._made.tracer.start_span(f"execute_tool {call.name}",
                                            context=self._run_context, kind=SpanKind.INTERNAL,
                                            attributes=attributes)

    def _tool_started(self, event: ToolStarted) -> None:
        span = self._tool_span(event)
        token = otel_context.attach(trace.set_span_in_context(span, self._run_context))
        self._calls[id(event.call)] = (span, token)

    def _tool_finished(self, event: ToolFinished) -> None:
        found = self._calls.pop(id(event.call), None)
        if found is None:  # refused before it ran (arguments, approval): a span all the same
            span = self._tool_span(event)
        else:
            span, token = found
            otel_context.detach(token)  # type: ignore[arg-type]
        result = event.result
        if result.is_error:
            text = self._redact(result.text) if self._redact is not None else None
            _failed(span, "tool_error", text)
        elif self._redact is not None:
            span.set_attribute("gen_ai.tool.call.result", self._redact(result.text))
        span.end()

    def _abandoned(self, event: ToolAbandoned) -> None:
        """A call started early for a reply that never became history: its span ends here."""
        found = self._calls.pop(id(event.call), None)
        if found is None:
            return
        span = found[0]  # its context went with the call's task
        span.set_attribute("toolwire.tool.abandoned", event.reason)
        _failed(span, "abandoned" if event.finished else "cancelled")
        span.end()

    # ------------------------------------------------------------------ the run

    def _resumed(self, event: RunResumed) -> None:
        self._run.set_attributes({"toolwire.run.resumed": True,
                                  "toolwire.run.resumed_turns": event.turns})

    def _stopped(self, event: RunStopped) -> None:
        error = event.error
        # what cut short a model call or a tool still open: the error, else the stop
        kind = error_type(error) if error is not None else (
            "timeout" if event.stop == "time_limit" else event.stop)
        self._chat_failed(kind, error)
        for span, _ in self._calls.values():
            _failed(span, kind)
            span.end()
        self._calls.clear()
        run = self._run
        run.set_attributes({"toolwire.run.stop": event.stop, "toolwire.run.turns": event.turns,
                            **_usage_attributes(event.usage)})
        if event.error is not None:
            _failed(run, error_type(event.error), str(event.error)[:500])
        run.end()

    def close(self) -> None:
        """The run broke off without a stop (a bug, a test double's complaint): end its spans."""
        self._chat_failed("_OTHER", None)
        for span, _ in self._calls.values():
            _failed(span, "_OTHER")
            span.end()
        self._calls.clear()
        if self._run.is_recording():
            _failed(self._run, "_OTHER", "the run ended without a stop")
            self._run.end()


def _option_attributes(options: Mapping[str, Any], attributes: dict[str, Any]) -> None:
    """Request parameters the conventions name, from ``provider_options`` (top level, or under
    a wire's name)."""
    for key, value in options.items():
        if isinstance(value, Mapping):
            _option_attributes(value, attributes)
            continue
        name = _OPTION_PARAMETERS.get(key)
        if name is None:
            continue
        if isinstance(value, str) and name.endswith("stop_sequences"):
            value = (value,)
        if isinstance(value, int | float | str | bool) or (
                isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)):
            attributes[name] = value


# --------------------------------------------------------------------------- batches


@contextmanager
def batch_span(settings: Telemetry, attributes: Mapping[str, Any]) -> Iterator[dict[str, str]]:
    """A ``toolwire.batch`` span, current for the block: runs started inside are its children.

    Yields the span's context as W3C trace-context headers, for runs in another process
    (`remote_parent`)."""
    tracer = _instruments(settings).tracer
    with tracer.start_as_current_span("toolwire.batch", kind=SpanKind.INTERNAL,
                                      attributes=dict(attributes)):
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        yield carrier


@contextmanager
def remote_parent(carrier: Mapping[str, str]) -> Iterator[None]:
    """Makes the span that ``carrier`` names (from `batch_span`) the parent of what starts in
    the block."""
    token = otel_context.attach(propagate.extract(dict(carrier)))
    try:
        yield
    finally:
        otel_context.detach(token)


__all__ = ["RunTelemetry", "batch_span", "error_type", "remote_parent"]
