"""The Python API takes what people write: a model id as a string, and a clear error at
construction for a model of None, a single function as tools, or a request's tools that are
not specs (a `Tool` is taken as its spec). The string id runs for real against the emulator."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import toolwire
from toolwire import Agent, ConfigError, Request, Tool, ToolDefinitionError, TranscriptError
from toolwire.codecs import get_codec
from toolwire.emulator import Emulator


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_an_agent_takes_a_model_id_string() -> None:
    with Emulator([{"tool_calls": [{"id": "c1", "name": "add", "arguments": {"a": 2, "b": 3}}]},
                   {"text": "5."}]) as emu:
        agent = Agent(model=f"anthropic:claude-x@{emu.base_url}", tools=[add])
        result = agent.run("2 + 3?")
    assert result.answer == "5." and result.ok
    assert emu.received[0].body["model"] == "claude-x"


def test_a_model_id_in_a_fresh_process_as_users_write_it() -> None:
    with Emulator([{"text": "Hello."}]) as emu:
        code = ("from toolwire import Agent\n"
                f"print(Agent(model='openai:gpt-x@{emu.base_url}').run('hi').answer)\n")
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Hello."


@pytest.mark.parametrize("value", [None, 42, object()])
def test_a_model_that_is_not_one_is_refused_at_construction(value: object) -> None:
    with pytest.raises(ConfigError, match=r"Agent\(model=\.\.\.\).*not a model"):
        Agent(model=value)  # type: ignore[arg-type]


def test_a_bad_model_id_is_refused_at_construction() -> None:
    with pytest.raises(ConfigError, match="unknown model id"):
        Agent(model="gpt-5")


@pytest.mark.parametrize("tools", [add, Tool.from_function(add)])
def test_a_single_tool_for_tools_is_refused_saying_to_make_a_list(tools: object) -> None:
    with pytest.raises(ToolDefinitionError, match=r"tools=\[add\]"):
        Agent(model=_scripted(), tools=tools)  # type: ignore[arg-type]


def _scripted() -> object:
    from toolwire.testing import ScriptedModel, reply

    return ScriptedModel([reply("x")])


def test_a_request_takes_a_tool_as_its_spec() -> None:
    tool = Tool.from_function(add)
    request = Request(model="m", messages=(toolwire.Message.user("hi"),), tools=[tool])
    assert request.tools == (tool.spec,)
    body = get_codec("anthropic-messages").encode_request(request)
    assert body["tools"][0]["name"] == "add"


def test_a_request_refuses_a_tool_that_is_no_spec_at_construction() -> None:
    with pytest.raises(TranscriptError, match="item 0 is a function, not a ToolSpec"):
        Request(model="m", tools=[add])  # type: ignore[list-item]
