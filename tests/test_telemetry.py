"""OpenTelemetry: a run's spans and metrics, named as the GenAI semantic conventions name them.

Runs go over loopback HTTP to the emulator (or to a scripted model) and their spans land in the
SDK's in-memory exporter. The conventions' attribute names are written out here, not imported
from toolwire, so a renamed attribute fails a test.
"""

from __future__ import annotations

import contextvars
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import toolwire
from otlp_collector import Collector
from strategies import tool_rounds
from toolwire import Agent, AuthenticationError, Message, Reply, ToolCallPart, Usage
from toolwire.batch import run_batch
from toolwire.emulator import Emulator, Fault
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.telemetry.settings import Telemetry
from toolwire.testing import ScriptedModel, call, reply
from toolwire.transcript import replace

CONTENT_KEYS = {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
                "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}


@dataclass
class Otel:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader
    tracer_provider: TracerProvider
    meter_provider: MeterProvider

    def settings(self, capture: bool = False) -> Telemetry:
        return Telemetry(self.tracer_provider, self.meter_provider, capture)

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def as_text(self) -> str:
        return "\n".join(s.to_json() for s in self.finished())

    def histograms(self) -> dict[str, list[Any]]:
        data = self.metrics.get_metrics_data()
        found: dict[str, list[Any]] = {}
        for rm in data.resource_metrics if data else ():
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    found[m.name] = list(m.data.data_points)
        return found


@pytest.fixture
def otel() -> Iterator[Otel]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    yield Otel(spans, reader, tracer_provider, meter_provider)
    assert trace.get_current_span() is trace.INVALID_SPAN  # no span left current behind a run
    toolwire.uninstrument()
    tracer_provider.shutdown()
    meter_provider.shutdown()


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def explode() -> str:
    raise ValueError("the fuse was lit")


CALLS = Reply(message=Message(role="assistant", parts=(
    ToolCallPart(id="call_add", name="add", arguments={"a": 1, "b": 2}),
    ToolCallPart(id="call_boom", name="explode", arguments={}))),
    stop="tool_calls", usage=Usage(input_tokens=50, output_tokens=20, cache_read_tokens=10))
ANSWER = Reply(message=Message.assistant("3, and explode failed."),
               usage=Usage(input_tokens=80, output_tokens=9))
PROMPT = "Add 1 and 2, then explode."


async def emulated_run(settings: Telemetry, *, stream: bool = True, system: str | None = None
                       ) -> tuple[Any, int]:
    """Two parallel calls (one fails) after a rate limit that is retried, then the answer."""
    async with Emulator([Fault("rate_limit", retry_after=0.001), CALLS, ANSWER]) as emu:
        model = make_model(f"openai:gpt-test@{emu.base_url}", env={},
                           retry=RetryPolicy(base=0.001, max_wait=0.01), seed=7)
        agent = Agent(model=model, tools=[add, explode], stream=stream, temperature=0.2,
                      max_tokens=100, system=system, instrument=settings)
        result = await agent.arun(PROMPT)
        await model.aclose()
        emu.assert_done()
        port = int(emu.base_url.rsplit(":", 1)[1])
    return result, port


def children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    span_id = parent.context.span_id
    found = [s for s in spans if s.parent is not None and s.parent.span_id == span_id]
    return sorted(found, key=lambda s: s.start_time or 0)


async def test_a_run_is_one_span_tree_with_the_conventions_names(otel: Otel) -> None:
    result, port = await emulated_run(otel.settings())
    assert result.ok
    spans = otel.finished()
    roots = [s for s in spans if s.parent is None]
    assert [r.name for r in roots] == ["invoke_agent"]
    root = roots[0]
    inside = children(spans, root)
    assert len(spans) == 5 and len(inside) == 4  # nothing nests deeper
    first, *tools, last = inside
    assert [first.name, last.name] == ["chat gpt-test", "chat gpt-test"]
    assert sorted(t.name for t in tools) == ["execute_tool add", "execute_tool explode"]
    assert {s.context.trace_id for s in spans} == {root.context.trace_id}

    server = {"gen_ai.provider.name": "openai", "server.address": "127.0.0.1", "server.port": port}
    assert root.kind is SpanKind.INTERNAL and root.status.status_code is StatusCode.UNSET
    assert dict(root.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent", **server, "gen_ai.request.model": "gpt-test",
        "gen_ai.usage.input_tokens": 130, "gen_ai.usage.output_tokens": 29,
        "gen_ai.usage.cache_read.input_tokens": 10,
        "toolwire.run.stop": "answered", "toolwire.run.turns": 2,
    }
    request = {"gen_ai.operation.name": "chat", **server, "gen_ai.request.model": "gpt-test",
               "gen_ai.request.max_tokens": 100, "gen_ai.request.temperature": 0.2,
               "gen_ai.request.stream": True}
    for span, finish, usage in [
        (first, "tool_calls", {"gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 20,
                               "gen_ai.usage.cache_read.input_tokens": 10}),
        (last, "stop", {"gen_ai.usage.input_tokens": 80, "gen_ai.usage.output_tokens": 9}),
    ]:
        attributes = dict(span.attributes or {})
        response_id = attributes.pop("gen_ai.response.id")
        first_chunk = attributes.pop("gen_ai.response.time_to_first_chunk")
        assert isinstance(response_id, str) and response_id.startswith("chatcmpl-")
        assert isinstance(first_chunk, float) and first_chunk > 0
        assert attributes == {**request, "gen_ai.response.finish_reasons": (finish,), **usage}
        assert span.kind is SpanKind.CLIENT and span.status.status_code is StatusCode.UNSET
    # the rate limit was retried inside the first model call: an event on its span
    assert [e.name for e in first.events] == ["toolwire.retry"]
    retry = dict(first.events[0].attributes or {})
    assert retry["toolwire.retry.attempt"] == 1
    assert retry["error.type"] == "toolwire.errors.RateLimitError"
    assert last.events == ()

    by_name = {t.name: t for t in tools}
    ok, failed = by_name["execute_tool add"], by_name["execute_tool explode"]
    assert dict(ok.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": "call_add", "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Add two numbers."}
    assert dict(failed.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "explode",
        "gen_ai.tool.call.id": "call_boom", "gen_ai.tool.type": "function",
        "error.type": "tool_error"}
    assert ok.kind is failed.kind is SpanKind.INTERNAL
    assert ok.status.status_code is StatusCode.UNSET
    assert failed.status.status_code is StatusCode.ERROR
    assert failed.status.description is None  # the error text is content: not without capture

    # content is off by default: no content attribute, and no text of the run anywhere
    for span in spans:
        assert CONTENT_KEYS.isdisjoint(span.attributes or {}), span.name
    text = otel.as_text()
    for said in (PROMPT, "3, and explode failed.", "the fuse was lit", '"a": 1'):
        assert said not in text


async def test_metrics_follow_the_conventions(otel: Otel) -> None:
    await emulated_run(otel.settings())
    found = otel.histograms()
    assert set(found) == {"gen_ai.client.token.usage", "gen_ai.client.operation.duration",
                          "gen_ai.client.operation.time_to_first_chunk"}
    tokens = {p.attributes["gen_ai.token.type"]: p for p in found["gen_ai.client.token.usage"]}
    assert (tokens["input"].count, tokens["input"].sum) == (2, 130)
    assert (tokens["output"].count, tokens["output"].sum) == (2, 29)
    [duration] = found["gen_ai.client.operation.duration"]
    assert duration.count == 2 and duration.attributes["gen_ai.operation.name"] == "chat"
    assert duration.attributes["gen_ai.request.model"] == "gpt-test"
    assert [p.count for p in found["gen_ai.client.operation.time_to_first_chunk"]] == [2]


async def test_a_whole_reply_has_no_time_to_first_chunk(otel: Otel) -> None:
    await emulated_run(otel.settings(), stream=False)
    assert "gen_ai.client.operation.time_to_first_chunk" not in otel.histograms()
    for span in otel.finished():
        assert "gen_ai.response.time_to_first_chunk" not in (span.attributes or {})
        assert "gen_ai.request.stream" not in (span.attributes or {})


async def test_content_capture_puts_the_conversation_on_the_spans(otel: Otel) -> None:
    await emulated_run(otel.settings(capture=True), system="Be brief.")
    spans = {(s.name, (s.attributes or {}).get("gen_ai.response.finish_reasons")): s
             for s in otel.finished()}
    first = spans[("chat gpt-test", ("tool_calls",))].attributes or {}
    last = spans[("chat gpt-test", ("stop",))].attributes or {}
    assert json.loads(str(first["gen_ai.input.messages"])) == [
        {"role": "user", "parts": [{"type": "text", "content": PROMPT}]}]
    assert json.loads(str(first["gen_ai.system_instructions"])) == [
        {"type": "text", "content": "Be brief."}]
    assert json.loads(str(first["gen_ai.output.messages"])) == [{
        "role": "assistant", "finish_reason": "tool_calls", "parts": [
            {"type": "tool_call", "id": "call_add", "name": "add", "arguments": {"a": 1, "b": 2}},
            {"type": "tool_call", "id": "call_boom", "name": "explode", "arguments": {}}]}]
    history = json.loads(str(last["gen_ai.input.messages"]))
    assert [m["role"] for m in history] == ["user", "assistant", "tool"]
    assert history[2]["parts"][0] == {"type": "tool_call_response", "id": "call_add",
                                      "response": "3"}
    tool = spans[("execute_tool add", None)].attributes or {}
    assert json.loads(str(tool["gen_ai.tool.call.arguments"])) == {"a": 1, "b": 2}
    assert tool["gen_ai.tool.call.result"] == "3"
    failed = spans[("execute_tool explode", None)]
    assert "gen_ai.tool.call.result" not in (failed.attributes or {})
    assert "the fuse was lit" in str(failed.status.description)


SECRET = "svc-4f7d1c9e2b8a6d3f"
SHAPED = "sk-ant-api03-" + "Q" * 40  # an Anthropic key no variable holds


async def test_a_key_in_a_tool_result_never_reaches_a_span(
        otel: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BILLING_SERVICE_TOKEN", SECRET)
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    toolwire.instrument(tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)

    def read_config() -> str:
        return f"user = ann\ntoken = {SECRET}\nfallback = {SHAPED}"

    model = ScriptedModel([reply(call("read_config")), reply(f"The token is {SECRET}.")])
    result = await Agent(model=model, tools=[read_config]).arun(f"Is {SHAPED} valid?")
    # the tool result reached the model without it, saying what was taken out
    assert result.messages[2].parts[0].content == (
        "user = ann\ntoken = [redacted: BILLING_SERVICE_TOKEN]\n"
        "fallback = [redacted: Anthropic key]")
    text = otel.as_text()
    assert SECRET not in text and SHAPED not in text
    [tool] = [s for s in otel.finished() if s.name == "execute_tool read_config"]
    assert tool.attributes is not None
    assert tool.attributes["gen_ai.tool.call.result"] == (
        "user = ann\ntoken = [redacted: BILLING_SERVICE_TOKEN]\n"
        "fallback = [redacted: Anthropic key]")


async def test_a_failed_model_call_says_what_failed(otel: Otel) -> None:
    model = ScriptedModel([AuthenticationError("invalid x-api-key", status=401)])
    result = await Agent(model=model, instrument=otel.settings()).arun("hello")
    assert result.stop == "provider_error"
    chat = next(s for s in otel.finished() if s.name == "chat scripted")
    run = next(s for s in otel.finished() if s.name == "invoke_agent")
    for span in (chat, run):
        assert span.status.status_code is StatusCode.ERROR
        assert (span.attributes or {})["error.type"] == "toolwire.errors.AuthenticationError"
    assert (chat.attributes or {})["gen_ai.provider.name"] == "_OTHER"  # it names none
    [duration] = otel.histograms()["gen_ai.client.operation.duration"]
    assert duration.attributes["error.type"] == "toolwire.errors.AuthenticationError"


async def test_a_tool_runs_inside_its_span(otel: Otel) -> None:
    tracer = trace.get_tracer("tests", tracer_provider=otel.tracer_provider)

    async def lookup(word: str) -> str:
        with tracer.start_as_current_span("dictionary lookup"):
            return word.upper()

    model = ScriptedModel([reply(call("lookup", {"word": "tide"})), reply("TIDE")])
    await Agent(model=model, tools=[lookup], instrument=otel.settings()).arun("look up tide")
    spans = {s.name: s for s in otel.finished()}
    inner, tool = spans["dictionary lookup"], spans["execute_tool lookup"]
    assert inner.parent is not None and inner.parent.span_id == tool.context.span_id


async def test_a_run_inside_a_span_of_the_callers_is_its_child(otel: Otel) -> None:
    tracer = trace.get_tracer("tests", tracer_provider=otel.tracer_provider)
    with tracer.start_as_current_span("request handler") as outer:
        await Agent(model=ScriptedModel(["hi"]), instrument=otel.settings()).arun("hello")
    run = next(s for s in otel.finished() if s.name == "invoke_agent")
    assert run.parent is not None and run.parent.span_id == outer.get_span_context().span_id


async def test_an_agent_can_opt_out_and_nothing_is_traced_unless_asked(otel: Otel) -> None:
    await Agent(model=ScriptedModel(["hi"])).arun("hello")
    toolwire.instrument(tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider)
    await Agent(model=ScriptedModel(["hi"]), instrument=False).arun("hello")
    assert otel.finished() == []
    await Agent(model=ScriptedModel(["hi"])).arun("hello")
    assert [s.name for s in otel.finished()] == ["chat scripted", "invoke_agent"]


def test_an_mcp_tool_carries_the_mcp_conventions(otel: Otel) -> None:
    from toolwire.mcp import connect

    server = [sys.executable, str(Path(__file__).parent / "fixtures" / "mcp_server_weather.py")]
    model = ScriptedModel([reply(call("weather", {"city": "Oslo"}, id="call_w")), "Sunny."])
    with connect(server) as weather:
        result = Agent(model=model, tools=weather.tools, instrument=otel.settings()).run("Oslo?")
    assert result.messages[2].parts[0].content == "Sunny in Oslo, 21 C"
    [span] = [s for s in otel.finished() if s.name == "execute_tool weather"]
    attributes = dict(span.attributes or {})
    attributes.pop("gen_ai.tool.description")
    assert attributes == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "weather",
        "gen_ai.tool.call.id": "call_w", "gen_ai.tool.type": "extension",
        "mcp.method.name": "tools/call", "network.transport": "pipe"}


async def test_a_run_that_breaks_off_still_ends_its_spans(otel: Otel) -> None:
    from toolwire.testing import ScriptError

    model = ScriptedModel([reply(call("add", {"a": 1, "b": 2}))])  # no second reply scripted
    with pytest.raises(ScriptError):
        await Agent(model=model, tools=[add], instrument=otel.settings()).arun("1+2?")
    spans = {s.name: s for s in otel.finished()}
    assert set(spans) == {"invoke_agent", "chat scripted", "execute_tool add"}
    assert spans["invoke_agent"].status.status_code is StatusCode.ERROR
    assert (spans["invoke_agent"].attributes or {})["error.type"] == "_OTHER"


async def test_a_model_call_the_time_limit_cut_short_is_a_timeout(otel: Otel) -> None:
    import asyncio

    async def never(request: Any) -> Reply:
        await asyncio.sleep(60)
        raise AssertionError("the time limit should have come first")

    agent = Agent(model=ScriptedModel([never]), time_limit=0.2, instrument=otel.settings())
    result = await agent.arun("hello")
    assert result.stop == "time_limit"
    chat = next(s for s in otel.finished() if s.name == "chat scripted")
    assert chat.status.status_code is StatusCode.ERROR
    assert (chat.attributes or {})["error.type"] == "timeout"
    run = next(s for s in otel.finished() if s.name == "invoke_agent")
    assert (run.attributes or {})["toolwire.run.stop"] == "time_limit"


def test_a_call_started_early_and_abandoned_ends_its_span(otel: Otel) -> None:
    from toolwire.events import ToolAbandoned, ToolStarted
    from toolwire.telemetry.spans import RunTelemetry
    from toolwire.transcript import Request

    listener = RunTelemetry(otel.settings(), model=object(), request=Request(model="m"),
                            tools={}, stream=True)
    early = ToolCallPart(id="call_e", name="read_file", arguments={"path": "a.txt"})
    # the call starts in its own task, whose context (where its span is current) ends with it
    contextvars.copy_context().run(listener, ToolStarted(turn=1, call=early, early=True))
    assert trace.get_current_span() is trace.INVALID_SPAN
    listener(ToolAbandoned(turn=1, call=early, finished=False,
                           reason="the stream broke and the retried reply did not carry it"))
    [span] = otel.finished()
    assert span.name == "execute_tool read_file" and span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})["error.type"] == "cancelled"
    assert "retried reply" in str((span.attributes or {})["toolwire.tool.abandoned"])


