"""``toolwire replay``: a run recorded against the emulator played again with its tools
running for real, in its own wire or another, from its run log or its cassette; a tool whose
code changed, or a file that was different at the start, stops it at the first differing
result with a diff and exit 1.

Real subprocesses, real files and the emulator on loopback.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolwire.agent.runlog import read_log
from toolwire.emulator import Emulator

ENV = {k: v for k, v in os.environ.items()
       if not k.endswith("_API_KEY") and not k.startswith("TOOLWIRE_")}
SCRIPT = [
    {"text": "Looking first.", "tool_calls": [
        {"id": "call_r1", "name": "read_file", "arguments": {"path": "notes.txt"}},
        {"id": "call_r2", "name": "list_files", "arguments": {}}]},
    {"tool_calls": [
        {"id": "call_r3", "name": "write_file", "arguments": {"path": "out.txt",
                                                              "content": "copied\n"}}]},
    # a turn of its own: calls of one reply run side by side, and cat must see the write
    {"tool_calls": [
        {"id": "call_r4", "name": "run_command", "arguments": {"command": "cat out.txt"}}]},
    {"text": "Done."},
]


def toolwire(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], capture_output=True,
                          text=True, env=env or ENV, timeout=120, input="")


def start_state(folder: Path) -> Path:
    folder.mkdir()
    (folder / "notes.txt").write_text("alpha\nbeta\n")
    return folder


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A run recorded against the emulator: its run log and its cassette."""
    root = tmp_path_factory.mktemp("recorded")
    work = start_state(root / "work")
    log, cassette = root / "run.jsonl", root / "run.cassette.json"
    with Emulator(SCRIPT) as emu:
        proc = toolwire("run", "copy the notes", "--model", f"anthropic:m@{emu.base_url}",
                        "--workdir", str(work), "--approve", "auto", "--sandbox", "off",
                        "--log", str(log), "--record", str(cassette))
    assert proc.returncode == 0, proc.stderr
    return log, cassette


def test_the_log_keeps_each_touched_file_s_hash_at_the_start(recorded: tuple[Path, Path]
                                                             ) -> None:
    import hashlib

    files = read_log(recorded[0]).files
    assert files == {"notes.txt": hashlib.sha256(b"alpha\nbeta\n").hexdigest(), "out.txt": None}


@pytest.mark.parametrize("source", ["log", "cassette"])
def test_a_recorded_run_replays_with_its_tools_for_real(
        recorded: tuple[Path, Path], tmp_path: Path, source: str) -> None:
    fresh = start_state(tmp_path / "fresh")
    proc = toolwire("replay", str(recorded[source == "cassette"]), "--workdir", str(fresh))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all 4 tool result(s) are as recorded" in proc.stdout
    assert (fresh / "out.txt").read_text() == "copied\n"  # the tools ran, here


@pytest.mark.parametrize("wire", ["openai-chat", "gemini-generate", "openai-responses"])
def test_the_same_run_replays_on_another_wire(recorded: tuple[Path, Path], tmp_path: Path,
                                              wire: str) -> None:
    fresh = start_state(tmp_path / "fresh")
    proc = toolwire("replay", str(recorded[0]), "--workdir", str(fresh), "--wire", wire)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"in the {wire} wire" in proc.stdout


