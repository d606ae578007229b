"""``toolwire chat`` on a real pseudo-terminal against the emulator: two user turns, an
approval, ``/undo`` putting a file back, ``/log``, ``/exit``, and the log resumed; and
``Agent.aresume(log, message=...)``, which a chat's every next line uses.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ptys import drive_on_pty
from toolwire.agent.loop import Agent
from toolwire.agent.runlog import read_log
from toolwire.emulator import Emulator
from toolwire.rules import check_transcript
from toolwire.testing import ScriptedModel, reply
from toolwire.transcript import Message

ENV = {k: v for k, v in os.environ.items()
       if not k.endswith("_API_KEY") and not k.startswith("TOOLWIRE_")}


def write(call_id: str, path: str, content: str) -> dict[str, object]:
    return {"tool_calls": [{"id": call_id, "name": "write_file",
                            "arguments": {"path": path, "content": content}}]}


def user_lines(messages: list[Message]) -> list[str]:
    return [m.text for m in messages if m.role == "user" and not m.tool_results]


def test_two_turns_an_approval_undo_exit_and_resume(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("old notes\n")
    log = tmp_path / "chat.jsonl"
    script = [write("call_c1", "todo.txt", "buy milk\n"), {"text": "Written."},
              write("call_c2", "notes.txt", "new notes\n"), {"text": "Replaced."},
              {"text": "Still here, with the todo list."}]
    with Emulator(script) as emu:
        model = f"anthropic:m@{emu.base_url}"
        screen = drive_on_pty(
            ["chat", "--model", model, "--workdir", str(work), "--log", str(log),
             "--sandbox", "off", "--color", "never"],
            [("you> ", "make a todo list"), ("allow write_file", "y"),
             ("you> ", "and replace the notes"), ("allow write_file", "y"),
             ("you> ", "/undo"), ("you> ", "/log"), ("you> ", "/exit")], ENV)
        assert "Written." in screen and "Replaced." in screen
        assert "undid the last turn (4 message(s) dropped); files put back: notes.txt. What " \
               "run_command did in it is not reverted." in screen
        assert f"run log: {log}" in screen
        assert (work / "todo.txt").read_text() == "buy milk\n"  # the first turn stays
        assert (work / "notes.txt").read_text() == "old notes\n"  # the undone turn is undone
        logged = read_log(log)
        assert user_lines(logged.messages) == ["make a todo list"]
        assert not [p for p in check_transcript(logged.messages, None) if p.severity == "error"]

        again = drive_on_pty(["chat", "--resume", str(log), "--color", "never"],
                             [("you> ", "are you there?"), ("you> ", "/exit")], ENV)
        sent = emu.received[-1].body["messages"]
    assert "Still here, with the todo list." in again
    texts = [str(m["content"]) for m in sent]
    assert any("make a todo list" in t for t in texts)
    assert not any("replace the notes" in t for t in texts)  # the undone turn is gone
    assert any("are you there?" in t for t in texts)
    assert user_lines(read_log(log).messages) == ["make a todo list", "are you there?"]


def test_resume_with_a_message_goes_on_after_an_answer(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    model = ScriptedModel([reply("Hello."), reply("Second answer.")])
    agent = Agent(model=model)
    assert agent.run("hi", log=log).answer == "Hello."
    assert agent.resume(log).answer == "Hello."  # without a message: it had answered
    result = asyncio.run(agent.aresume(log, message="and then?"))
    assert result.answer == "Second answer." and result.turns == 2
    assert user_lines(read_log(log).messages) == ["hi", "and then?"]


def test_undo_leaves_alone_what_the_person_changed_after_the_turn(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("old notes\n")

    def by_hand() -> str:  # after the turn, before /undo
        (work / "notes.txt").write_text("new notes\nmy own line\n")
        (work / "todo.txt").write_text("buy milk\nand bread, by hand\n")
        return "/undo"

    calls = [{"id": i, "name": "write_file", "arguments": {"path": p, "content": c}}
             for i, p, c in [("c1", "notes.txt", "new notes\n"), ("c2", "todo.txt", "buy milk\n")]]
    script = [{"tool_calls": calls}, {"text": "Done."}]
    with Emulator(script) as emu:
        screen = drive_on_pty(
            ["chat", "--model", f"anthropic:m@{emu.base_url}", "--workdir", str(work),
             "--approve", "auto", "--sandbox", "off", "--color", "never"],
            [("you> ", "write them"), ("you> ", by_hand), ("[y/N]", "n"), ("you> ", "/exit")],
            ENV)
    assert "changed since the turn ended" in screen and "notes.txt, todo.txt" in screen
    assert "left as they are now: notes.txt, todo.txt" in screen
    assert (work / "notes.txt").read_text() == "new notes\nmy own line\n"
    assert (work / "todo.txt").read_text() == "buy milk\nand bread, by hand\n"


def test_undo_puts_back_a_changed_file_only_when_told_to(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("old notes\n")

    def by_hand() -> str:
        (work / "notes.txt").write_text("new notes\nmy own line\n")
        return "/undo"

    with Emulator([write("c1", "notes.txt", "new notes\n"), {"text": "Done."}]) as emu:
        screen = drive_on_pty(
            ["chat", "--model", f"anthropic:m@{emu.base_url}", "--workdir", str(work),
             "--approve", "auto", "--sandbox", "off", "--color", "never"],
            [("you> ", "write it"), ("you> ", by_hand), ("[y/N]", "y"), ("you> ", "/exit")],
            ENV)
    assert "files put back: notes.txt." in screen
    assert (work / "notes.txt").read_text() == "old notes\n"


def test_chat_resume_recaps_the_conversation_so_far(tmp_path: Path) -> None:
    import subprocess
    import sys

    work = tmp_path / "work"
    work.mkdir()
    log = tmp_path / "chat.jsonl"
    script = [write("c1", "todo.txt", "buy milk\n"), {"text": "Wrote the todo list."}]
    with Emulator(script) as emu:
        model = f"anthropic:m@{emu.base_url}"
        drive_on_pty(["chat", "--model", model, "--workdir", str(work), "--log", str(log),
                      "--approve", "auto", "--sandbox", "off", "--color", "never"],
                     [("you> ", "make a todo list"), ("you> ", "/exit")], ENV)
        again = subprocess.run([sys.executable, "-m", "toolwire.cli", "chat", "--resume",
                                str(log), "--color", "never"], capture_output=True, text=True,
                               env=ENV, timeout=120, input="")
    assert again.returncode == 0, again.stderr
    said = again.stdout + again.stderr
    assert "so far:" in said
    assert said.index("you> make a todo list") < said.index("(1 tool call(s))") \
        < said.index("model: Wrote the todo list.")
