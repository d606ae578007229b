"""The emulator's batch APIs, driven by the providers' own SDKs over loopback: what it answers
has the shapes the official clients read (OpenAI's files and batches, Anthropic's Message
Batches, Gemini's batch mode), and a job the provider would refuse fails as it would."""

from __future__ import annotations

import io
import json

from toolwire.emulator import Emulator
from toolwire.transcript import Message, Reply, Usage

REPLY = Reply(message=Message.assistant("hello from a job"),
              usage=Usage(input_tokens=7, output_tokens=3))


def always(request: object, wire: str) -> Reply:
    return REPLY


def test_the_openai_sdk_uploads_makes_polls_and_reads_a_job() -> None:
    import openai

    with Emulator(always) as emu:
        client = openai.OpenAI(api_key="k", base_url=emu.base_url + "/v1", max_retries=0)
        lines = "".join(json.dumps({
            "custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]},
        }) + "\n" for i in range(3))
        made = client.files.create(file=("in.jsonl", io.BytesIO(lines.encode())),
                                   purpose="batch")
        job = client.batches.create(input_file_id=made.id, endpoint="/v1/chat/completions",
                                    completion_window="24h")
        assert emu.batches.submitted == 1
        done = client.batches.retrieve(job.id)
        assert done.status == "completed" and done.request_counts is not None
        assert done.request_counts.completed == 3 and done.output_file_id
        out = [json.loads(x) for x in client.files.content(done.output_file_id).text.splitlines()]
        assert sorted(x["custom_id"] for x in out) == ["r0", "r1", "r2"]
        body = out[0]["response"]["body"]
        assert body["choices"][0]["message"]["content"] == "hello from a job"


def test_an_openai_job_with_a_line_for_another_endpoint_fails_whole() -> None:
    import openai

    with Emulator(always) as emu:
        client = openai.OpenAI(api_key="k", base_url=emu.base_url + "/v1", max_retries=0)
        line = json.dumps({"custom_id": "a", "method": "POST", "url": "/v1/embeddings",
                           "body": {}}) + "\n"
        made = client.files.create(file=("in.jsonl", io.BytesIO(line.encode())),
                                   purpose="batch")
        job = client.batches.create(input_file_id=made.id, endpoint="/v1/chat/completions",
                                    completion_window="24h")
        assert job.status == "failed"
        assert job.errors is not None and job.errors.data
        assert "url must be /v1/chat/completions" in str(job.errors.data[0].message)


def test_the_anthropic_sdk_makes_a_message_batch_and_reads_its_results() -> None:
    import anthropic

    with Emulator(always) as emu:
        client = anthropic.Anthropic(api_key="k", base_url=emu.base_url, max_retries=0)
        params = {"model": "claude-sonnet-4-5", "max_tokens": 64,
                  "messages": [{"role": "user", "content": "hi"}]}
        job = client.messages.batches.create(requests=[
            {"custom_id": "one", "params": params},  # type: ignore[list-item]
            {"custom_id": "two", "params": {**params, "messages": []}},  # type: ignore[list-item]
        ])
        assert job.processing_status in ("in_progress", "ended")
        done = client.messages.batches.retrieve(job.id)
        assert done.processing_status == "ended" and done.results_url
        assert done.request_counts.succeeded == 1 and done.request_counts.errored == 1
        results = {r.custom_id: r.result for r in client.messages.batches.results(job.id)}
        assert results["one"].type == "succeeded"
        assert results["one"].message.content[0].text == "hello from a job"  # type: ignore[union-attr]
        assert results["two"].type == "errored"


def test_an_anthropic_job_that_outlives_its_window_expires() -> None:
    import anthropic

    now = [0.0]
    with Emulator(always, clock=lambda: now[0]) as emu:
        emu.batches.latency = 30 * 3600.0
        client = anthropic.Anthropic(api_key="k", base_url=emu.base_url, max_retries=0)
        job = client.messages.batches.create(requests=[{"custom_id": "one", "params": {
            "model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}}])
        assert client.messages.batches.retrieve(job.id).processing_status == "in_progress"
        now[0] = 25 * 3600.0
        done = client.messages.batches.retrieve(job.id)
        assert done.processing_status == "ended" and done.request_counts.expired == 1
        (result,) = client.messages.batches.results(job.id)
        assert result.result.type == "expired"


def test_the_genai_sdk_makes_a_gemini_batch_and_reads_its_inline_answers() -> None:
    from google import genai
    from google.genai import types

    with Emulator(always) as emu:
        client = genai.Client(api_key="k", http_options=types.HttpOptions(
            base_url=emu.base_url))
        job = client.batches.create(model="gemini-2.5-flash", src=[
            {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
             "metadata": {"key": "first"}}])
        assert job.name and job.name.startswith("batches/")
        done = client.batches.get(name=job.name)
        assert done.state == types.JobState.JOB_STATE_SUCCEEDED
        assert done.dest is not None and done.dest.inlined_responses
        answer = done.dest.inlined_responses[0]
        assert answer.response is not None and answer.response.text == "hello from a job"
        client.batches.cancel(name=job.name)  # over already: nothing changes
        assert client.batches.get(name=job.name).state == types.JobState.JOB_STATE_SUCCEEDED
