"""Run logs of every format toolwire wrote still read, explain and resume; newer ones are refused.

``tests/fixtures/runlogs/format1_interrupted.jsonl`` was written by a real run with the format-1
code (see the README next to it): a retry, a call with its result, and a call cut off mid-run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from toolwire.agent.loop import Agent, RunStop
from toolwire.agent.runlog import LOG_FORMAT, read_log
from toolwire.cli.app import main
from toolwire.errors import TranscriptError
from toolwire.explain.build import explain_file, render_text
from toolwire.rules import check_transcript
from toolwire.schema.tool import Tool
from toolwire.testing import ScriptedModel, reply

FIXTURES = Path(__file__).parent / "fixtures" / "runlogs"
FORMAT1 = FIXTURES / "format1_interrupted.jsonl"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def note_tools(written: list[str]) -> list[Tool]:
    def read_note(name: str) -> str:
        """Read a note."""
        return f"{name}: buy milk"

    def write_note(name: str, text: str) -> str:
        """Write a note."""
        written.append(text)
        return "written"

    return [Tool.from_function(read_note), Tool.from_function(write_note)]


def test_the_fixture_is_format_1_and_today_writes_a_later_one() -> None:
    assert lines(FORMAT1)[0]["format"] == 1
    assert LOG_FORMAT > 1


def test_a_format_1_log_still_reads() -> None:
    logged = read_log(FORMAT1)
    assert logged.header["model"] == "openai-compatible:gpt-4.1"
    assert [m.role for m in logged.messages] == ["user", "assistant", "tool", "assistant"]
    assert logged.turns == 2 and logged.usage.input_tokens == 110
    assert [(r["turn"], r["error_type"]) for r in logged.retries] == [(1, "RateLimitError")]
    assert [c.name for c in logged.pending] == ["write_note"]
    assert logged.started == {"call_r1", "call_w2"} and set(logged.results) == {"call_r1"}
    assert logged.stop is None and not logged.torn


def test_a_format_1_log_still_explains(capsys: pytest.CaptureFixture[str]) -> None:
    text = render_text(explain_file(FORMAT1))
    assert "read_note" in text and "write_note" in text
    assert "turn 1: the request was retried after RateLimitError" in text
    assert main(["explain", str(FORMAT1)]) == 0
    assert "model: openai-compatible:gpt-4.1" in capsys.readouterr().out


async def test_a_format_1_log_still_resumes(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    shutil.copy(FORMAT1, log)
    written: list[str] = []
    with ScriptedModel(["The todo note is marked done."]) as model:
        agent = Agent(model=model, tools=note_tools(written), system="Keep notes tidy.")
        result = await agent.aresume(log)
    assert result.stop is RunStop.ANSWERED and result.turns == 3
    assert written == []  # write_note was cut off mid-run and is not idempotent: not run again
    interrupted = result.messages[4].tool_results[0]
    assert interrupted.call_id == "call_w2" and interrupted.is_error
    assert "interrupted" in interrupted.content
    assert check_transcript(result.messages) == []
    added = lines(log)[len(lines(FORMAT1)):]
    assert added[0] == {**added[0], "event": "resume", "format": LOG_FORMAT, "turns": 2}
    assert added[-1]["event"] == "stop" and added[-1]["stop"] == "answered"
    again = read_log(log)  # the old header with today's lines after it reads as one run
    assert again.stop == "answered" and len(again.messages) == 6


def newer(tmp_path: Path) -> Path:
    path = tmp_path / "newer.jsonl"
    head, *rest = FORMAT1.read_text().splitlines(keepends=True)
    path.write_text(json.dumps({**json.loads(head), "format": LOG_FORMAT + 1}) + "\n"
                    + "".join(rest))
    return path


async def test_a_log_of_a_newer_format_is_refused_saying_to_upgrade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = newer(tmp_path)
    said = rf"format {LOG_FORMAT + 1} is not supported .* reads formats 1 to {LOG_FORMAT}"
    with pytest.raises(TranscriptError, match=said) as caught:
        read_log(path)
    assert "Upgrade toolwire" in str(caught.value) and "newer.jsonl:1" in str(caught.value)
    with pytest.raises(TranscriptError, match=said):
        explain_file(path)
    with pytest.raises(TranscriptError, match=said):
        await Agent(model=ScriptedModel([]), tools=note_tools([])).aresume(path)
    assert main(["explain", str(path)]) != 0
    err = capsys.readouterr().err
    assert f"format {LOG_FORMAT + 1}" in err and "Upgrade toolwire" in err


def test_a_resume_line_of_a_newer_format_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    shutil.copy(FORMAT1, path)
    with path.open("a") as f:
        f.write(json.dumps({"event": "resume", "t": 0, "format": LOG_FORMAT + 1,
                            "messages": 4, "turns": 2}) + "\n")
    with pytest.raises(TranscriptError, match=rf"run.jsonl:12: run log format {LOG_FORMAT + 1}"):
        read_log(path)


def test_a_log_written_today_carries_todays_format(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    with ScriptedModel([reply("hi")]) as model:
        Agent(model=model).run("hello", log=log)
    head = lines(log)[0]
    assert head["event"] == "header" and head["format"] == LOG_FORMAT
    assert head["model"] == head["request_model"] == "scripted"
    assert read_log(log).stop == "answered"


FORMAT2 = FIXTURES / "format2_streamed.jsonl"


def test_a_format_2_log_reads_and_shows_its_time_from_its_timestamps() -> None:
    assert lines(FORMAT2)[0]["format"] == 2
    logged = read_log(FORMAT2)
    assert [m.role for m in logged.messages] == ["user", "assistant", "tool", "assistant"]
    assert logged.stop == "answered" and logged.time.abandoned == []
    assert set(logged.time.turns) == {1, 2}
    assert all("first_token" not in t for t in logged.time.turns.values())  # not in format 2
    assert [(s.lane, s.label) for s in logged.time.spans] == [
        ("model", "model call 1"), ("tools", "read_note"), ("model", "model call 2")]
    text = render_text(explain_file(FORMAT2))
    assert "turn 1: whole reply" in text and "first token" not in text
    from toolwire.explain.html import render_html

    assert 'id="time-axis"' in render_html(explain_file(FORMAT2))


FORMAT5 = FIXTURES / "format5_media.jsonl"


def test_a_format_5_log_keeps_its_media_inline_and_still_reads_them() -> None:
    assert lines(FORMAT5)[0]["format"] == 5
    assert not Path(f"{FORMAT5}.media").exists()
    logged = read_log(FORMAT5)
    task, _, results, _ = logged.messages
    assert [(p.name, p.media_type, p.size) for p in task.media] == [("logo.png", "image/png", 78)]
    (chart,) = results.tool_results[0].media
    assert (chart.name, chart.size) == ("chart.png", 5868)
    assert chart.data is not None and chart.data.startswith(b"\x89PNG\r\n\x1a\n")
