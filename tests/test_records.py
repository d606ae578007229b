"""Records are data: a run log or cassette never decides how a command runs or where a key
goes, and the model's commands cannot write one.

Real subprocesses of the command line against the emulator on loopback; a second emulator
stands for a server of an attacker's and must receive nothing. Records are made by real runs
and signed with this test session's key (its state directory is the session's own).
"""

from __future__ import annotations

import hmac
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

from ptys import drive_on_pty
from toolwire import records, signing
from toolwire.agent.runlog import read_log
from toolwire.emulator import Emulator
from toolwire.errors import TranscriptError
from toolwire.mediafiles import MediaFiles, media_name
from toolwire.records import runs_folder
from toolwire.tools import landlock
from toolwire.tools.bwrap import bubblewrap

ENV = {k: v for k, v in os.environ.items()
       if not k.endswith(("_API_KEY", "_TOKEN")) and not k.startswith("AWS_")}
KEY = records.record_key()
TOUCH = {"text": "I will make the marker.", "tool_calls": [
    {"id": "call_c1", "name": "run_command", "arguments": {"command": "touch marker"}}]}
DONE = {"text": "Done."}


def toolwire(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
             timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], capture_output=True,
                          text=True, env=env or ENV, timeout=timeout, cwd=cwd, input="")


def deferred_log(tmp_path: Path) -> tuple[Path, Path]:
    """A real run that stopped to wait for a decision on ``touch marker``: (its log, folder)."""
    work = tmp_path / "work"
    work.mkdir()
    log = tmp_path / "run.jsonl"
    with Emulator([TOUCH]) as emu:
        proc = toolwire("run", "make the marker", "--model", f"anthropic:m@{emu.base_url}",
                        "--workdir", str(work), "--log", str(log), "--approve", "defer")
    assert proc.returncode == 1, proc.stderr
    assert signing.verify(log.read_bytes(), KEY).own
    return log, work


def rewrite_header(log: Path, **context: Any) -> None:
    """Change the header's context as a command or a hand would (its signature now fails)."""
    lines = log.read_text().split("\n")
    head = json.loads(lines[0])
    head["context"].update(context)
    if "model" in context:
        head["model"] = context["model"]
    lines[0] = json.dumps(head, separators=(",", ":"))  # its signature kept, now wrong
    log.write_text("\n".join(lines))


# ---------------------------------------------------------------- the key and the chain


def test_a_signed_record_checks_line_by_line_and_a_resume_extends_the_chain(
        tmp_path: Path) -> None:
    from toolwire.agent.runlog import RunLog

    path = tmp_path / "r.jsonl"
    log = RunLog(path)
    log.write("header", format=9, model="m")
    log.write("message", index=0)
    log.close()
    assert signing.verify(path.read_bytes(), KEY) == signing.Verdict(
        "own", 2, None, signing.verify(path.read_bytes(), KEY).last)
    with path.open("ab") as f:  # a crash cut the next line short
        f.write(b'{"event":"mess')
    assert signing.verify(path.read_bytes(), KEY).standing == "own"
    again = RunLog(path, repair=True)  # a resumed run drops the torn line and goes on
    again.write("resume", format=9)
    again.close()
    verdict = signing.verify(path.read_bytes(), KEY)
    assert verdict.own and verdict.lines == 3
    lines = path.read_bytes().split(b"\n")
    changed = lines[1].replace(b'"index":0', b'"index":1')
    assert signing.verify(b"\n".join([lines[0], changed, *lines[2:]]), KEY).standing == "edited"
    swapped = b"\n".join([lines[0], lines[2], lines[1], b""])
    assert signing.verify(swapped, KEY) .bad == 2
    assert signing.verify(path.read_bytes(), b"k" * 32).standing == "foreign"
    assert signing.verify(b'{"event":"header"}\n', KEY).standing == "unsigned"