def test_a_tool_whose_code_changed_stops_the_replay_with_a_diff(
        recorded: tuple[Path, Path], tmp_path: Path) -> None:
    fresh = start_state(tmp_path / "fresh")
    patch = tmp_path / "patch"
    patch.mkdir()
    (patch / "sitecustomize.py").write_text(
        "import toolwire.tools.files as files\n"
        "_read = files.read_file\n"
        "files.read_file = lambda *a, **k: _read(*a, **k).replace('beta', 'BETA')\n")
    env = {**ENV, "PYTHONPATH": os.pathsep.join([str(patch), ENV.get("PYTHONPATH", "")])}
    proc = toolwire("replay", str(recorded[0]), "--workdir", str(fresh), env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == 'turn 1, call 1: read_file {"path":"notes.txt"}'
    assert "-2\tbeta" in lines and "+2\tBETA" in lines
    assert lines[-1] == ("the 2 file(s) the tools touched were as recorded at the start: the "
                         "tool now behaves differently")
    assert not (fresh / "out.txt").exists()  # stopped there: the next turn's tools never ran


def test_a_file_that_was_different_at_the_start_is_named(recorded: tuple[Path, Path],
                                                         tmp_path: Path) -> None:
    fresh = start_state(tmp_path / "fresh")
    (fresh / "notes.txt").write_text("alpha\ngamma\n")
    proc = toolwire("replay", str(recorded[0]), "--workdir", str(fresh))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "+2\tgamma" in proc.stdout.splitlines()
    assert "this file was different at the start: notes.txt" in proc.stdout


@pytest.fixture()
def live(recorded: tuple[Path, Path], tmp_path: Path) -> Iterator[Path]:
    """The recorded folder, put back as it was after the test."""
    work = Path(read_log(recorded[0]).header["context"]["workdir"])
    saved = tmp_path / "saved"
    shutil.copytree(work, saved)
    yield work
    shutil.rmtree(work)
    shutil.copytree(saved, work)


def test_replay_works_in_a_copy_and_never_touches_the_recorded_folder(
        recorded: tuple[Path, Path], live: Path) -> None:
    (live / "out.txt").write_text("edited by hand since the run\n")
    proc = toolwire("replay", str(recorded[0]))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "this file was different at the start: out.txt" in proc.stdout
    assert f"replaying in a copy of {live}" in proc.stderr
    assert (live / "out.txt").read_text() == "edited by hand since the run\n"


def test_in_place_names_the_files_that_differ_and_needs_a_yes(recorded: tuple[Path, Path],
                                                              live: Path) -> None:
    (live / "out.txt").write_text("edited by hand since the run\n")
    proc = toolwire("replay", str(recorded[0]), "--in-place")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "differ from the recording" in proc.stderr and "out.txt" in proc.stderr
    assert (live / "out.txt").read_text() == "edited by hand since the run\n"
    (live / "out.txt").unlink()  # now as it was when the run began
    proc = toolwire("replay", str(recorded[0]), "--in-place")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (live / "out.txt").read_text() == "copied\n"  # the tools ran in the folder itself


def test_a_folder_too_large_to_copy_is_refused_with_what_to_do(recorded: tuple[Path, Path],
                                                               live: Path) -> None:
    with open(live / "big.bin", "wb") as big:  # sparse: large, yet takes no room
        big.truncate(600 << 20)
    proc = toolwire("replay", str(recorded[0]))
    assert proc.returncode == 2
    assert "more than 512 MB" in proc.stderr and "--workdir" in proc.stderr


def test_the_copy_shares_nothing_a_command_can_write_through(tmp_path: Path) -> None:
    """Each file of the copy is a file of its own (a reflink or a plain copy, never a hard
    link): writing into it, as a command in the replay would, leaves the user's file alone."""
    from toolwire.cli.outputs import copy_folder

    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "main.py").write_text("print('mine')\n")
    os.chmod(folder / "src" / "main.py", 0o751)
    (folder / ".toolwire").mkdir()
    (folder / ".toolwire" / "old.jsonl").write_text("{}\n")
    copy = copy_folder(folder, tmp_path / "copy")
    original, copied = folder / "src" / "main.py", copy / "src" / "main.py"
    assert copied.read_text() == "print('mine')\n"
    assert copied.stat().st_mode == original.stat().st_mode
    assert copied.stat().st_ino != original.stat().st_ino and original.stat().st_nlink == 1
    with open(copied, "a") as out:
        out.write("print('the replay')\n")
    assert original.read_text() == "print('mine')\n"
    assert not (copy / ".toolwire").exists()