async def test_cost_and_cache_counts_reach_the_spans(otel: Otel) -> None:
    usage = Usage(input_tokens=1200, output_tokens=40, cache_read_tokens=1000,
                  cache_write_tokens=150, reasoning_tokens=12, cost=0.0042)
    model = ScriptedModel([reply("cached", usage=usage)])
    await Agent(model=model, instrument=otel.settings()).arun("hello")
    for span in otel.finished():
        attributes = span.attributes or {}
        assert attributes["gen_ai.usage.input_tokens"] == 1200
        assert attributes["gen_ai.usage.cache_read.input_tokens"] == 1000
        assert attributes["gen_ai.usage.cache_creation.input_tokens"] == 150
        assert attributes["gen_ai.usage.reasoning.output_tokens"] == 12
        assert attributes["toolwire.usage.cost"] == 0.0042


def test_an_mcp_call_carries_its_span_to_the_server(otel: Otel) -> None:
    from toolwire.mcp import connect

    server = [sys.executable, str(Path(__file__).parent / "fixtures" / "mcp_server_trace.py")]
    model = ScriptedModel([reply(call("traceparent", {})), "Traced."])
    with connect(server) as tracing:
        result = Agent(model=model, tools=tracing.tools, instrument=otel.settings()).run("go")
        untraced = ScriptedModel([reply(call("traceparent", {})), "Untraced."])
        quiet = Agent(model=untraced, tools=tracing.tools, instrument=False).run("go")
    [span] = [s for s in otel.finished() if s.name == "execute_tool traceparent"]
    context = span.get_span_context()
    sent = result.messages[2].parts[0].content
    assert sent == f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"
    assert quiet.messages[2].parts[0].content == ""  # nothing current: nothing sent