@given(key=st.binary(max_size=200), lines=st.lists(st.binary(max_size=300), max_size=4))
def test_each_line_mac_is_the_hmac_sha256_of_the_previous_mac_and_the_line(
        key: bytes, lines: list[bytes]) -> None:
    signer, previous = signing.Signer(key), b"toolwire record 1"
    for body in lines:
        body = b"{" + body.replace(b"\n", b" ") + b"}"
        mac = hmac.digest(key, previous + b"\n" + body, "sha256").hex().encode()
        signed = signer.sign(body)
        assert signed.endswith(b'"mac":"' + mac + b'"}')
        previous = mac

@given(keys=st.lists(st.binary(max_size=80), min_size=1, max_size=3),
       order=st.lists(st.integers(0, 2), max_size=8))
def test_signers_of_keys_made_in_any_order_each_sign_with_their_own_key(
        keys: list[bytes], order: list[int]) -> None:
    # the padded key blocks are kept for the last key: made again whenever another comes
    chains = [[key, signing.Signer(key), b"toolwire record 1"] for key in keys]
    for turn in order:
        key, signer, previous = chains[turn % len(chains)]
        body = b'{"n":%d}' % turn
        mac = hmac.digest(key, previous + b"\n" + body, "sha256").hex().encode()
        assert signer.sign(body) == body[:-1] + b',"mac":"' + mac + b'"}'
        assert signing.verify(signing.sign_document(body, key), key).own
        chains[turn % len(chains)][2] = mac
        chains.append([key, signing.Signer(key, mac), mac])  # a signer made after another key


def test_the_key_is_made_once_for_the_user_alone(tmp_path: Path) -> None:
    env = {**ENV, "TOOLWIRE_STATE_DIR": str(tmp_path / "state")}
    code = "from toolwire import records; print(records.record_key().hex())"
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              text=True) for _ in range(6)]
    keys = {p.communicate(timeout=60)[0] for p in procs}
    assert len(keys) == 1  # six processes starting at once agree on one key
    assert (tmp_path / "state" / "record.key").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "state").stat().st_mode & 0o777 == 0o700


# ---------------------------------------------------------------- resume


def test_your_own_unchanged_log_resumes_as_before_with_no_question(tmp_path: Path) -> None:
    log, work = deferred_log(tmp_path)
    with Emulator([DONE]) as emu:
        proc = toolwire("resume", str(log), "--model", f"anthropic:m@{emu.base_url}",
                        "--allow", "call_c1")
    assert proc.returncode == 0, proc.stderr
    assert (work / "marker").exists()
    assert "Before acting" not in proc.stderr and "--trust-record" not in proc.stderr
    assert signing.verify(log.read_bytes(), KEY).own  # the resumed lines extend the chain


def test_an_edited_log_runs_nothing_and_sends_no_key_until_confirmed(tmp_path: Path) -> None:
    log, work = deferred_log(tmp_path)
    env = {**ENV, "ANTHROPIC_API_KEY": "sk-ant-api03-the-users-own-key"}
    with Emulator([DONE]) as capture:
        rewrite_header(log, sandbox="off", approve="auto",
                       model=f"anthropic:m@{capture.base_url}", base_url=capture.base_url)
        proc = toolwire("resume", str(log), "--allow", "call_c1", env=env)
        assert proc.returncode == 2, proc.stderr
        assert "or its first line was changed" in proc.stderr, proc.stderr
        assert "--trust-record" in proc.stderr
        assert f"at {capture.base_url} (your ANTHROPIC_API_KEY goes there)" in proc.stderr
        assert "off (the record asks for" not in proc.stderr  # what is used, then what it asked
        assert "auto (the record asks for off" in proc.stderr
        assert not (work / "marker").exists() and capture.received == []
        proc = toolwire("resume", str(log), "--allow", "call_c1", "--trust-record", "-v",
                        env=env)
        assert proc.returncode == 0, proc.stderr
        assert len(capture.received) == 1  # confirmed: the person sent it there
    assert (work / "marker").exists()
    assert "NOT confined" not in proc.stderr and "sandbox: commands run in a" in proc.stderr


