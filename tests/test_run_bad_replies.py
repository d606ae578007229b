"""Whatever a server sends, a run ends with a named stop and a log that reads back.

Every kind of bad reply, served with status 200 over loopback HTTP to a real `Agent.arun` in every
wire, whole and streamed: bodies that are not a reply (``null``, ``[]``, ``42``, ``""``, ``{}``,
nothing, nesting far beyond any reader's depth), an error body sent with status 200, numbers that
do not fit, a lone surrogate in a call's arguments, bytes that are not UTF-8 in a stream, a stream
cut inside a character or dropped mid-reply, a Responses event with a huge ``output_index``, any
status with any body. What must hold for each: a named stop (``bad_reply`` for a reply that cannot
be used, an answer where it can), the bad reply sent once more before giving up, never a stray
exception, and a log whose lines all parse and that `toolwire explain` reads. Whatever a tool does
(exit, return what cannot be written) is an error result.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bad_server import (
    ANSWER,
    BIG,
    CALL,
    MARK,
    PROVIDER,
    assert_ends_well,
    binary_framing,
    body,
    chunks,
    run_against,
    stream,
    surrogate_escape,
    swap,
    swap_in_stream,
    whole,
)
from toolwire import Agent, Message, Reply, RunStop, StreamError, Usage, WireFormatError
from toolwire.cli.app import main
from toolwire.codecs import WIRES
from toolwire.emulator import Emulator, Raw
from toolwire.events import RetryEvent
from toolwire.http.client import BAD_REPLY_RETRIES
from toolwire.http.client import model as make_model
from toolwire.schema.tool import Tool
from toolwire.testing import ScriptedModel, reply

DEEP = b"[" * 100_000 + b"]" * 100_000
NOT_A_REPLY = {
    "null": b"null", "list": b"[]", "number": b"42", "empty string": b'""', "empty object": b"{}",
    "no body": b"", "not json": b"<html>502 Bad Gateway</html>", "deep nesting": DEEP,
    "deep inside an object": b'{"choices": ' + DEEP + b"}",
    "error body": b'{"error": {"message": "the model is overloaded", "type": "server_error"}}',
    "typed error body": b'{"type": "error", "error": {"type": "overloaded_error", '
                        b'"message": "the model is overloaded"}}',
}


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("kind", list(NOT_A_REPLY))
async def test_a_body_that_is_not_a_reply_is_a_bad_reply(wire: str, kind: str,
                                                          tmp_path: Path) -> None:
    bad = body(NOT_A_REPLY[kind])
    log = tmp_path / "run.jsonl"
    result = await run_against(wire, [bad, bad, ANSWER], log)
    assert result.stop is RunStop.BAD_REPLY, result.error
    assert isinstance(result.error, WireFormatError) and wire in str(result.error)
    assert [m.role for m in result.messages] == ["user"]  # the bad reply is not in the history
    assert_ends_well(result, log)
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    retries = [e for e in logged if e["event"] == "retry"]
    assert len(retries) == BAD_REPLY_RETRIES and retries[0]["error_type"] == "WireFormatError"


@pytest.mark.parametrize("wire", WIRES)
async def test_an_error_body_with_status_200_names_what_the_server_said(
        wire: str, tmp_path: Path) -> None:
    bad = body(NOT_A_REPLY["error body"])
    result = await run_against(wire, [bad, bad], tmp_path / "run.jsonl")
    assert result.stop is RunStop.BAD_REPLY
    assert "status 200" in str(result.error) or "error" in str(result.error)


@pytest.mark.parametrize("wire", WIRES)
async def test_one_bad_reply_is_sent_again_and_the_run_goes_on(wire: str, tmp_path: Path) -> None:
    async with Emulator([body(b"{}"), ANSWER]) as emu:
        heard: list[Any] = []
        model = make_model(f"{PROVIDER[wire]}:m@{emu.base_url}", env={})
        result = await Agent(model=model, on_event=heard.append).arun("go")
        await model.aclose()
        emu.assert_done()
    assert result.stop is RunStop.ANSWERED and result.answer == ANSWER.text
    retries = [e for e in heard if isinstance(e, RetryEvent)]
    assert len(retries) == 1 and isinstance(retries[0].error, WireFormatError)
    assert len(emu.received) == 2


# -- bodies that look like replies but hold something no encoder writes ----------------------------


def _usage_out_of_range(wire: str, number: bytes) -> bytes:
    return swap(whole(wire, ANSWER), str(BIG), number)


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("number", [b"1e400", b"-1e400", b"1" + b"0" * 400],
                         ids=["1e400", "-1e400", "400 digits"])
async def test_a_usage_count_that_does_not_fit(wire: str, number: bytes, tmp_path: Path) -> None:
    bad = body(_usage_out_of_range(wire, number))
    log = tmp_path / "run.jsonl"
    result = await run_against(wire, [bad, bad], log)
    # usable text with an unusable count: an answer (the count clamped or dropped) or a bad reply
    assert result.stop in (RunStop.ANSWERED, RunStop.BAD_REPLY), result.error
    assert_ends_well(result, log)


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_a_lone_surrogate_in_call_arguments(wire: str, streamed: bool,
                                                  tmp_path: Path) -> None:
    if streamed:
        parts = chunks(wire, CALL)
        bad: Raw = stream(swap_in_stream(parts, MARK, surrogate_escape(b"".join(parts))))
    else:
        data = whole(wire, CALL)
        bad = body(swap(data, MARK, surrogate_escape(data)))
    log = tmp_path / "run.jsonl"
    result = await run_against(wire, [bad, ANSWER, ANSWER], log, stream=streamed)
    assert_ends_well(result, log)
    if streamed and binary_framing(wire):  # the changed bytes break the frame: a bad reply,
        assert result.stop is RunStop.ANSWERED and len(result.messages) == 2  # then the answer
        return
    # the text is carried (as U+FFFD, or escaped on the way back): the call runs, the run goes on
    assert result.stop is RunStop.ANSWERED, result.error
    [res] = result.messages[2].tool_results
    assert not res.is_error and res.content.startswith("18°C in ") and MARK not in res.content


# -- streams ---------------------------------------------------------------------------------------


def _text_reply(text: str) -> Reply:
    return Reply(message=Message.assistant(text), usage=Usage(input_tokens=3, output_tokens=2))


def _not_utf8(wire: str) -> list[bytes]:
    return swap_in_stream(chunks(wire, _text_reply(f"before {MARK} after")), MARK,
                          b"\xff\xfe\xc3")


def _cut_in_a_character(wire: str) -> list[bytes]:
    data = b"".join(chunks(wire, _text_reply("naïve café " * 20)))
    at = data.index("é".encode()) + 1  # between the two bytes of an é
    return [data[:at]]


def _dropped(wire: str) -> list[bytes]:
    parts = chunks(wire, _text_reply("a reply long enough to be dropped part of the way"))
    return parts[: max(1, len(parts) // 2)]


def _garbage_events(wire: str) -> list[bytes]:
    return [b"data: {\"x\": [1, 2\n\n", b"{]}\n", b"\x00\x01\x02\n\n", b"data: [DONE]\n\n"]


STREAMS = {"not utf-8": _not_utf8, "cut inside a character": _cut_in_a_character,
           "garbage events": _garbage_events}


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("kind", list(STREAMS))
async def test_a_stream_that_cannot_be_read_is_a_bad_reply(wire: str, kind: str,
                                                           tmp_path: Path) -> None:
    bad = stream(STREAMS[kind](wire))
    log = tmp_path / "run.jsonl"
    result = await run_against(wire, [bad, bad, ANSWER], log, stream=True)
    if kind == "not utf-8" and not binary_framing(wire):  # read as U+FFFD, the text kept
        assert result.stop is RunStop.ANSWERED, result.error
        assert result.answer.startswith("before ") and result.answer.endswith(" after")
        assert MARK not in result.answer
    elif binary_framing(wire) and kind != "cut inside a character":  # a CRC fails: retried
        assert result.stop is RunStop.PROVIDER_ERROR, result.error
        assert isinstance(result.error, StreamError) and "corrupted" in str(result.error)
    else:
        assert result.stop is RunStop.BAD_REPLY, result.error
        assert isinstance(result.error, WireFormatError) and wire in str(result.error)
    assert_ends_well(result, log)


@pytest.mark.parametrize("wire", WIRES)
async def test_a_stream_dropped_mid_reply_ends_with_a_named_stop(wire: str,
                                                                 tmp_path: Path) -> None:
    bad = stream(_dropped(wire), drop=True)
    log = tmp_path / "run.jsonl"
    result = await run_against(wire, [bad, bad, bad, bad], log, stream=True)
    assert result.stop in (RunStop.PROVIDER_ERROR, RunStop.BAD_REPLY), result.error
    assert result.error is not None
    assert_ends_well(result, log)


HUGE_INDEX = """
import asyncio, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from bad_server import ANSWER, CALL, assert_ends_well, chunks, run_against, stream
parts = chunks("openai-responses", CALL)
huge = [c.replace(b'"output_index":1', b'"output_index":1000000000000000000') for c in parts]
assert huge != parts
log = Path(sys.argv[2])
result = asyncio.run(run_against("openai-responses", [stream(huge), stream(huge), ANSWER], log,
                                 stream=True, time_limit=20))
