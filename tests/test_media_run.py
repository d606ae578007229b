"""Media in a run: a task with attached media (in code and with ``toolwire run --attach``),
over loopback HTTP against the emulator, the request carrying each part where the wire takes it."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from media_files import pdf, png
from toolwire import Agent, Audio, Document, Image, MediaPart, Message, TextPart, TranscriptError
from toolwire.agent.run import task_messages
from toolwire.emulator import Emulator
from toolwire.http.client import model as make_model

ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + bytes(28)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_a_task_of_text_and_media_is_one_user_message_of_every_part_kind() -> None:
    chart = Image.from_bytes(png(8, 8))
    assert task_messages(["Compare", chart, TextPart(text="and say")]) == [Message(
        role="user", parts=(TextPart(text="Compare"), chart, TextPart(text="and say")))]
    assert task_messages([Message.user("a"), Message.assistant("b")]) == [
        Message.user("a"), Message.assistant("b")]
    with pytest.raises(TranscriptError, match=r"task item 1 is a Message: .* not a mix"):
        task_messages(["text", Message.user("a")])  # type: ignore[list-item]
    with pytest.raises(TranscriptError, match="task item 0 is a int"):
        task_messages([5])  # type: ignore[list-item]


async def test_agent_run_sends_attached_image_document_and_audio(tmp_path: Path) -> None:
    chart, report = png(16, 9), pdf("Revenue")
    (tmp_path / "chart.png").write_bytes(chart)
    async with Emulator([{"text": "Revenue grew."}]) as emu:
        model = make_model(f"gemini:m@{emu.base_url}", env={})
        agent = Agent(model=model)
        result = await agent.arun(["What do these show?", Image.from_path(tmp_path / "chart.png"),
                                   Document.from_bytes(report), Audio.from_bytes(WAV)])
        await model.aclose()
        body = emu.received[0].body
    assert result.answer == "Revenue grew."
    parts = body["contents"][0]["parts"]
    assert parts[0] == {"text": "What do these show?"}
    assert [p["inlineData"]["mimeType"] for p in parts[1:]] == [
        "image/png", "application/pdf", "audio/wav"]
    assert [p["inlineData"]["data"] for p in parts[1:]] == [b64(chart), b64(report), b64(WAV)]
    assert result.messages[0].media == (MediaPart(kind="image", media_type="image/png",
                                                  data=chart, name="chart.png"),
                                        Document.from_bytes(report), Audio.from_bytes(WAV))


def test_toolwire_run_attach_sends_the_files_typed_by_their_bytes(tmp_path: Path) -> None:
    chart, report = png(20, 10), pdf("Q3")
    (tmp_path / "chart.dat").write_bytes(chart)  # no telling name: the bytes say PNG
    (tmp_path / "report.pdf").write_bytes(report)
    work = tmp_path / "work"
    work.mkdir()
    with Emulator([{"text": "A chart and a report."}]) as emu:
        proc = subprocess.run(
            [sys.executable, "-m", "toolwire.cli", "run", "What are these?", "--model",
             f"anthropic:m@{emu.base_url}", "--workdir", str(work), "--approve", "never",
             "--attach", str(tmp_path / "chart.dat"), "--attach", str(tmp_path / "report.pdf"),
             "--log", str(tmp_path / "run.jsonl")],
            capture_output=True, text=True, env=ENV, timeout=120)
        body = emu.received[0].body
    assert proc.returncode == 0, proc.stderr
    content = body["messages"][0]["content"]
    assert content[0] == {"type": "text", "text": "What are these?"}
    assert content[1]["type"] == "image" and content[1]["source"] == {
        "type": "base64", "media_type": "image/png", "data": b64(chart)}
    assert content[2]["type"] == "document" and content[2]["source"]["data"] == b64(report)
    assert "A chart and a report." in proc.stdout
    logged = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    task = next(e for e in logged if e["event"] == "message")
    assert [p["type"] for p in task["message"]["parts"]] == ["text", "media", "media"]
