"""Batches through the providers' batch APIs, against the emulator on loopback: OpenAI (Chat
Completions and Responses), Anthropic Message Batches and Gemini batch mode, with one, ten and
a thousand tasks, runs of several rounds with tools, jobs that expire or are cancelled, requests
the batch refuses, a stopped batch picked up from its results file without sending anything
again, and the batch price. The emulator's clock is the test's: nothing waits for real."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.batch import run_provider_batch
from toolwire.batch.apis import unsupported
from toolwire.batch.files import BatchTask
from toolwire.batch.rounds import custom_id
from toolwire.context.prices import cost_of
from toolwire.emulator import Emulator, Fault
from toolwire.transcript import Message, Reply, Request, ToolCallPart, Usage

USAGE = Usage(input_tokens=1000, output_tokens=100)
APIS = {
    "anthropic": ("anthropic:claude-sonnet-4-5@{}", "anthropic", "claude-sonnet-4-5"),
    "openai-chat": ("openai:gpt-4o-mini@{}", "openai", "gpt-4o-mini"),
    "openai-responses": ("openai-responses:gpt-4o-mini@{}", "openai", "gpt-4o-mini"),
    "gemini": ("gemini:gemini-2.5-flash@{}", "google", "gemini-2.5-flash"),
}
ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


class Clock:
    """A clock the test moves: ``step`` seconds pass at each reading."""

    def __init__(self, step: float = 0.0) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def tool_turns(request: Request) -> int:
    return sum(1 for m in request.messages if m.role == "tool")


def answering(calls: int) -> Any:
    """Replies making ``calls`` tool calls, one a turn, then an answer naming the prompt; a
    prompt saying "refuse" gets a 400 instead."""

    def reply(request: Request, wire: str) -> Reply | Fault:
        prompt = request.messages[0].text
        if "refuse" in prompt:
            return Fault("bad_request", message="this request is refused")
        n = tool_turns(request)
        if n < calls:
            call = ToolCallPart(id=f"call_{n}", name="list_files", arguments={})
            return Reply(message=Message(role="assistant", parts=(call,)), stop="tool_calls",
                         usage=USAGE)
        return Reply(message=Message.assistant(f"done: {prompt}"), usage=USAGE)

    return reply


def tasks(n: int, *, tools: bool = True, prompt: str = "task {}") -> list[dict[str, Any]]:
    extra: dict[str, Any] = {"tools": ["list_files"]} if tools else {}
    return [{"id": f"t{i}", "prompt": prompt.format(i), **extra} for i in range(n)]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def results(path: Path) -> dict[str, dict[str, Any]]:
    return {line["id"]: line for line in lines(path) if "id" in line}


def jobs(path: Path) -> list[dict[str, Any]]:
    return [line for line in lines(path) if "batch_job" in line]


@pytest.mark.parametrize("api", list(APIS))
@pytest.mark.parametrize("n", [1, 10])
async def test_tasks_with_tools_go_round_by_round_at_the_batch_price(
        tmp_path: Path, api: str, n: int) -> None:
    form, provider, model = APIS[api]
    out = tmp_path / "r.jsonl"
    async with Emulator(answering(calls=2)) as emu:
        summary = await run_provider_batch(tasks(n), form.format(emu.base_url), out, poll=0)
        assert emu.batches.submitted == 3  # two rounds of tool calls, then the answers
        assert emu.batches.requests == 3 * n
        live = [r for r in emu.received if "batch" not in r.path and "files" not in r.path]
        assert len(live) == 3 * n  # every request answered inside a job, none sent live
    assert summary.all_ok and summary.done == n and summary.rounds == 3
    found = results(out)
    assert {found[f"t{i}"]["answer"] for i in range(n)} == {f"done: task {i}" for i in range(n)}
    assert all(line["turns"] == 3 for line in found.values())
    sent = jobs(out)
    assert [len(j["requests"]) for j in sent if "requests" in j] == [n, n, n]
    assert [j["ended"] for j in sent if "ended" in j] == ["ended"] * 3
    per_call = cost_of(USAGE, model, provider, batch=True)
    full = cost_of(USAGE, model, provider)
    assert per_call is not None and full is not None and per_call == pytest.approx(full / 2)
    assert found["t0"]["usage"]["cost"] == pytest.approx(3 * per_call)
    assert summary.cost == pytest.approx(3 * n * per_call)


@pytest.mark.parametrize("api", list(APIS))
async def test_an_expired_job_is_sent_again_once_then_reported(tmp_path: Path,
                                                              api: str) -> None:
    form = APIS[api][0]
    clock = Clock(step=3600.0)  # an hour passes at each look
    async with Emulator(answering(calls=0), clock=clock) as emu:
        emu.batches.latencies = [48 * 3600.0]  # the first job would take two days: it expires
        out = tmp_path / "r.jsonl"
        summary = await run_provider_batch(tasks(3, tools=False), form.format(emu.base_url),
                                           out, poll=0)
        assert summary.all_ok
        assert emu.batches.submitted == 2
        sent = jobs(out)
        assert [j.get("ended") for j in sent if "ended" in j] == ["expired", "ended"]
        assert [bool(j.get("resent")) for j in sent if "requests" in j] == [False, True]

        emu.batches.latencies = [48 * 3600.0, 48 * 3600.0]  # both expire: the task fails
        again = tmp_path / "again.jsonl"
        summary = await run_provider_batch(tasks(1, tools=False), form.format(emu.base_url),
                                           again, poll=0, runs=tmp_path / "again.runs")
        assert emu.batches.submitted == 4
        assert not summary.all_ok
        line = results(again)["t0"]
        assert line["stop"] == "provider_error"
        assert "expired" in line["error"]

        emu.batches.latencies = []  # a later rerun of the failed task sends it once more
        summary = await run_provider_batch(tasks(1, tools=False), form.format(emu.base_url),
                                           again, poll=0, runs=tmp_path / "again.runs",
                                           retry_failed=True)
        assert emu.batches.submitted == 5
    assert summary.all_ok
    assert results(again)["t0"]["answer"] == "done: task 0"


@pytest.mark.parametrize("api", list(APIS))
async def test_a_cancelled_job_is_sent_again_once(tmp_path: Path, api: str) -> None:
    form = APIS[api][0]
    async with Emulator(answering(calls=0), clock=Clock()) as emu:
        emu.batches.latencies = [10.0]  # the clock stands still: the first job stays open

        def progress(p: Any) -> None:  # someone cancels the job while it runs
            for job in emu.batches.jobs.values():
                if p.provider and not job.cancelling and job.state == "running":
                    job.cancelling = True

        out = tmp_path / "r.jsonl"
        summary = await run_provider_batch(tasks(2, tools=False), form.format(emu.base_url),
                                           out, poll=0, on_progress=progress)
        assert emu.batches.submitted == 2
    assert summary.all_ok
    assert [j.get("ended") for j in jobs(out) if "ended" in j] == ["cancelled", "ended"]


@pytest.mark.parametrize("api", list(APIS))
async def test_a_request_the_batch_refuses_is_that_tasks_error(tmp_path: Path,
                                                               api: str) -> None:
    form = APIS[api][0]
    rows = [*tasks(2, tools=False), {"id": "bad", "prompt": "please refuse this"}]
    async with Emulator(answering(calls=0)) as emu:
        out = tmp_path / "r.jsonl"
        summary = await run_provider_batch(rows, form.format(emu.base_url), out, poll=0)
        assert emu.batches.submitted == 1
    found = results(out)
    assert found["t0"]["ok"] and found["t1"]["ok"]
    assert found["bad"]["stop"] == "provider_error"
    assert "this request is refused" in found["bad"]["error"]
    assert not summary.all_ok and summary.failed == 1


@pytest.mark.parametrize("api", list(APIS))
async def test_a_stopped_batch_resumes_from_its_results_file_without_sending_again(
        tmp_path: Path, api: str) -> None:
    form = APIS[api][0]
    emu_clock = Clock()
    async with Emulator(answering(calls=1), clock=emu_clock) as emu:
        emu.batches.latency = 3600.0
        out = tmp_path / "r.jsonl"
        model = form.format(emu.base_url)
        first = await run_provider_batch(tasks(5), model, out, poll=0, max_wait=10,
                                         clock=Clock(step=1.0))
        assert first.waiting == 5 and not first.all_ok
        assert results(out) == {}
        assert emu.batches.submitted == 1
        asked = len(emu.received)

        emu_clock.now = 7200.0  # the provider answers while the batch is stopped
        emu.batches.latency = 0.0
        second = await run_provider_batch(tasks(5), model, out, poll=0)
        assert second.all_ok and second.waiting == 0
        # the first round's job was polled, not sent again: one more job, for round two
        assert emu.batches.submitted == 2
        assert emu.batches.requests == 10
        assert len(emu.received) > asked
    found = results(out)
    assert {found[f"t{i}"]["answer"] for i in range(5)} == {f"done: task {i}" for i in range(5)}
    assert all(line["resumed"] for line in found.values())


async def test_finish_live_cancels_the_job_and_answers_one_request_at_a_time(
        tmp_path: Path) -> None:
    async with Emulator(answering(calls=1), clock=Clock()) as emu:
        emu.batches.latency = 3600.0  # never ready: the clock stands still
        out = tmp_path / "r.jsonl"
        summary = await run_provider_batch(
            tasks(3), f"anthropic:claude-sonnet-4-5@{emu.base_url}", out, poll=0, max_wait=5,
            finish_live=True, clock=Clock(step=1.0))
        assert emu.batches.submitted == 1
        (job,) = emu.batches.jobs.values()
        assert job.state == "cancelled"
        live = [r for r in emu.received if r.path == "/v1/messages"]
        assert len(live) == 6  # both rounds of the three runs, sent live
    assert summary.all_ok
    assert [j.get("ended") for j in jobs(out) if "ended" in j] == ["cancelled"]


@pytest.mark.parametrize("api", list(APIS))
async def test_a_thousand_tasks_go_in_three_jobs_a_round(tmp_path: Path, api: str) -> None:
    async with Emulator(answering(calls=0)) as emu:
        out = tmp_path / "r.jsonl"
        summary = await run_provider_batch(
            tasks(1000, tools=False), APIS[api][0].format(emu.base_url), out, poll=0,
            log=False, max_requests=400)
        assert emu.batches.submitted == 3  # 400 + 400 + 200 requests
        assert emu.batches.requests == 1000
    assert summary.all_ok and summary.done == 1000
    assert len(results(out)) == 1000


def test_providers_without_a_batch_api_toolwire_drives_are_named() -> None:
    for provider in ("bedrock", "bedrock-anthropic"):
        why = unsupported(provider)
        assert why is not None and "S3" in why and "IAM" in why
    assert unsupported("vertex-anthropic") is not None
    assert unsupported("ollama") is not None
    for provider in ("anthropic", "openai", "openai-responses", "gemini"):
        assert unsupported(provider) is None


def toolwire(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], env=ENV, text=True,
                          capture_output=True, timeout=120)


def test_the_command_line_runs_a_provider_batch(tmp_path: Path) -> None:
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text("".join(json.dumps(t) + "\n" for t in tasks(4)), encoding="utf-8")
    out = tmp_path / "r.jsonl"
    with Emulator(answering(calls=1)) as emu:
        done = toolwire("batch", str(task_file), "--model",
                        f"anthropic:claude-sonnet-4-5@{emu.base_url}", "--out", str(out),
                        "--provider-batch", "--poll", "0.001")
        assert emu.batches.submitted == 2
    assert done.returncode == 0, done.stderr
    assert "round 2" in done.stderr and "2 round(s) through the provider's batch API" in (
        done.stderr)
    assert "provider: msgbatch_" in done.stderr and " ended" in done.stderr
    assert len(results(out)) == 4
    again = toolwire("batch", str(task_file), "--model", "anthropic:claude-sonnet-4-5@"
                     "http://127.0.0.1:9", "--out", str(out), "--provider-batch")
    assert again.returncode == 0, again.stderr  # a results file that starts with a job line


def test_a_bedrock_model_with_provider_batch_is_refused(tmp_path: Path) -> None:
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text(json.dumps({"id": 1, "prompt": "hi"}) + "\n", encoding="utf-8")
    done = toolwire("batch", str(task_file), "--model",
                    "bedrock:anthropic.claude-sonnet-4-5-v1:0", "--out",
                    str(tmp_path / "r.jsonl"), "--provider-batch")
    assert done.returncode == 2
    assert "Bedrock batch inference" in done.stderr and "S3" in done.stderr
    assert "Traceback" not in done.stderr


async def test_a_round_larger_than_gemini_takes_inline_is_cut_into_jobs(tmp_path: Path) -> None:
    big = "x" * 5_000_000  # four prompts of 5 MB: more than the 20 MB sent inline at once
    rows = [{"id": f"t{i}", "prompt": f"{i} {big}"} for i in range(4)]
    async with Emulator(lambda request, wire: Reply(message=Message.assistant("ok"),
                                                    usage=USAGE)) as emu:
        summary = await run_provider_batch(rows, f"gemini:gemini-2.5-flash@{emu.base_url}",
                                           tmp_path / "r.jsonl", poll=0, log=False)
        assert emu.batches.submitted == 2 and emu.batches.requests == 4
        sizes = [len(json.dumps([b for _, _, b in job.items]))
                 for job in emu.batches.jobs.values()]
    assert summary.all_ok
    assert all(size < 20_000_000 for size in sizes)


def test_the_command_line_stops_at_max_wait_and_a_rerun_picks_the_job_up(tmp_path: Path) -> None:
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text("".join(json.dumps(t) + "\n" for t in tasks(3)), encoding="utf-8")
    out = tmp_path / "r.jsonl"
    clock = Clock()
    with Emulator(answering(calls=1), clock=clock) as emu:
        emu.batches.latency = 3600.0
        argv = ["batch", str(task_file), "--model", f"openai:gpt-4o-mini@{emu.base_url}",
                "--out", str(out), "--provider-batch", "--poll", "0.01"]
        stopped = toolwire(*argv, "--max-wait", "0.05")
        assert stopped.returncode == 1, stopped.stderr
        assert "3 task(s) waiting" in stopped.stderr and "run the same command again" in (
            stopped.stderr)
        assert emu.batches.submitted == 1 and results(out) == {}
        clock.now = 7200.0  # the job is ready; the next round's answers come at once
        emu.batches.latency = 0.0
        done = toolwire(*argv)
        assert done.returncode == 0, done.stderr
        assert emu.batches.submitted == 2  # the first round's job was not sent again
    assert len(results(out)) == 3


def test_custom_ids_keep_long_ids_apart_and_fit_every_api() -> None:
    @given(st.text(min_size=1, max_size=200), st.text(min_size=1, max_size=200))
    def check(a: str, b: str) -> None:
        body = {"messages": [{"role": "user", "content": "same"}]}
        first = custom_id(BatchTask(id="x" * 50 + a, prompt="p"), body)
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", first)
        if a != b:
            assert first != custom_id(BatchTask(id="x" * 50 + b, prompt="p"), body)

    check()


def test_the_batch_price_is_the_tables_else_half_the_standard_price() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=200_000)
    for model, provider in (("claude-sonnet-4-5", "anthropic"), ("gpt-4o-mini", "openai"),
                            ("gemini-2.5-flash", "google"),  # the table's batch prices
                            ("claude-3-haiku-20240307", "anthropic")):  # none: half
        full = cost_of(usage, model, provider)
        batched = cost_of(usage, model, provider, batch=True)
        assert full is not None and batched == pytest.approx(full / 2)
    assert cost_of(usage, "no-such-model-anywhere", "openai", batch=True) is None


@pytest.mark.parametrize("api", list(APIS))
async def test_a_job_the_provider_refuses_whole_gives_every_run_its_reason(
        tmp_path: Path, api: str) -> None:
    async with Emulator(answering(calls=0)) as emu:
        emu.batches.refusals = ["this organization may not make batches now"]
        out = tmp_path / "r.jsonl"
        summary = await run_provider_batch(tasks(2, tools=False),
                                           APIS[api][0].format(emu.base_url), out, poll=0)
    assert summary.failed == 2
    for line in results(out).values():
        assert line["stop"] == "provider_error"
        assert "may not make batches now" in line["error"]


async def test_runs_that_reach_their_time_limit_while_waiting_end_the_batch(
        tmp_path: Path) -> None:
    rows = [{**row, "limits": {"time_limit": 0.2}} for row in tasks(2, tools=False)]
    async with Emulator(answering(calls=0), clock=Clock()) as emu:
        emu.batches.latency = 3600.0  # the clock stands still: the job never answers
        out = tmp_path / "r.jsonl"
        summary = await asyncio.wait_for(run_provider_batch(
            rows, f"anthropic:claude-sonnet-4-5@{emu.base_url}", out, poll=0.01), 60)
    assert summary.done == 2 and summary.failed == 2
    assert {line["stop"] for line in results(out).values()} == {"time_limit"}