assert_ends_well(result, log)
print(result.stop, "|", result.error)
"""


def test_a_huge_output_index_in_a_responses_stream_ends_the_run(tmp_path: Path) -> None:
    """An index from the wire drives no loop: the run ends (in its own process, so a hang
    fails the test instead of stalling the suite)."""
    done = subprocess.run([sys.executable, "-c", HUGE_INDEX, str(Path(__file__).parent),
                           str(tmp_path / "run.jsonl")], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    stop = done.stdout.split(" | ")[0]
    assert stop in set(RunStop), done.stdout


@pytest.mark.parametrize("status", [201, 204, 302, 400, 404, 418, 429, 500, 503, 599])
async def test_any_status_with_any_body_ends_with_a_named_stop(status: int,
                                                               tmp_path: Path) -> None:
    bad = Raw(body=DEEP[:5000] + b"\xff", status=status)
    log = tmp_path / "run.jsonl"
    result = await run_against("anthropic-messages", [bad] * 4, log)
    want = RunStop.BAD_REPLY if status < 400 else RunStop.PROVIDER_ERROR
    assert result.stop is want, result.error
    assert_ends_well(result, log)


# -- any model, not only over HTTP -----------------------------------------------------------------


@pytest.mark.parametrize("empty", [
    Reply(message=Message(role="assistant", parts=())),
    reply("   \n"),
    Reply(message=Message(role="assistant", parts=()), stop="tool_calls"),
], ids=["no parts", "blank text", "tool_calls without calls"])
async def test_a_reply_that_holds_nothing_is_not_an_answer(empty: Reply, tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    with ScriptedModel([empty]) as model:
        result = await Agent(model=model).arun("go", log=log)
    assert result.stop is RunStop.BAD_REPLY and result.answer == ""
    assert "holds no text and no tool call" in str(result.error)
    assert [m.role for m in result.messages] == ["user"]
    assert_ends_well(result, log)


@pytest.mark.parametrize("stop", ["max_tokens", "refusal", "content_filter", "error"])
async def test_an_empty_reply_whose_stop_says_why_keeps_that_stop(stop: str) -> None:
    empty = Reply(message=Message(role="assistant", parts=()), stop=stop)  # type: ignore[arg-type]
    with ScriptedModel([empty]) as model:
        result = await Agent(model=model).arun("go")
    assert result.stop is not RunStop.BAD_REPLY and result.stop is not RunStop.ANSWERED


# -- the command line ------------------------------------------------------------------------------


def test_the_command_line_exits_4_on_a_bad_reply(tmp_path: Path) -> None:
    with Emulator([body(b"{}"), body(b"{}")]) as emu:
        code = main(["run", "hello", "--model", f"openai-compatible:m@{emu.base_url}",
                     "--workdir", str(tmp_path), "--tools", "none", "--json",
                     "--log", str(tmp_path / "run.jsonl")])
    assert code == 4
    assert json.loads((tmp_path / "run.jsonl").read_text().splitlines()[-1])["stop"] == \
        "bad_reply"


def test_a_lone_surrogate_in_a_transcript_is_logged_and_explained(tmp_path: Path) -> None:
    """A model of any kind may hand the loop text that is not valid Unicode: the log writes it
    (escaped, and reads back the same), and `toolwire explain` in a real process whose output is
    UTF-8 shows it without a traceback."""
    from toolwire.testing import call

    log = tmp_path / "run.jsonl"
    tool = Tool(name="echo", input_schema={"type": "object",
                                           "properties": {"text": {"type": "string"}}},
                fn=lambda text: text)
    script = [reply("caf\udcff", call("echo", {"text": "\ud800!"}, id="c1")), reply("done \udfff")]
    with ScriptedModel(script) as model:
        result = asyncio.run(Agent(model=model, tools=[tool]).arun("go", log=log))
    assert result.stop is RunStop.ANSWERED and result.messages[2].tool_results[0].content == \
        "\ud800!"
    assert "\\udcff" in log.read_text(encoding="utf-8")  # escaped in the file
    assert_ends_well(result, log)
    for extra in ([], ["--html", str(tmp_path / "again.html")]):
        done = subprocess.run([sys.executable, "-m", "toolwire.cli", "explain", str(log), *extra],
                              capture_output=True, text=True, encoding="utf-8", check=False,
                              env={**os.environ, "PYTHONIOENCODING": "utf-8"})
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "caf\ufffd" in done.stdout or "caf\ufffd" in (tmp_path / "run.html").read_text()


# -- whatever a tool does --------------------------------------------------------------------------


def _exits() -> str:
    sys.exit(3)


async def _exits_async() -> str:
    raise SystemExit("bye")


def _too_deep() -> Any:
    value: Any = []
    for _ in range(100_000):
        value = [value]
    return value


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text for this")


@pytest.mark.parametrize(("fn", "says"), [
    (_exits, "SystemExit"), (_exits_async, "SystemExit: bye"),
    (_too_deep, "cannot be sent as JSON"), (lambda: _Unprintable(), "cannot be sent as JSON"),
], ids=["sys.exit", "async SystemExit", "nested too deep", "str raises"])
async def test_a_tool_that_misbehaves_gives_an_error_result(fn: Any, says: str,
                                                           tmp_path: Path) -> None:
    from toolwire.schema.tool import Tool
    from toolwire.testing import call

    tool = Tool(name="odd", input_schema={"type": "object", "properties": {}}, fn=fn)
    log = tmp_path / "run.jsonl"
    with ScriptedModel([reply(call("odd", {}, id="c1")), reply("went on")]) as model:
        result = await Agent(model=model, tools=[tool]).arun("go", log=log)
    assert result.stop is RunStop.ANSWERED
    [res] = result.messages[2].tool_results
    assert res.is_error and says in res.content
    assert_ends_well(result, log)


async def test_an_approver_that_answers_something_else_refuses_the_call() -> None:
    from toolwire.schema.tool import Tool
    from toolwire.testing import call

    tool = Tool(name="odd", input_schema={"type": "object", "properties": {}}, fn=lambda: "ran")
    with ScriptedModel([reply(call("odd", {}, id="c1")), reply("went on")]) as model:
        agent = Agent(model=model, tools=[tool], approval="ask",
                      approve=lambda request: "sure")  # type: ignore[arg-type,return-value]
        result = await agent.arun("go")
    [res] = result.messages[2].tool_results
    assert res.is_error and "answered str, not True, False or an Approval" in res.content