def test_a_reply_holding_a_raw_line_separator_is_replayed(recorded: tuple[Path, Path],
                                                         tmp_path: Path) -> None:
    """Logs written before the separators were escaped hold U+2028 as it came: it is text
    inside a line, not the end of one, for replay as for every other reader."""
    import json

    from toolwire.cli.replay import read_recording

    log, _ = recorded
    lines = log.read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines):
        if line and json.loads(line).get("event") == "reply":
            lines[i] = line.replace("Looking first.", "Looking\u2028first.")
            break
    old = tmp_path / "old.jsonl"
    old.write_text("\n".join(lines), encoding="utf-8")
    assert "\u2028" in old.read_text(encoding="utf-8")
    replayed = read_recording(str(old))
    assert len(replayed.turns) == len(read_recording(str(log)).turns) == len(SCRIPT)
    assert replayed.turns[0].reply.text == "Looking\u2028first."


@pytest.mark.parametrize(("content", "said"), [
    ({"toolwire_cassette": 1, "interactions": [3]},
     "interaction 1 has no request with a path and a body"),
    ({"toolwire_cassette": 1, "interactions": [{"request": {"path": "/v1/messages", "body": {}},
                                                "response": {"status": 200}}]},
     "interaction 1 has no response with a body or a stream"),
    ({}, "is neither a toolwire run log nor a cassette"),
])
def test_a_damaged_recording_is_named_in_plain_words(tmp_path: Path, content: object,
                                                      said: str) -> None:
    import json

    from toolwire.cli.common import UserError
    from toolwire.cli.replay import read_recording

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(content), encoding="utf-8")
    with pytest.raises(UserError) as caught:
        read_recording(str(bad))
    assert said in str(caught.value) and "Error" not in str(caught.value)


def test_a_write_into_a_new_folder_is_kept_as_a_file_seen(tmp_path: Path) -> None:
    work = start_state(tmp_path / "work")
    log = tmp_path / "run.jsonl"
    script = [{"tool_calls": [{"id": "call_n1", "name": "write_file", "arguments": {
        "path": "docs/new/guide.md", "content": "# Guide\n"}}]}, {"text": "Written."}]
    with Emulator(script) as emu:
        proc = toolwire("run", "write a guide", "--model", f"anthropic:m@{emu.base_url}",
                        "--workdir", str(work), "--approve", "auto", "--sandbox", "off",
                        "--log", str(log))
    assert proc.returncode == 0, proc.stderr
    assert read_log(log).files == {"docs/new/guide.md": None}


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_cassette_whose_run_read_an_image_replays_without_base64(tmp_path: Path,
                                                                   provider: str) -> None:
    from fixtures.tiny_png import PNG

    work = tmp_path / "work"
    work.mkdir()
    (work / "pic.png").write_bytes(PNG)
    cassette = tmp_path / "run.cassette.json"
    script = [{"tool_calls": [{"id": "call_i1", "name": "read_file",
                               "arguments": {"path": "pic.png"}}]}, {"text": "A pixel."}]
    with Emulator(script) as emu:
        proc = toolwire("run", "look", "--model", f"{provider}:m@{emu.base_url}", "--workdir",
                        str(work), "--approve", "auto", "--sandbox", "off", "--record",
                        str(cassette))
    assert proc.returncode == 0, proc.stderr
    same = toolwire("replay", str(cassette), "--workdir", str(work))
    assert same.returncode == 0, same.stdout + same.stderr
    (work / "pic.png").write_bytes(PNG + b"\0")  # one byte more after the image's end
    other = toolwire("replay", str(cassette), "--workdir", str(work))
    assert other.returncode == 1
    assert f"[image image/png, {len(PNG) + 1} bytes, sha256 " in other.stdout
    assert "iVBOR" not in other.stdout + other.stderr  # the start of a PNG in base64