CREDENTIALS = [
    ("anthropic:m", {"ANTHROPIC_API_KEY": "sk-ant-api03-secret-value-1"}),
    ("openai:gpt-5", {"OPENAI_API_KEY": "sk-proj-secret-value-2"}),
    ("gemini:gemini-2.5-flash", {"GEMINI_API_KEY": "AIzaSecretValue3"}),
    ("azure:deployment", {"AZURE_OPENAI_API_KEY": "azure-secret-value-4",
                          "AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com"}),
    ("bedrock:anthropic.claude-sonnet-4-5", {"AWS_BEARER_TOKEN_BEDROCK": "bedrock-token-5",
                                             "AWS_REGION": "us-east-1"}),
    ("bedrock:anthropic.claude-sonnet-4-5", {
        "AWS_ACCESS_KEY_ID": "AKIASECRETVALUE6", "AWS_SECRET_ACCESS_KEY": "secret/value/6",
        "AWS_SESSION_TOKEN": "session-token-6", "AWS_REGION": "us-east-1"}),
]


@pytest.mark.parametrize(("model", "keys"), CREDENTIALS,
                         ids=["anthropic", "openai", "gemini", "azure", "bedrock-bearer",
                              "aws-sigv4"])
def test_no_credential_reaches_a_host_a_record_names(model: str, keys: dict[str, str],
                                                     tmp_path: Path) -> None:
    log, work = deferred_log(tmp_path)
    with Emulator([DONE]) as capture:
        rewrite_header(log, model=f"{model}@{capture.base_url}")
        proc = toolwire("resume", str(log), "--allow", "call_c1", env={**ENV, **keys})
        assert capture.received == []
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "--trust-record" in proc.stderr
    assert not (work / "marker").exists()


def test_a_foreign_log_asks_on_the_terminal(tmp_path: Path) -> None:
    log, work = deferred_log(tmp_path)
    with Emulator([DONE]) as emu:
        rewrite_header(log, model=f"anthropic:m@{emu.base_url}")
        other = {**ENV, "TOOLWIRE_STATE_DIR": str(tmp_path / "another-user")}
        argv = ["resume", str(log), "--allow", "call_c1", "--no-stream"]
        seen = drive_on_pty(argv, [("Go on with this record? [y/N]", "n")], other)
        assert "not written by your toolwire" in seen or "carries no signature" in seen \
            or "changed" in seen
        assert "not confirmed" in seen and not (work / "marker").exists()
        assert emu.received == []
        seen = drive_on_pty(argv, [("Go on with this record? [y/N]", "y")], other)
    assert (work / "marker").exists(), seen


# ---------------------------------------------------------------- replay


