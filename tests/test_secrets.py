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
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire import Image, TextPart
from toolwire.agent.dispatch import Dispatcher
from toolwire.emulator import Emulator
from toolwire.schema.tool import Tool
from toolwire.secrets import (
    _SHAPE_NEEDLES,
    _SHAPES,
    HOLD,
    MIN_SECRET_LENGTH,
    Redactor,
    StreamRedactor,
    is_secret_name,
    known_secrets,
    redact,
    redact_json,
    remember,
)
from toolwire.transcript import ToolCallPart, ToolResultPart

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



@given(st.lists(st.sampled_from([*PIECES, "AWS_secret_ACCESS_key=" + "h" * 30, "accountkey="])
                | st.text(max_size=12), max_size=8))
def test_a_line_the_probe_passes_holds_nothing_to_redact_in_any_case(pieces: list[str]) -> None:
    redactor = Redactor({"MY_PASSWORD": "hunter2hunter2"})
    value = {"text": " ".join(pieces), "upper": " ".join(pieces).upper(),
             "lower": " ".join(pieces).lower()}
    if redactor.misses(json.dumps(value).encode()):
        assert redact_json(value, redactor) == value

@given(st.lists(st.sampled_from([*PIECES, "AWS_secret_ACCESS_key=" + "h" * 30, "accountkey=",
                                  "aCCOUNTkEY=" + "i" * 25, "Aws_Session_Token", "sk-", "AIz",
                                  "ya29", "hunter2hunter"])
                | st.text(max_size=12), max_size=8),
       st.sampled_from([str, str.upper, str.lower, str.swapcase]))
def test_the_plain_searches_before_the_probe_pass_exactly_the_lines_it_passes(
        pieces: list[str], case: Any) -> None:
    """`Redactor.misses` searches for plain text first and runs the probe only when one is
    found: it says what the probe alone says, whatever the line holds."""
    redactor = Redactor({"MY_PASSWORD": "hunter2hunter2"})
    assert redactor._probe is not None
    text = case(" ".join(pieces))
    for line in (json.dumps({"text": text}).encode(), text.encode()):  # a needle may lead
        assert redactor.misses(line) == (redactor._probe.search(line) is None)


def test_a_known_value_at_the_very_start_of_a_line_is_found() -> None:
    redactor = Redactor({"PIN_SECRET": "31415926535"})
    assert not redactor.misses(b"31415926535")  # a JSON text that is only the number
    assert not redactor.misses(b"aws_secret_access_key=" + b"A" * 24)
    assert redactor.misses(b"2718281828459")


def test_a_needle_at_the_very_end_of_a_line_is_found() -> None:
    """Raw text that ends with a name the shapes follow (in any case): the probe decides."""
    redactor = Redactor({})
    for line in (b"storage AccountKey=", b"STORAGE ACCOUNTKEY=", b"sk-ant-"):
        assert redactor.misses(line) == (redactor._probe.search(line) is None)  # type: ignore[union-attr]
    assert not redactor.misses(b"storage AccountKey=")


def test_every_shape_needle_is_screened_by_a_byte_it_holds() -> None:
    from toolwire.secrets import _ANY_CASE_NEEDLES, _PLAIN_NEEDLES

    for needle, any_case in _SHAPE_NEEDLES:
        if any_case:
            assert any(needle.startswith(kept) and lower in kept and upper in kept.upper()
                       for lower, upper, kept in _ANY_CASE_NEEDLES), needle
        else:
            assert any(kept in needle and mark in kept for mark, kept in _PLAIN_NEEDLES), needle
    redactor = Redactor({"MY_PASSWORD": "hunter2hunter2", "MY_TOKEN": "swordfish-swordfish"})
    for value in redactor.secrets:
        assert any(kept == value.encode() and mark in kept for mark, kept in redactor._needles)


@pytest.mark.parametrize("name", ["aws_secret_access_key", "AccountKey="])
def test_a_name_in_any_case_is_one_plain_character_then_the_rest_in_any_case(name: str) -> None:
    from toolwire.secrets import _either_case

    written = _either_case(name)
    assert all(alternative[0] not in "(?[\\|" for alternative in written.split("|"))
    pattern = re.compile(written)
    for variant in (name, name.upper(), name.lower(), name.swapcase(), name.title()):
        assert pattern.fullmatch(variant), variant
    assert not pattern.fullmatch(name[1:]) and not pattern.fullmatch("x" + name[1:])


