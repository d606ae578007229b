"""A freeform tool (`FreeformTool`) in a run: the model's custom tool call carries free text,
the tool is called with that text and its result goes back, over real HTTP to the emulator,
whole and streamed; on a wire without custom tools the same tool takes the text as ``input``."""

from __future__ import annotations

from typing import Any

import pytest

from sdk_types import assert_wire_valid
from toolwire import Agent, FreeformTool, Grammar, RunStop
from toolwire.emulator import Emulator
from toolwire.errors import ToolDefinitionError
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.http.providers import provider_for
from toolwire.transcript import ToolCallPart, ToolSpec

PATCH = "*** Begin Patch\n*** Add File: a.txt\n+one\n*** End Patch"
LARK = 'start: "*** Begin Patch" /(.|\\n)*/ "*** End Patch"'


def tool_and_seen() -> tuple[FreeformTool, list[str]]:
    seen: list[str] = []

    def apply_patch(text: str) -> str:
        seen.append(text)
        return f"applied {text.count(chr(10)) + 1} lines"

    return FreeformTool(name="apply_patch", description="Edit files with a patch.",
                        fn=apply_patch, grammar=Grammar(syntax="lark", definition=LARK)), seen


async def run(wire: str, call: dict[str, Any], *, stream: bool) -> tuple[Any, Emulator,
                                                                        list[str]]:
    tool, seen = tool_and_seen()
    script = [{"tool_calls": [{"id": "call_1", "name": "apply_patch", **call}]},
              {"text": "Patched."}]
    async with Emulator(script) as emu:
        model = make_model(f"{provider_for(wire)}:m@{emu.base_url}", env={},
                           retry=RetryPolicy(base=0.001, max_wait=0.01))
        result = await Agent(model=model, tools=[tool], stream=stream).arun("Add a.txt.")
        await model.aclose()
        emu.assert_done()
    return result, emu, seen


@pytest.mark.parametrize("wire", ["openai-chat", "openai-responses"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_custom_tool_call_runs_the_tool_with_its_text(wire: str, stream: bool) -> None:
    result, emu, seen = await run(wire, {"input": PATCH}, stream=stream)
    assert result.stop is RunStop.ANSWERED and seen == [PATCH]
    first, second = emu.received[0].body, emu.received[1].body
    assert_wire_valid(wire, first)
    assert_wire_valid(wire, second)
    if wire == "openai-chat":
        assert first["tools"] == [{"type": "custom", "custom": {
            "name": "apply_patch", "description": "Edit files with a patch.",
            "format": {"type": "grammar", "grammar": {"definition": LARK, "syntax": "lark"}}}}]
        assert second["messages"][1]["tool_calls"] == [{"id": "call_1", "type": "custom",
                                                        "custom": {"name": "apply_patch",
                                                                   "input": PATCH}}]
        assert second["messages"][2] == {"role": "tool", "tool_call_id": "call_1",
                                         "content": "applied 4 lines"}
    else:
        assert first["tools"][0]["type"] == "custom"
        assert [i["type"] for i in second["input"][1:]] == ["custom_tool_call",
                                                            "custom_tool_call_output"]
    (call,) = [p for m in result.messages for p in m.parts if isinstance(p, ToolCallPart)]
    assert call.freeform and call.raw_arguments == PATCH


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_on_a_wire_without_custom_tools_the_text_comes_as_input(stream: bool) -> None:
    result, emu, seen = await run("anthropic-messages", {"arguments": {"input": PATCH}},
                                  stream=stream)
    assert result.stop is RunStop.ANSWERED and seen == [PATCH]
    (sent,) = emu.received[0].body["tools"]
    assert sent["input_schema"]["properties"] == {"input": {"type": "string"}}


def test_a_freeform_tool_shows_a_freeform_spec_and_refuses_a_grammar_of_another_type() -> None:
    tool, _ = tool_and_seen()
    assert tool.spec == ToolSpec(name="apply_patch", description="Edit files with a patch.",
                                 input_schema=tool.spec.input_schema, freeform=True,
                                 grammar=Grammar(syntax="lark", definition=LARK))
    with pytest.raises(ToolDefinitionError, match="grammar must be a Grammar"):
        FreeformTool(name="x", grammar={"syntax": "lark"})  # type: ignore[arg-type]


def test_the_script_shorthand_takes_a_custom_call_with_its_text_and_refuses_other_input() -> None:
    from toolwire.emulator import parse_item
    from toolwire.errors import TranscriptError

    reply = parse_item({"tool_calls": [{"name": "apply_patch", "input": PATCH}]}).reply  # type: ignore[union-attr]
    (call,) = reply.tool_calls
    assert (call.freeform, call.raw_arguments, reply.stop) == (True, PATCH, "tool_calls")
    with pytest.raises(TranscriptError, match="input"):
        parse_item({"tool_calls": [{"name": "apply_patch", "input": 3}]})
