"""Secrets stay out of transcripts: one redaction function, and a key a tool prints going nowhere.

The end-to-end test runs the real command line against the emulator on loopback: a tool prints
the run's own provider key (from a workspace file, and from the environment with the sandbox
off), and the key must appear in no byte of the run log, of ``explain`` in every form, or of
the request that carries the tool results to the emulator.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.emulator import Emulator
from toolwire.secrets import Redactor, is_secret_name, known_secrets, redact

KEY = "test-key-7f3a9c2e5b1d4f60a8"  # no known shape: only its variable says it is a key


def test_values_of_secret_variables_are_replaced_by_their_name() -> None:
    env = {"ANTHROPIC_API_KEY": KEY, "AWS_SESSION_TOKEN": "FwoGZXIvYXdzEBYaDH" * 3,
           "EDITOR": "vi-editor-long", "SHORT_TOKEN": "abc"}
    r = Redactor(env, {"MY_DB": "hunter2hunter2"})
    text = f"key={KEY} tok={env['AWS_SESSION_TOKEN']} ed={env['EDITOR']} s=abc db=hunter2hunter2"
    assert r(text) == ("key=[redacted: ANTHROPIC_API_KEY] tok=[redacted: AWS_SESSION_TOKEN] "
                       "ed=vi-editor-long s=abc db=[redacted: MY_DB]")
    assert known_secrets(env) == {KEY: "ANTHROPIC_API_KEY",
                                  env["AWS_SESSION_TOKEN"]: "AWS_SESSION_TOKEN"}
    assert is_secret_name("AZURE_OPENAI_API_KEY") and not is_secret_name("EDITOR")


def test_credential_shapes_are_replaced_with_no_variable_holding_them() -> None:
    text = "\n".join([
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        'AWS_SESSION_TOKEN: "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ"',
        "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=abcdEFGH1234ijklMNOP5678==;",
        "openai sk-proj-" + "a1B2" * 10,
        "google AIza" + "S" * 35 + " and ya29." + "t0ken" * 6,
        "anthropic sk-ant-api03-" + "Z" * 30,
    ])
    assert redact(text, ()) == "\n".join([
        "aws_secret_access_key = [redacted: AWS secret]",
        'AWS_SESSION_TOKEN: "[redacted: AWS session token]"',
        "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=[redacted: Azure account key];",
        "openai [redacted: OpenAI key]",
        "google [redacted: Google API key] and [redacted: Google OAuth token]",
        "anthropic [redacted: Anthropic key]",
    ])


def test_a_key_a_tool_prints_reaches_no_log_explanation_or_request(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / "settings.env").write_text(f"ANTHROPIC_API_KEY={KEY}\n")
    script = [
        {"tool_calls": [
            {"id": "toolu_1", "name": "read_file", "arguments": {"path": "settings.env"}},
            {"id": "toolu_2", "name": "run_command",
             "arguments": {"command": "echo from env: $ANTHROPIC_API_KEY"}}]},
        {"text": "I saw the settings."},
    ]
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY}
    log = tmp_path / "run.jsonl"
    with Emulator(script) as emu:
        proc = subprocess.run(
            [sys.executable, "-m", "toolwire.cli", "run", "look", "--model",
             f"anthropic:m@{emu.base_url}", "--workdir", str(work), "--log", str(log),
             "--approve", "auto", "--sandbox", "off"],
            env=env, capture_output=True, text=True, timeout=120)
        received = list(emu.received)
    assert proc.returncode == 0, proc.stderr
    assert len(received) == 2
    sent = json.dumps(received[1].body)  # the request that carries both results
    assert "[redacted: ANTHROPIC_API_KEY]" in sent and "from env: [redacted:" in sent
    texts = {"log": log.read_bytes().decode(), "request": sent, "stdout": proc.stdout}
    for form in ([], ["--json"], ["--html", str(tmp_path / "run.html")]):
        shown = subprocess.run([sys.executable, "-m", "toolwire.cli", "explain", str(log),
                                *form], env=env, capture_output=True, text=True, timeout=60)
        assert shown.returncode == 0, shown.stderr
        texts[f"explain {form}"] = shown.stdout + shown.stderr
    texts["html"] = (tmp_path / "run.html").read_text()
    assert "[redacted: ANTHROPIC_API_KEY]" in texts["log"]
    for where, text in texts.items():
        assert KEY not in text, f"the key reached the {where}"


# ---------------------------------------------------------------- one pass, one redactor


def _sequential(redactor: Redactor, text: str) -> str:
    """Redaction as it was done before: each value, longest first, then each shape."""
    from toolwire.secrets import _SHAPES

    for value in sorted(redactor.secrets, key=len, reverse=True):
        text = text.replace(value, f"[redacted: {redactor.secrets[value]}]")
    for kind, shape in _SHAPES:
        pattern = re.compile(shape)
        text = pattern.sub((r"\g<1>" if pattern.groups else "") + f"[redacted: {kind}]", text)
    return text


PIECES = ["sk-ant-api03-" + "a1" * 15, "sk-proj-" + "b2" * 20, "AIza" + "c" * 35,
          "ya29." + "d" * 30, "aws_secret_access_key = " + "E" * 40,
          "AWS_SESSION_TOKEN: '" + "f" * 30, "AccountKey=" + "g" * 30, "hunter2hunter2",
          "hunter2hunter2-longer", "plain words", "ünïcödé", "", "=", "12345678"]


@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=12), max_size=12))
def test_one_pass_redacts_as_the_passes_one_by_one_did(pieces: list[str]) -> None:
    redactor = Redactor({"MY_PASSWORD": "hunter2hunter2", "OTHER_TOKEN": "hunter2hunter2-longer",
                         "SHORT_KEY": "1234567"}, {"given": "12345678"})
    text = " ".join(pieces)
    assert redactor(text) == _sequential(redactor, text)


def test_the_shared_redactor_is_made_again_only_when_the_environment_changes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    first = Redactor.shared()
    assert Redactor.shared() is first
    monkeypatch.setenv("TOOLWIRE_TEST_API_KEY", "a-brand-new-secret-value")
    second = Redactor.shared()
    assert second is not first and second("a-brand-new-secret-value") == (
        "[redacted: TOOLWIRE_TEST_API_KEY]")
    assert Redactor.shared() is second