@pytest.mark.parametrize("kind,shape", [s for s in _SHAPES if "(?<=" not in s[1]])
@given(data=st.data())
def test_every_match_of_a_shape_holds_its_needle(kind: str, shape: str,
                                                 data: st.DataObject) -> None:
    needle, any_case = _SHAPE_NEEDLES[_SHAPES.index((kind, shape))]
    assert not any_case
    text = data.draw(st.from_regex(shape, fullmatch=True))
    assert needle.decode() in text


def test_the_shared_redactor_is_made_again_only_when_the_environment_changes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    first = Redactor.shared()
    assert Redactor.shared() is first
    monkeypatch.setenv("TOOLWIRE_TEST_API_KEY", "a-brand-new-secret-value")
    second = Redactor.shared()
    assert second is not first and second("a-brand-new-secret-value") == (
        "[redacted: TOOLWIRE_TEST_API_KEY]")
    assert Redactor.shared() is second


# ---------------------------------------------------------------- rules, in this process


def test_a_secret_that_holds_another_is_replaced_whole() -> None:
    # the longer is the smaller in alphabetical order: only length puts it first
    inner, outer = "the-inner-secret", "an-outer-the-inner-secret"
    for given_first in ({"INNER_KEY": inner, "OUTER_TOKEN": outer},
                        {"OUTER_TOKEN": outer, "INNER_KEY": inner}):
        r = Redactor({}, given_first)
        assert r(f"a {outer} b {inner} c") == (
            "a [redacted: OUTER_TOKEN] b [redacted: INNER_KEY] c")
        stream = StreamRedactor(r)
        shown = stream.feed(f"a {outer[:9]}") + stream.feed(outer[9:] + " b") + stream.flush()
        assert shown == "a [redacted: OUTER_TOKEN] b"
        stream = StreamRedactor(r)
        assert stream.feed(f"a {outer} b {inner} c.") + stream.flush() == (
            "a [redacted: OUTER_TOKEN] b [redacted: INNER_KEY] c.")


def test_redact_takes_the_secrets_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLWIRE_TEST_TOKEN", raising=False)
    assert redact("pw=hunter2hunter2") == "pw=hunter2hunter2"
    assert redact("pw=hunter2hunter2", ["hunter2hunter2"]) == "pw=[redacted: secret]"
    assert redact("pw=hunter2hunter2", {"DB_PASSWORD": "hunter2hunter2"}) == (
        "pw=[redacted: DB_PASSWORD]")
    monkeypatch.setenv("TOOLWIRE_TEST_TOKEN", "from-the-environment")
    assert redact("t=from-the-environment") == "t=[redacted: TOOLWIRE_TEST_TOKEN]"
    assert redact("t=from-the-environment a=hunter2hunter2", ["hunter2hunter2"]) == (
        "t=[redacted: TOOLWIRE_TEST_TOKEN] a=[redacted: secret]")


def test_values_of_eight_characters_are_secret_and_shorter_ones_are_not() -> None:
    assert MIN_SECRET_LENGTH == 8
    env = {"SEVEN_TOKEN": "1234567", "EIGHT_TOKEN": "abcdefgh"}
    assert known_secrets(env, ["7654321", "hgfedcba"]) == {
        "hgfedcba": "secret", "abcdefgh": "EIGHT_TOKEN"}
    r = Redactor(env, ["7654321", "hgfedcba"])
    # text exactly as long as the shortest secret is read
    assert r("abcdefgh") == "[redacted: EIGHT_TOKEN]"
    assert r("hgfedcba") == "[redacted: secret]"
    assert r("1234567 7654321") == "1234567 7654321"
    remember("short12", "SHORT")
    remember("rememb3r", "REMEMBERED")
    remember(None, "NONE")
    remember("", "EMPTY")
    assert known_secrets({}) == {"rememb3r": "REMEMBERED"}
    assert Redactor.shared()("a rememb3r short12") == "a [redacted: REMEMBERED] short12"


def test_a_remembered_value_keeps_its_first_name() -> None:
    remember("first-name-value", "FIRST")
    remember("first-name-value", "SECOND")
    assert Redactor({})("first-name-value") == "[redacted: FIRST]"
    # a value given to the redactor, or in the environment, does not rename a remembered one
    assert Redactor({"OTHER_TOKEN": "first-name-value"}, {"MINE": "first-name-value"})(
        "first-name-value") == "[redacted: FIRST]"