def recorded_run(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A real run that ran ``touch marker``, with its log and cassette: (log, cassette, work)."""
    work = tmp_path / "work"
    work.mkdir()
    log, tape = tmp_path / "run.jsonl", tmp_path / "run.cassette.json"
    with Emulator([TOUCH, DONE]) as emu:
        proc = toolwire("run", "make the marker", "--model", f"anthropic:m@{emu.base_url}",
                        "--workdir", str(work), "--log", str(log), "--record", str(tape),
                        "--approve", "auto")
    assert proc.returncode == 0, proc.stderr
    assert (work / "marker").exists()
    (work / "marker").unlink()
    return log, tape, work


def test_replay_of_an_edited_cassette_or_log_runs_nothing_until_confirmed(
        tmp_path: Path) -> None:
    log, tape, work = recorded_run(tmp_path)
    assert signing.verify_document(tape.read_bytes(), KEY).own
    proc = toolwire("replay", str(tape), "--workdir", str(work))
    assert proc.returncode == 0, proc.stderr  # your own: replayed with no question
    assert (work / "marker").exists() and "Before acting" not in proc.stderr
    (work / "marker").unlink()
    tape.write_text(tape.read_text().replace("touch marker", "touch planted"))
    rewrite_header(log, sandbox="off")
    for record in (tape, log):
        proc = toolwire("replay", str(record), "--workdir", str(work))
        assert proc.returncode == 2, proc.stderr
        assert "touch" in proc.stderr and "--trust-record" in proc.stderr
        assert sorted(set(os.listdir(work)) - {".toolwire"}) == []
    proc = toolwire("replay", str(tape), "--workdir", str(work), "--trust-record")
    assert (work / "planted").exists(), proc.stderr
    proc = toolwire("replay", str(log), "--workdir", str(work), "--trust-record")
    assert re.search(r"sandbox +auto \(a record's own setting is not used\)", proc.stderr)
    assert (work / "marker").exists()


def test_replay_reads_no_file_seen_outside_the_folder_nor_a_device_or_fifo(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (work / name).write_text(name)
    calls = [{"id": f"call_r{i}", "name": "read_file", "arguments": {"path": name}}
             for i, name in enumerate(("a.txt", "b.txt", "c.txt"))]
    log = tmp_path / "run.jsonl"
    with Emulator([{"text": "Reading.", "tool_calls": calls}, DONE]) as emu:
        proc = toolwire("run", "read them", "--model", f"anthropic:m@{emu.base_url}",
                        "--workdir", str(work), "--log", str(log), "--approve", "auto")
    assert proc.returncode == 0, proc.stderr
    (work / "a.txt").unlink()
    (work / "a.txt").symlink_to("/dev/zero")
    (work / "b.txt").unlink()
    os.mkfifo(work / "b.txt")
    (work / "c.txt").unlink()
    (work / "c.txt").symlink_to("/etc/hostname")
    text = log.read_text()
    for name, hostile in (("a.txt", "../../../../dev/zero"), ("b.txt", "/etc/shadow")):
        text = text.replace(f'"path":"{name}","sha256"', f'"path":"{hostile}","sha256"', 1)
    signer = signing.Signer(KEY)  # signed as yours: only the reading is on trial here
    log.write_text("".join(signer.sign(signing.unsigned(line.encode())[0]).decode() + "\n"
                           for line in text.split("\n") if line))
    proc = toolwire("replay", str(log), timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    out = proc.stdout
    assert "../../../../dev/zero (recorded" in out and "is not a path inside" in out
    assert "/etc/shadow (recorded" in out
    assert "c.txt" in out and "is a link, which is not followed" in out


# ---------------------------------------------------------------- where records go


@pytest.mark.skipif(landlock.abi()[0] is None, reason="no Landlock here")
def test_under_landlock_a_command_cannot_rewrite_its_own_run_log(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    state = os.environ["TOOLWIRE_STATE_DIR"]
    attack = (f"for f in {work}/.toolwire/runs/*.jsonl {state}/runs/*/*.jsonl; do "
              f"printf '%s\\n' '{{\"event\":\"header\",\"format\":9}}' > \"$f\" "
              "&& echo REWROTE \"$f\"; done; true")
    script = [{"text": "Rewriting.", "tool_calls": [
        {"id": "call_x", "name": "run_command", "arguments": {"command": attack}}]}, DONE]
    with Emulator(script) as emu:
        proc = toolwire("run", "go", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                        str(work), "--approve", "auto", "--sandbox", "landlock")
    assert proc.returncode == 0, proc.stderr
    [log] = runs_folder(work).glob("*.jsonl")
    assert signing.verify(log.read_bytes(), KEY).own
    result = read_log(log).results["call_x"].content
    assert "REWROTE" not in result and "Permission denied" in result, result
    assert json.loads(log.read_text().split("\n")[0])["context"]["sandbox"] == "landlock"


@pytest.mark.skipif(landlock.abi()[0] is None, reason="no Landlock here")
def test_a_record_a_landlocked_command_signed_with_the_key_it_read_is_not_taken_as_yours(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    state = os.environ["TOOLWIRE_STATE_DIR"]
    forge = (f"{sys.executable} -c \"from toolwire import signing; "
             f"key = open('{state}/record.key', 'rb').read(); s = signing.Signer(key); "
             "line = s.sign(b'{\\\"event\\\":\\\"header\\\",\\\"format\\\":9,"
             "\\\"model\\\":\\\"anthropic:m@http://127.0.0.1:9\\\"}'); "
             "open('forged.jsonl', 'wb').write(line + b'\\n')\"")
    script = [{"text": "Forging.", "tool_calls": [
        {"id": "call_x", "name": "run_command", "arguments": {"command": forge}}]}, DONE]
    with Emulator(script) as emu:
        proc = toolwire("run", "go", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                        str(work), "--approve", "auto", "--sandbox", "landlock")
    assert proc.returncode == 0, proc.stderr
    forged = work / "forged.jsonl"
    assert forged.exists(), read_log(next(runs_folder(work).glob("*.jsonl"))).results
    assert signing.verify(forged.read_bytes(), KEY).own  # the key was readable: it signs
    proc = toolwire("resume", str(forged))
    assert proc.returncode == 2, proc.stderr
    assert f"it lies in {work}, where the model's commands ran under Landlock" in proc.stderr


@pytest.mark.skipif(bubblewrap()[0] is None, reason="bubblewrap cannot run here")
def test_under_bubblewrap_a_log_in_the_workspace_is_read_only_and_the_state_is_hidden(
        tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    log, tape = work / "run.jsonl", work / "run.cassette.json"
    state = os.environ["TOOLWIRE_STATE_DIR"]
    attack = (f"echo forged >> {log}; echo forged > {tape}; touch {log}.media/x; "
              f"mv {log} {work}/moved; ls -A {state}; cat {state}/record.key; true")
    script = [{"text": "Trying.", "tool_calls": [
        {"id": "call_x", "name": "run_command", "arguments": {"command": attack}}]}, DONE]
    with Emulator(script) as emu:
        proc = toolwire("run", "go", "--model", f"anthropic:m@{emu.base_url}", "--workdir",
                        str(work), "--approve", "auto", "--sandbox", "required", "--log",
                        str(log), "--record", str(tape))
    assert proc.returncode == 0, proc.stderr
    assert signing.verify(log.read_bytes(), KEY).own
    assert signing.verify_document(tape.read_bytes(), KEY).own
    assert os.listdir(f"{log}.media") == [] and not (work / "moved").exists()
    result = read_log(log).results["call_x"].content
    assert result.count("Read-only file system") >= 3 and KEY.hex() not in result, result
    assert "record.key: No such file" in result  # hidden: an empty folder there


@pytest.mark.parametrize("mode", ["landlock", "off"])
def test_a_log_inside_the_workspace_is_refused_where_commands_could_write_it(
        mode: str, tmp_path: Path) -> None:
    if mode == "landlock" and landlock.abi()[0] is None:
        pytest.skip("no Landlock here")
    work = tmp_path / "work"
    work.mkdir()
    for flag in ("--log", "--record"):
        proc = toolwire("run", "go", "--model", "anthropic:m@http://127.0.0.1:9", "--workdir",
                        str(work), flag, str(work / "run.jsonl"), "--sandbox", mode)
        assert proc.returncode == 2, proc.stderr
        assert f"{flag} {work / 'run.jsonl'} is inside" in proc.stderr
        assert str(runs_folder(work)) in proc.stderr
        assert os.listdir(work) == []
    proc = toolwire("run", "go", "--model", "anthropic:m@http://127.0.0.1:9", "--workdir",
                    str(work), "--log", str(work / "run.jsonl"), "--sandbox", mode,
                    "--tools", "none")
    assert "is inside" not in proc.stderr  # no command runs: a record may go anywhere


# ---------------------------------------------------------------- written and read by descriptor


def test_a_link_planted_in_the_media_folder_leads_no_write_outside(tmp_path: Path,
                                                                   outside: Path) -> None:
    target = outside / "victim"
    target.write_bytes(b"keep me")
    owner = tmp_path / "run.jsonl"
    data = b"\x89PNG\r\n\x1a\n" + b"model-chosen bytes " * 400
    name = media_name(data, "image/png")
    folder = tmp_path / "run.jsonl.media"
    folder.mkdir()
    for pid in range(os.getpid() - 5, os.getpid() + 5):  # the name the old writer used
        (folder / f".{name}.{pid}.tmp").symlink_to(target)
    (folder / name).symlink_to(target)
    assert MediaFiles(owner).put(data, "image/png") == name
    assert target.read_bytes() == b"keep me"
    assert not (folder / name).is_symlink() and (folder / name).read_bytes() == data
    elsewhere = tmp_path / "linked.jsonl.media"
    elsewhere.symlink_to(outside)
    with pytest.raises(TranscriptError, match="not a link"):
        MediaFiles(tmp_path / "linked.jsonl").put(data, "image/png")
    assert sorted(os.listdir(outside)) == ["victim"]


def test_a_cassette_is_rewritten_without_following_a_planted_link(tmp_path: Path,
                                                                  outside: Path) -> None:
    _, tape, work = recorded_run(tmp_path)
    target = outside / "victim"
    target.write_text("keep me")
    tape.unlink()
    Path(f"{tape}.tmp").symlink_to(target)  # the name the old writer used
    with Emulator([DONE]) as emu:
        proc = toolwire("run", "again", "--model", f"anthropic:m@{emu.base_url}",
                        "--workdir", str(work), "--record", str(tape), "--tools", "none")
    assert proc.returncode == 0, proc.stderr
    assert target.read_text() == "keep me"
    assert signing.verify_document(tape.read_bytes(), KEY).own


@pytest.mark.parametrize("swap", ["zero", "fifo", "outside"])
def test_a_media_file_swapped_for_a_link_or_fifo_is_refused_when_read_back(
        swap: str, tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    data = b"\x89PNG\r\n\x1a\n" + b"\0" * 9000
    name = MediaFiles(log).put(data, "image/png")
    stored = Path(f"{log}.media") / name
    stored.unlink()
    if swap == "zero":
        stored.symlink_to("/dev/zero")
    elif swap == "fifo":
        os.mkfifo(stored)
    else:
        stored.symlink_to("/etc/hostname")
    with pytest.raises(TranscriptError, match=r"link, which is not followed|not a regular"):
        MediaFiles(log).get(name, "line 2")


# ---------------------------------------------------------------- explain says whose


def test_explain_says_whose_a_record_is(tmp_path: Path) -> None:
    log, tape, _ = recorded_run(tmp_path)
    proc = toolwire("explain", str(log))
    assert proc.stdout.startswith("record: this run log was written by your toolwire and has "
                                  "not been changed"), proc.stdout
    data = json.loads(toolwire("explain", str(tape), "--json").stdout)
    assert data["record"]["standing"] == "own"
    lines = log.read_text().split("\n")
    lines[1] = lines[1].replace('"index":0', '"index":0 ')  # a later line changed by hand
    log.write_text("\n".join(lines))
    data = json.loads(toolwire("explain", str(log), "--json").stdout)
    assert data["record"]["standing"] == "edited"
    proc = toolwire("explain", str(log), env={**ENV, "TOOLWIRE_STATE_DIR": str(tmp_path / "o")})
    assert proc.stdout.startswith("record: this run log was not written by your toolwire")


def test_a_run_log_is_written_for_the_user_alone_and_never_through_a_link(
        tmp_path: Path, outside: Path) -> None:
    from toolwire.agent.runlog import RunLog

    target = outside / "victim"
    target.write_text("keep me")
    (tmp_path / "run.jsonl").symlink_to(target)
    with pytest.raises(TranscriptError, match="not a link"):
        RunLog(tmp_path / "run.jsonl")
    assert target.read_text() == "keep me"
    log = RunLog(tmp_path / "fresh.jsonl")
    log.close()
    assert (tmp_path / "fresh.jsonl").stat().st_mode & 0o777 == 0o600
