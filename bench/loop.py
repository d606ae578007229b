"""Per-turn overhead of the agent loop, next to pydantic-ai and openai-agents in the same process.

Each framework runs the same conversation: a scripted model that calls one trivial tool per turn
for ``TURNS`` turns, then answers. Timestamps taken inside the model function and inside the
tool give, for every turn, the loop's own time: from one model call to the next, minus the time
spent in the model and in the tool. The medians over a window of turns around turn 10 and around
turn 200, over several runs, are reported in microseconds.

Run: ``python bench/loop.py`` (``--runs N`` for more repeats, ``--sync-tool`` for a plain
function tool instead of an async one). Peers that are not installed are reported as such.
``--instrument`` measures toolwire alone: without tracing, traced with OpenTelemetry's no-op
providers (the work toolwire itself adds), and traced with the SDK's tracer and meter providers
(a batching span processor whose exporter drops what it is given, histograms kept in memory),
and the same with content capture on: the target is a turn traced with the SDK under 100 µs,
and with content capture a turn 200 within 1.2x of turn 10 (each message written once).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
from collections.abc import Callable, Coroutine
from typing import Any

TURNS = 200
WINDOWS = {10: range(6, 16), 200: range(191, 201)}
TRACED_TARGET_US = 100.0
CONTENT_GROWTH = 1.2
INSTRUMENT: Any = None
"""What toolwire's agent gets as ``instrument`` (a `toolwire.telemetry.settings.Telemetry`)."""


class Clock:
    """Timestamps (ns) of model and tool entry and exit, per turn."""

    def __init__(self) -> None:
        self.model_in: list[int] = []
        self.model_out: list[int] = []
        self.tool_in: list[int] = []
        self.tool_out: list[int] = []

    def overheads(self) -> dict[int, float]:
        """Loop time of turn k (1-based): model call k to model call k+1, minus model and tool."""
        out: dict[int, float] = {}
        for k in range(1, len(self.model_in)):
            span = self.model_in[k] - self.model_in[k - 1]
            model = self.model_out[k - 1] - self.model_in[k - 1]
            tool = self.tool_out[k - 1] - self.tool_in[k - 1]
            out[k] = (span - model - tool) / 1000
        return out


Runner = Callable[[Clock, bool], Coroutine[Any, Any, None]]


# ------------------------------------------------------------------ toolwire


async def run_toolwire(clock: Clock, sync_tool: bool) -> None:
    from toolwire.agent.loop import Agent, RunStop
    from toolwire.schema.tool import Tool
    from toolwire.testing import ScriptedModel, call, reply
    from toolwire.transcript import Reply, Request

    replies = [reply(call("noop", {"x": i}, id=f"call_{i}")) for i in range(TURNS)]
    replies.append(reply("done"))
    turn = 0

    def model(request: Request) -> Reply:
        nonlocal turn
        clock.model_in.append(time.perf_counter_ns())
        answer = replies[turn]
        turn += 1
        clock.model_out.append(time.perf_counter_ns())
        return answer

    def noop_sync(x: int) -> int:
        clock.tool_in.append(time.perf_counter_ns())
        clock.tool_out.append(time.perf_counter_ns())
        return x

    async def noop_async(x: int) -> int:
        clock.tool_in.append(time.perf_counter_ns())
        clock.tool_out.append(time.perf_counter_ns())
        return x

    fn = noop_sync if sync_tool else noop_async
    scripted = ScriptedModel([model] * (TURNS + 1))
    agent = Agent(model=scripted, tools=[Tool.from_function(fn, name="noop")],
                  max_turns=TURNS + 1, instrument=INSTRUMENT)
    result = await agent.arun("go")
    assert result.stop is RunStop.ANSWERED and result.turns == TURNS + 1, result.stop


# ------------------------------------------------------------------ pydantic-ai


async def run_pydantic_ai(clock: Clock, sync_tool: bool) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import UsageLimits

    replies = [ModelResponse(parts=[ToolCallPart(tool_name="noop", args={"x": i},
                                                 tool_call_id=f"call_{i}")])
               for i in range(TURNS)]
    replies.append(ModelResponse(parts=[TextPart(content="done")]))
    turn = 0

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal turn
        clock.model_in.append(time.perf_counter_ns())
        answer = replies[turn]
        turn += 1
        clock.model_out.append(time.perf_counter_ns())
        return answer

    agent = Agent(FunctionModel(model))

    if sync_tool:
        @agent.tool_plain
        def noop(x: int) -> int:
            clock.tool_in.append(time.perf_counter_ns())
            clock.tool_out.append(time.perf_counter_ns())
            return x
    else:
        @agent.tool_plain
        async def noop(x: int) -> int:
            clock.tool_in.append(time.perf_counter_ns())
            clock.tool_out.append(time.perf_counter_ns())
            return x

    result = await agent.run("go", usage_limits=UsageLimits(request_limit=None))
    assert result.output == "done"


# ------------------------------------------------------------------ openai-agents