def test_json_values_are_redacted_but_signed_parts_and_media_are_not() -> None:
    r = Redactor({}, {"A_TOKEN": "hunter2hunter2"})
    value = {"text": "hunter2hunter2", "list": ["x hunter2hunter2", 3, None],
             "tuple": ("hunter2hunter2",),
             "signed": {"text": "hunter2hunter2", "provider_data": {"sig": "s"}},
             "unsigned": {"text": "hunter2hunter2", "provider_data": None},
             "media": {"media_type": "text/plain", "data": "hunter2hunter2"},
             "hunter2hunter2": True}
    assert redact_json(value, r) == {
        "text": "[redacted: A_TOKEN]", "list": ["x [redacted: A_TOKEN]", 3, None],
        "tuple": ["[redacted: A_TOKEN]"],
        "signed": {"text": "hunter2hunter2", "provider_data": {"sig": "s"}},
        "unsigned": {"text": "[redacted: A_TOKEN]", "provider_data": None},
        "media": {"media_type": "text/plain", "data": "hunter2hunter2"},
        "hunter2hunter2": True}


async def test_a_tool_result_s_text_is_redacted_beside_its_media() -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(32)

    def shot() -> list[object]:
        """Text with a key, and an image."""
        return [f"key: {KEY}", Image.from_bytes(png)]

    def clean() -> list[object]:
        """Text without a key, and an image."""
        return ["nothing here", Image.from_bytes(png)]

    def text() -> str:
        """Only text."""
        return f"key: {KEY}"

    def fails() -> str:
        """An error that shows the key."""
        raise ValueError(f"bad key {KEY}")

    dispatcher = Dispatcher([Tool.from_function(f) for f in (shot, clean, text, fails)],
                            redact=Redactor({"ANTHROPIC_API_KEY": KEY}))
    first, second, third, fourth = await dispatcher.run(
        [ToolCallPart(id=f"c{n}", name=name, arguments={})
         for n, name in enumerate(("shot", "clean", "text", "fails"))])
    dispatcher.close()
    assert first.content == (TextPart(text="key: [redacted: ANTHROPIC_API_KEY]"),
                             Image.from_bytes(png))
    assert (first.call_id, first.name, first.is_error) == ("c0", "shot", False)
    assert second.content == (TextPart(text="nothing here"), Image.from_bytes(png))
    assert (second.call_id, second.name, second.is_error) == ("c1", "clean", False)
    assert third == ToolResultPart(call_id="c2", name="text", is_error=False,
                                   content="key: [redacted: ANTHROPIC_API_KEY]")
    assert fourth == ToolResultPart(
        call_id="c3", name="fails", is_error=True,
        content="Tool 'fails' failed: ValueError: bad key [redacted: ANTHROPIC_API_KEY]")


# ---------------------------------------------------------------- redacting a stream

SPACED = "key one key"  # spaces stop a run of key characters; it ends as it starts
MARKED = "p@ss w0rd!"


@given(st.lists(st.sampled_from([SPACED, MARKED, " ", "x", "key ", "p@s", "!", "-"]),
                max_size=10),
       st.lists(st.integers(min_value=0, max_value=12), max_size=12))
def test_secrets_that_are_no_run_of_key_characters_are_redacted_however_cut(
        parts: list[str], cuts: list[int]) -> None:
    redact = Redactor({}, {"SPACED": SPACED, "MARKED": MARKED})
    text = "".join(parts)
    pieces, at = [], 0
    for cut in cuts:
        pieces.append(text[at:at + cut])
        at += cut
    pieces.append(text[at:])
    stream = StreamRedactor(redact)
    shown = [stream.feed(p) for p in pieces]
    assert "".join(shown) + stream.flush() == redact(text)
    assert all(SPACED not in s and MARKED not in s for s in shown)


def test_a_stream_holds_back_only_what_may_be_the_start_of_a_secret() -> None:
    stream = StreamRedactor(Redactor({}, {"SPACED": SPACED}))
    assert stream.feed("plain words, ") == "plain words, "
    assert stream.feed("then key o") == "then "  # "key o" may start the secret
    assert stream.feed("ne key and more!") == "[redacted: SPACED] and more!"
    assert stream.feed("x key one key") == "x [redacted: SPACED]"
    assert stream.feed(" tail key") == " tail "
    assert stream.flush() == "key"
    assert stream.flush() == ""
    assert stream.feed("after. ") == "after. "  # nothing of before is held any more
    long_word = "a" * (HOLD + 100)
    assert stream.feed(long_word) == "a" * 100  # at most HOLD characters wait
    assert stream.flush() == "a" * HOLD