def test_a_run_without_tracing_never_imports_opentelemetry(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from toolwire import Agent\n"
        "from toolwire.testing import ScriptedModel, call, reply\n"
        "def add(a: int, b: int) -> int:\n    return a + b\n"
        "model = ScriptedModel([reply(call('add', {'a': 1, 'b': 2})), 'three'])\n"
        "assert Agent(model=model, tools=[add]).run('1+2?').answer == 'three'\n"
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


async def test_every_run_of_a_batch_is_in_the_batchs_trace(otel: Otel, tmp_path: Path) -> None:
    tasks = [{"id": f"t{n}", "prompt": f"task {n}"} for n in range(3)]
    model = ScriptedModel(["done"] * 3)
    summary = await run_batch(tasks, model, tmp_path / "out.jsonl", concurrency=2,
                              options={"instrument": otel.settings()}, log=False)
    assert summary.all_ok
    spans = otel.finished()
    [batch] = [s for s in spans if s.name == "toolwire.batch"]
    runs = [s for s in spans if s.name == "invoke_agent"]
    assert len(runs) == 3
    assert {r.context.trace_id for r in runs} == {batch.context.trace_id}
    assert {r.parent.span_id for r in runs if r.parent} == {batch.context.span_id}
    assert (batch.attributes or {})["toolwire.batch.runs"] == 3


def test_instrument_names_the_package_to_install_when_the_api_is_missing(
        tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "sys.modules['opentelemetry'] = None\n"
        "import toolwire\n"
        "try:\n    toolwire.instrument()\n"
        "except toolwire.ConfigError as exc:\n    print(exc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "pip install opentelemetry-api" in proc.stdout


# --------------------------------------------------------------------------- the command line

CLI_ENV = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and not k.startswith("OTEL_")}


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], env=env, text=True,
                          capture_output=True, timeout=120, check=False)


