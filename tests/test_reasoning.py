"""The reasoning setting on every wire: what each body carries for each level, checked against
the official SDKs' request types; a temperature left out while reasoning is on, with a note;
the Agent argument and ``--reasoning`` reaching the emulator over loopback HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from sdk_types import assert_anthropic_valid, assert_sdk_valid
from toolwire.agent.loop import Agent
from toolwire.codecs import get_codec
from toolwire.codecs.reasoning import BUDGETS
from toolwire.emulator import Emulator
from toolwire.http import client
from toolwire.transcript import Message, Request

LEVELS = ("low", "medium", "high", "off")
ENV = {k: v for k, v in os.environ.items()
       if not k.endswith("_API_KEY") and not k.startswith("TOOLWIRE_")}


def encode(wire: str, level: str | None, **more: Any) -> Any:
    request = Request(model="m", messages=(Message.user("think about it"),), max_tokens=2048,
                      reasoning=level, **more)
    return get_codec(wire).encode(request)


@pytest.mark.parametrize("level", LEVELS)
def test_anthropic_thinking_budgets(level: str) -> None:
    body = encode("anthropic-messages", level).body
    assert_anthropic_valid(body)
    if level == "off":
        assert body["thinking"] == {"type": "disabled"} and body["max_tokens"] == 2048
    else:
        assert body["thinking"] == {"type": "enabled", "budget_tokens": BUDGETS[level]}
        assert body["max_tokens"] > BUDGETS[level]  # the API refuses a budget at or above it


def test_a_max_tokens_below_the_budget_is_raised_with_a_note() -> None:
    encoded = encode("anthropic-messages", "high")
    assert encoded.body["max_tokens"] == BUDGETS["high"] + 4096
    assert [n.kind for n in encoded.notes] == ["max_tokens_raised"]
    roomy = Request(model="m", messages=(Message.user("x"),), max_tokens=64000,
                    reasoning="high")
    kept = get_codec("anthropic-messages").encode(roomy)
    assert kept.body["max_tokens"] == 64000 and not kept.notes


@pytest.mark.parametrize("level", LEVELS)
def test_chat_completions_reasoning_effort(level: str) -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
    from openai.types.shared.reasoning_effort import ReasoningEffort

    body = encode("openai-chat", level).body
    assert body["reasoning_effort"] == ("none" if level == "off" else level)
    assert TypeAdapter(ReasoningEffort).validate_python(body["reasoning_effort"])
    TypeAdapter(CompletionCreateParamsNonStreaming).validate_python(body, extra="forbid")


@pytest.mark.parametrize("level", LEVELS)
def test_responses_reasoning_effort(level: str) -> None:
    body = encode("openai-responses", level).body
    assert body["reasoning"] == {"effort": "none" if level == "off" else level}
    assert_sdk_valid(body)


@pytest.mark.parametrize("level", LEVELS)
def test_gemini_thinking_budgets(level: str) -> None:
    from google.genai import types as gt

    body = encode("gemini-generate", level).body
    config = body["generationConfig"]
    assert config["thinkingConfig"] == {"thinkingBudget": 0 if level == "off"
                                        else BUDGETS[level]}
    assert config["maxOutputTokens"] == 2048
    parsed = gt.GenerationConfig.model_validate(config, extra="forbid")
    assert parsed.thinking_config is not None
    assert parsed.thinking_config.thinking_budget == config["thinkingConfig"]["thinkingBudget"]


@pytest.mark.parametrize("level", LEVELS)
def test_ollama_think(level: str) -> None:
    from ollama._types import ChatRequest

    body = encode("ollama-chat", level).body
    assert body["think"] == (False if level == "off" else level)
    TypeAdapter(ChatRequest).validate_python(body, extra="forbid")


@pytest.mark.parametrize("level", LEVELS)
def test_bedrock_sends_claude_thinking_in_its_extra_fields(level: str) -> None:
    encoded = encode("bedrock-converse", level)
    thinking = encoded.body["additionalModelRequestFields"]["thinking"]
    assert thinking["type"] == ("disabled" if level == "off" else "enabled")
    assert "reasoning_as_thinking" in [n.kind for n in encoded.notes]


WIRES = ("anthropic-messages", "openai-chat", "openai-responses", "gemini-generate",
         "ollama-chat", "bedrock-converse", "gemini-interactions")


@pytest.mark.parametrize("wire", WIRES)
def test_a_temperature_is_left_out_while_reasoning_is_on(wire: str) -> None:
    on = encode(wire, "medium", temperature=0.2)
    assert "0.2" not in json.dumps(on.body)
    assert any(n.kind == "field_dropped" and n.subject == "temperature" for n in on.notes)
    off, plain = encode(wire, "off", temperature=0.2), encode(wire, None, temperature=0.2)
    # reasoning off: the temperature goes as the wire sends it without a reasoning setting
    assert ("0.2" in json.dumps(off.body)) == ("0.2" in json.dumps(plain.body))
    assert [n for n in off.notes if n.subject == "temperature"] == [
        n for n in plain.notes if n.subject == "temperature"]


@pytest.mark.parametrize("wire", WIRES)
def test_no_setting_sends_nothing_new(wire: str) -> None:
    assert encode(wire, None).body == get_codec(wire).encode(Request(
        model="m", messages=(Message.user("think about it"),), max_tokens=2048)).body


def test_a_level_that_is_not_one_is_left_out_with_a_note() -> None:
    encoded = encode("openai-chat", "extreme")
    assert "reasoning_effort" not in encoded.body
    assert [(n.kind, n.subject) for n in encoded.notes] == [("field_dropped", "reasoning")]


def test_the_agent_argument_reaches_the_server(tmp_path: Path) -> None:
    with Emulator([{"text": "Thought about it."}]) as emu:
        model = client.model(f"anthropic:m@{emu.base_url}", env={})
        result = Agent(model=model, reasoning="low").run("think")
        sent = emu.received[0].body
    assert result.answer == "Thought about it."
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": BUDGETS["low"]}


def toolwire(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], capture_output=True,
                          text=True, env=ENV, timeout=120, input="")


@pytest.mark.parametrize(("provider", "field", "value"), [
    ("openai", "reasoning_effort", "high"), ("ollama", "think", "high"),
    ("gemini", "generationConfig", {"thinkingConfig": {"thinkingBudget": BUDGETS["high"]}})])
def test_the_flag_reaches_the_server(tmp_path: Path, provider: str, field: str,
                                     value: Any) -> None:
    with Emulator([{"text": "Done."}]) as emu:
        proc = toolwire("run", "x", "--model", f"{provider}:m@{emu.base_url}", "--workdir",
                        str(tmp_path), "--tools", "none", "--reasoning", "high")
        sent = emu.received[0].body
    assert proc.returncode == 0, proc.stderr
    assert sent[field] == value


def test_the_flag_and_a_temperature_are_refused_together(tmp_path: Path) -> None:
    proc = toolwire("run", "x", "--model", "openai:m@http://127.0.0.1:9", "--workdir",
                    str(tmp_path), "--reasoning", "low", "--temperature", "0.3")
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("reasoning models refuse a sampling temperature; give "
                                        "one of them (or --reasoning off)")
