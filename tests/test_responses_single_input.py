"""A Responses server that takes one input item only (LM Studio 0.3.29): with the
``single_input`` quirk on, toolwire continues the responses the server keeps
(``previous_response_id``, only the newer items as ``input``, ``store: true``), and the emulator
playing such a server refuses a longer input in its words and keeps responses as OpenAI does.
"""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from sdk_types import assert_sdk_valid
from test_responses_servers import AGAIN, ANSWER, CALL, TOOL
from toolwire import Agent, Message, RunStop, check_transcript
from toolwire.codecs import get_codec
from toolwire.emulator import Emulator
from toolwire.http import quirks
from toolwire.http.client import model as make_model
from toolwire.transcript import Request, ToolCallPart, ToolResultPart

SERVER = "lmstudio-responses"
WIRE = "openai-responses"
ON = {"single_input": True}
WORDS = quirks.QUIRKS["single_input"].words


def _kept_ids(messages: Any) -> list[str]:
    return [m.provider_data[WIRE]["response"] for m in messages
            if m.role == "assistant" and m.provider_data]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_run_continues_the_kept_responses_with_only_the_new_items(stream: bool) -> None:
    async with Emulator([CALL, AGAIN, ANSWER], plays=SERVER, rules=ON) as emu:
        model = make_model(f"{SERVER}:qwen3@{emu.base_url}", options={"_rules": ON})
        result = await Agent(model=model, tools=[TOOL], stream=stream).arun("Weather?")
        await model.aclose()
        emu.assert_done()
    assert result.stop is RunStop.ANSWERED, result.error
    assert check_transcript(result.messages, WIRE) == []
    assert [m.role for m in result.messages] == [
        "user", "assistant", "tool", "assistant", "tool", "assistant"]
    kept = _kept_ids(result.messages)
    assert len(kept) == 3 and len(set(kept)) == 3
    bodies = [r.body for r in emu.received]
    for body in bodies:
        assert_sdk_valid(body)
        assert body["store"] is True and len(body["input"]) == 1
        assert "_continue" not in body and "_rules" not in body
    assert "previous_response_id" not in bodies[0]
    assert bodies[0]["input"][0]["content"] == "Weather?"
    assert [b["previous_response_id"] for b in bodies[1:]] == kept[:2]
    assert [b["input"][0]["call_id"] for b in bodies[1:]] == ["call_paris", "call_rome"]
    assert all(b["input"][0]["type"] == "function_call_output" for b in bodies[1:])


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_without_the_quirk_the_server_refuses_the_second_request(stream: bool) -> None:
    async with Emulator([CALL, ANSWER], plays=SERVER, rules=ON) as emu:
        model = make_model(f"{SERVER}:qwen3@{emu.base_url}")
        result = await Agent(model=model, tools=[TOOL], stream=stream).arun("Weather?")
        await model.aclose()
    assert result.stop is not RunStop.ANSWERED
    assert WORDS in str(result.error)
    assert len(emu.received) == 2 and len(emu.received[1].body["input"]) > 1
    assert "previous_response_id" not in emu.received[1].body


def _post(emu: Emulator, body: dict[str, Any]) -> httpx2.Response:
    return httpx2.post(f"{emu.base_url}/v1/responses", json=body, timeout=10)


@pytest.mark.parametrize("store", [True, False])
def test_the_emulator_keeps_a_response_unless_store_is_false(store: bool) -> None:
    first = {"model": "m", "input": "Weather?", "store": store,
             "tools": [{"type": "function", "name": "get_weather", "parameters": {
                 "type": "object", "properties": {"city": {"type": "string"}}},
                 "strict": False}]}
    with Emulator([CALL, ANSWER]) as emu:
        reply = _post(emu, first)
        assert reply.status_code == 200
        rid = reply.json()["id"]
        later = {"model": "m", "previous_response_id": rid, "tools": first["tools"],
                 "input": [{"type": "function_call_output", "call_id": "call_paris",
                            "output": "18°C"}]}
        assert_sdk_valid(later)
        answered = _post(emu, later)
    if store:  # the result pairs with the kept call: no refusal of a result without its call
        assert answered.status_code == 200, answered.text
        assert answered.json()["output"][0]["content"][0]["text"] == ANSWER.text
    else:
        assert answered.status_code == 400
        assert answered.json()["error"] == {
            "message": f"Previous response with id '{rid}' not found.",
            "type": "invalid_request_error", "param": "previous_response_id",
            "code": "previous_response_not_found"}


def test_the_played_server_refuses_more_than_one_item_before_reading_the_kept_ones() -> None:
    two = {"model": "m", "input": [{"role": "user", "content": "a"},
                                   {"role": "user", "content": "b"}]}
    assert quirks.refusal(two, frozenset({"single_input"})) == WORDS
    assert quirks.refusal({**two, "input": two["input"][:1]}, frozenset({"single_input"})) is None
    with Emulator([ANSWER], plays=SERVER, rules=ON) as emu:
        refused = _post(emu, two)
        assert refused.status_code == 400 and refused.json()["error"]["message"] == WORDS
    with Emulator([ANSWER], plays=SERVER) as emu:  # LM Studio's record lacks it: taken
        assert _post(emu, two).status_code == 200
    assert quirks.fit({"model": "m", "input": "a"}, frozenset({"single_input"}))["store"] is True


def test_the_codec_setting_sends_the_whole_history_when_no_reply_kept_an_id() -> None:
    codec = get_codec(WIRE)
    messages = (Message.user("a"), Message.assistant("b"), Message.user("c"))
    request = Request(model="m", messages=messages,
                      provider_options={WIRE: {"_continue": True}})
    body = codec.encode(request).body
    assert body["store"] is True and "previous_response_id" not in body
    assert len(body["input"]) == 3 and "_continue" not in body
    kept = Message(role="assistant", parts=messages[1].parts,
                   provider_data={WIRE: {"response": "resp_b"}})
    body = codec.encode(Request(model="m", messages=(messages[0], kept, messages[2]),
                                provider_options={WIRE: {"_continue": True}})).body
    assert body["previous_response_id"] == "resp_b"
    assert [i["content"] for i in body["input"]] == ["c"]
    assert_sdk_valid(body)
    plain = codec.encode(Request(model="m", messages=(messages[0], kept, messages[2]))).body
    assert "previous_response_id" not in plain and len(plain["input"]) == 3
    assert all("response" not in item for item in plain["input"])


def test_a_continued_result_of_a_freeform_call_stays_a_custom_output() -> None:
    call = ToolCallPart(id="call_sh", name="shell", arguments={"input": "ls"}, freeform=True)
    result = ToolResultPart(call_id="call_sh", name="shell", content="a.txt")
    messages = (Message.user("List."),
                Message(role="assistant", parts=(call,),
                        provider_data={WIRE: {"response": "resp_sh"}}),
                Message(role="tool", parts=(result,)))
    body = get_codec(WIRE).encode(Request(model="m", messages=messages,
                                          provider_options={WIRE: {"_continue": True}})).body
    assert body["previous_response_id"] == "resp_sh"
    assert [i["type"] for i in body["input"]] == ["custom_tool_call_output"]