def test_run_with_otel_sends_its_spans_to_the_collector(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    script = [{"text": "Looking.", "tool_calls": [{"id": "call_l1", "name": "list_files",
                                                   "arguments": {}}]},
              {"text": "One file: notes.txt."}]
    with Collector() as collector, Emulator(script) as emu:
        env = {**CLI_ENV, "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint}
        proc = cli("run", "What is here?", "--model", f"anthropic:claude-test@{emu.base_url}",
                   "--workdir", str(tmp_path), "--approve", "auto", "--otel", env=env)
        assert proc.returncode == 0, proc.stderr
        spans = collector.spans()
        metrics = collector.metric_names()
    names = sorted(s.name for s in spans)
    assert names == ["chat claude-test", "chat claude-test", "execute_tool list_files",
                     "invoke_agent"]
    [run] = [s for s in spans if s.name == "invoke_agent"]
    assert {s.trace_id for s in spans} == {run.trace_id}
    assert {s.parent_id for s in spans if s is not run} == {run.span_id}
    assert {s.service for s in spans} == {"toolwire"}
    assert run.attributes["gen_ai.provider.name"] == "anthropic"
    assert run.attributes["toolwire.run.stop"] == "answered"
    [tool] = [s for s in spans if s.name == "execute_tool list_files"]
    assert tool.attributes["gen_ai.tool.call.id"] == "call_l1"
    assert "gen_ai.tool.call.result" not in tool.attributes
    assert {"gen_ai.client.token.usage", "gen_ai.client.operation.duration"} <= metrics


def test_the_endpoint_variable_alone_turns_exporting_on(tmp_path: Path) -> None:
    with Collector() as collector, Emulator([{"text": "Nothing to do."}]) as emu:
        env = {**CLI_ENV, "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
               "OTEL_SERVICE_NAME": "nightly-agent", "OTEL_METRICS_EXPORTER": "none",
               "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}
        proc = cli("run", "Anything to do?", "--model", f"anthropic:claude-test@{emu.base_url}",
                   "--workdir", str(tmp_path), "--tools", "none", env=env)
        assert proc.returncode == 0, proc.stderr
        spans = collector.spans()
        paths = set(collector.paths)
    assert sorted(s.name for s in spans) == ["chat claude-test", "invoke_agent"]
    assert paths == {"/v1/traces"}  # spans only: metrics were turned off
    assert {s.service for s in spans} == {"nightly-agent"}
    [chat] = [s for s in spans if s.name == "chat claude-test"]
    assert "Anything to do?" in chat.attributes["gen_ai.input.messages"]


def test_a_history_is_written_for_spans_once_and_reads_as_one_json_list() -> None:
    """input_messages keeps each message's text: the next span writes only what is new, and
    what it gives is the JSON of the whole list, secrets out, as if written in one piece."""
    from toolwire.secrets import Redactor
    from toolwire.telemetry import content
    from toolwire.transcript import Message, ToolCallPart, ToolResultPart

    redactor = Redactor({"MY_API_KEY": "hunter2-is-the-key"})
    calls = 0

    def counting(text: str) -> str:
        nonlocal calls
        calls += 1
        return redactor(text)

    history = [Message.user("use hunter2-is-the-key please"),
               Message(role="assistant", parts=(ToolCallPart(id="c1", name="t",
                                                             arguments={"x": "ü\u2028"}),)),
               Message(role="tool", parts=(ToolResultPart(call_id="c1", content="ok"),))]
    kept: content.Kept = {}
    first = content.input_messages(history[:2], counting, kept)  # type: ignore[arg-type]
    whole = content.input_messages(history, counting, kept)  # type: ignore[arg-type]
    assert calls == 3  # each message once
    expected = [content._message(m) for m in history]
    assert json.loads(whole) == json.loads(redactor(
        json.dumps(expected)))
    assert "hunter2-is-the-key" not in whole and "[redacted: MY_API_KEY]" in whole
    assert json.loads(first) == json.loads(whole)[:2]


async def test_every_chat_span_holds_its_history_as_if_written_afresh(
        otel: Otel, monkeypatch: pytest.MonkeyPatch) -> None:
    """The spans of a long run, whose history is compacted part way, each carry the very text
    that writing the request's messages from nothing gives, secrets out."""
    from toolwire.secrets import Redactor
    from toolwire.telemetry import content

    monkeypatch.setenv("BILLING_SERVICE_TOKEN", SECRET)

    def fetch(page: int) -> str:
        return f"page {page}: " + "lorem ipsum ü\u2028 " * 40 + f"token {SECRET}"

    turns = 12
    model = ScriptedModel([reply(call("fetch", {"page": i}, id=f"c{i}"))
                           for i in range(turns)] + [reply("read them all")])
    agent = Agent(model=model, tools=[fetch], compaction="clear", context_window=1200,
                  instrument=otel.settings(capture=True))
    result = await agent.arun(f"Read every page, key {SHAPED}")
    assert result.ok
    assert any("was compacted" in note for note in result.notes)  # edited part way
    chats = sorted((s for s in otel.finished() if s.name == "chat scripted"),
                   key=lambda s: s.start_time or 0)
    assert len(chats) == len(model.requests) == turns + 1
    fresh = Redactor.shared()
    for span, request in zip(chats, model.requests, strict=True):
        shown = (span.attributes or {})["gen_ai.input.messages"]
        assert shown == content.input_messages(request.messages, fresh)
        assert SECRET not in str(shown) and SHAPED not in str(shown)


def test_a_message_replaced_by_an_equal_one_is_written_again() -> None:
    """A history whose message was replaced by one equal to it but written otherwise (its
    arguments in another order) shows the new one: what was kept is reused only for the very
    same message objects."""
    from toolwire.secrets import Redactor
    from toolwire.telemetry import content

    redact = Redactor({})
    first = ToolCallPart(id="c1", name="t", arguments={"a": 1, "b": 2})
    again = ToolCallPart(id="c1", name="t", arguments={"b": 2, "a": 1})
    assert first == again
    task = Message.user("go")
    inputs = content.InputMessages(redact)
    inputs((task, Message(role="assistant", parts=(first,))))
    shown = inputs((task, Message(role="assistant", parts=(again,)), Message.user("more")))
    assert json.loads(shown)[1]["parts"][0]["arguments"] == {"b": 2, "a": 1}
    assert list(json.loads(shown)[1]["parts"][0]["arguments"]) == ["b", "a"]


@st.composite
def histories(draw: st.DrawFn) -> list[tuple[Message, ...]]:
    """The histories of a run's requests: each the one before with rounds added, or cut
    short, or with a message replaced by a copy of another."""
    task = draw(st.sampled_from(["go", "use hunter2-is-the-key", "sk-ant-api03-" + "Q" * 40]))
    history: list[Message] = [Message.user(task)]
    seen = [tuple(history)]
    for _ in range(draw(st.integers(1, 8))):
        step = draw(st.sampled_from(["add", "add", "cut", "copy", "same"]))
        if step == "add":
            history.extend(draw(tool_rounds(text_args=draw(st.booleans()))))
        elif step == "cut":
            del history[draw(st.integers(0, len(history))):]
        elif step == "copy" and history:
            where = draw(st.integers(0, len(history) - 1))
            history[where] = replace(draw(st.sampled_from(history)))
        seen.append(tuple(history))
    return seen


@settings(max_examples=150, deadline=None)
@given(histories())
def test_a_runs_histories_read_as_written_afresh(seen: list[tuple[Message, ...]]) -> None:
    """However a run's history changes between requests, each request's
    ``gen_ai.input.messages`` is what writing its messages from nothing gives."""
    from toolwire.secrets import Redactor
    from toolwire.telemetry import content

    redact = Redactor({"MY_API_KEY": "hunter2-is-the-key"})
    inputs = content.InputMessages(redact)
    for messages in seen:
        assert inputs(messages) == content.input_messages(messages, redact)