async def run_openai_agents(clock: Clock, sync_tool: bool) -> None:
    from agents import Agent, Runner, function_tool, set_tracing_disabled
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    set_tracing_disabled(True)
    outputs: list[Any] = [
        [ResponseFunctionToolCall(type="function_call", call_id=f"call_{i}", name="noop",
                                  arguments=f'{{"x": {i}}}', id=f"fc_{i}")]
        for i in range(TURNS)
    ]
    outputs.append([ResponseOutputMessage(
        id="msg_done", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text="done", annotations=[])],
    )])

    class Scripted(Model):
        def __init__(self) -> None:
            self.turn = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            clock.model_in.append(time.perf_counter_ns())
            answer = ModelResponse(output=outputs[self.turn], usage=Usage(), response_id=None)
            self.turn += 1
            clock.model_out.append(time.perf_counter_ns())
            return answer

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    if sync_tool:
        @function_tool
        def noop(x: int) -> int:
            clock.tool_in.append(time.perf_counter_ns())
            clock.tool_out.append(time.perf_counter_ns())
            return x
    else:
        @function_tool
        async def noop(x: int) -> int:
            clock.tool_in.append(time.perf_counter_ns())
            clock.tool_out.append(time.perf_counter_ns())
            return x

    agent = Agent(name="bench", model=Scripted(), tools=[noop])
    result = await Runner.run(agent, "go", max_turns=TURNS + 1)
    assert result.final_output == "done"


# ------------------------------------------------------------------ driver

PEERS: dict[str, tuple[str, Runner]] = {
    "toolwire": ("toolwire", run_toolwire),
    "pydantic-ai": ("pydantic_ai", run_pydantic_ai),
    "openai-agents": ("agents", run_openai_agents),
}


def installed(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def measure(runner: Runner, runs: int, sync_tool: bool) -> dict[int, float]:
    """Median loop time (µs) per turn in each window, over ``runs`` runs (after one warm-up)."""
    samples: dict[int, list[float]] = {k: [] for k in WINDOWS}
    for attempt in range(runs + 1):
        clock = Clock()
        gc.collect()
        asyncio.run(runner(clock, sync_tool))
        if attempt == 0:
            continue
        per_turn = clock.overheads()
        for k, window in WINDOWS.items():
            samples[k].extend(per_turn[t] for t in window)
    return {k: statistics.median(v) for k, v in samples.items()}


def tracing() -> Any:
    """Telemetry as a traced application has it: the SDK's providers, spans batched to an
    exporter that drops them, histograms kept in memory."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )

    from toolwire.telemetry.settings import Telemetry

    class Dropped(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(BatchSpanProcessor(Dropped()))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    return Telemetry(tracer_provider, meter_provider)


def traced_main(runs: int, sync_tool: bool) -> None:
    """toolwire without tracing, traced with the API's no-op providers (what toolwire itself
    adds), traced with the SDK (what a traced application pays), and with the SDK and content
    capture (messages, arguments and results on the spans, secrets taken out)."""
    global INSTRUMENT
    from opentelemetry.metrics import NoOpMeterProvider
    from opentelemetry.trace import NoOpTracerProvider

    from toolwire.telemetry.settings import Telemetry

    sdk = tracing()
    cases = {"toolwire": None,
             "traced, no-op": Telemetry(NoOpTracerProvider(), NoOpMeterProvider()),
             "traced, SDK": sdk,
             "SDK + content": Telemetry(sdk.tracer_provider, sdk.meter_provider, True)}
    got: dict[str, dict[int, float]] = {}
    for label, telemetry in cases.items():
        INSTRUMENT = telemetry
        got[label] = measure(run_toolwire, runs, sync_tool)
    INSTRUMENT = None
    print(f"{'':14s} {'turn 10':>10s} {'turn 200':>10s} {'added':>8s}")
    plain = got["toolwire"]
    for label, turn in got.items():
        added = max(turn[k] - plain[k] for k in WINDOWS)
        print(f"{label:14s} {turn[10]:10.1f} {turn[200]:10.1f} {added:8.1f}")
    ok = max(got["traced, SDK"].values()) < TRACED_TARGET_US
    print(f"target (a turn traced with the SDK under {TRACED_TARGET_US:.0f} µs):",
          "met" if ok else "NOT met")
    content = got["SDK + content"]
    flat = content[200] <= CONTENT_GROWTH * content[10]
    print(f"target (with content capture, turn 200 within {CONTENT_GROWTH}x of turn 10):",
          f"{'met' if flat else 'NOT met'} ({content[200] / content[10]:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sync-tool", action="store_true", help="a plain function tool")
    parser.add_argument("--instrument", action="store_true",
                        help="toolwire alone, without and with OpenTelemetry tracing")
    args = parser.parse_args()
    kind = "sync" if args.sync_tool else "async"
    print(f"Loop overhead per turn (µs, median), {TURNS}-turn run, one {kind} tool call per turn")
    if args.instrument:
        traced_main(args.runs, args.sync_tool)
        return
    results: dict[str, dict[int, float]] = {}
    for label, (module, runner) in PEERS.items():
        if not installed(module):
            print(f"{label:14s} not installed")
            continue
        results[label] = measure(runner, args.runs, args.sync_tool)
    ours = results["toolwire"]
    print(f"{'':14s} {'turn 10':>10s} {'turn 200':>10s} {'200/10':>8s}")
    ok = ours[200] / ours[10] <= 1.5
    for label, got in results.items():
        line = f"{label:14s} {got[10]:10.1f} {got[200]:10.1f} {got[200] / got[10]:8.2f}"
        if label != "toolwire":
            ratios = (got[10] / ours[10], got[200] / ours[200])
            ok = ok and min(ratios) >= 10
            line += f"   toolwire: {ratios[0]:.0f}x less at turn 10, {ratios[1]:.0f}x at 200"
        print(line)
    print("targets (>=10x less than each peer; turn 200 within 1.5x of turn 10):",
          "met" if ok else "NOT met")

if __name__ == "__main__":
    main()
