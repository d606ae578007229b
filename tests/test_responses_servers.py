"""Servers that serve the Responses API besides OpenAI: Ollama, LM Studio, vLLM, llama.cpp,
OpenRouter and Bedrock's Mantle, each a provider record with the gaps users and their docs
report (`toolwire.http.quirks`).

The emulator plays each server (``Emulator(plays=name)``): it refuses what that server refuses,
in its words, whole and streamed, and sends call ids as Mantle does. Every body toolwire sends
validates against the openai SDK's request types; every run ends answered with a transcript
that keeps the wire's rules. Each quirk is shown to matter: turned off by its setting, the
server's refusal comes back.
"""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from media_files import png
from sdk_types import assert_sdk_valid
from toolwire import (
    Agent,
    Message,
    ReasoningPart,
    RunStop,
    TextPart,
    ToolCallPart,
    check_transcript,
)
from toolwire.emulator import Emulator
from toolwire.errors import InvalidRequestError
from toolwire.http import quirks
from toolwire.http.client import RetryPolicy
from toolwire.http.client import model as make_model
from toolwire.http.endpoints import parse_model_id
from toolwire.http.providers import get_provider
from toolwire.media import Image
from toolwire.schema.tool import Tool
from toolwire.transcript import Reply, Request, ToolChoice, ToolResultPart, ToolSpec

SERVERS = ["ollama-responses", "lmstudio-responses", "vllm-responses", "llamacpp-responses",
           "openrouter-responses"]
ENV = {"OPENROUTER_API_KEY": "or-key"}
WIRE = "openai-responses"

CALL = Reply(message=Message(role="assistant", parts=(
    TextPart(text="Checking."),
    ToolCallPart(id="call_paris", name="get_weather", arguments={"city": "Paris"}))),
    stop="tool_calls")
AGAIN = Reply(message=Message(role="assistant", parts=(
    ToolCallPart(id="call_rome", name="get_weather", arguments={"city": "Rome"}),)),
    stop="tool_calls")
ANSWER = Reply(message=Message.assistant("18°C in Paris, 21°C in Rome."))
TOOL = Tool(name="get_weather", description="Weather for a city.",
            input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"]}, fn=lambda city: f"18°C in {city}")


def _valid(emu: Emulator) -> None:
    for received in emu.received:
        assert_sdk_valid(received.body)


@pytest.mark.parametrize("server", SERVERS)
def test_each_server_is_a_responses_provider_with_its_quirks_in_the_table(server: str) -> None:
    record = get_provider(server)
    assert record is not None and record.wire == WIRE and record.quirks
    assert set(record.quirks) <= set(quirks.QUIRKS)
    endpoint = parse_model_id(f"{server}:qwen3", ENV)
    assert endpoint.url().endswith("/v1/responses") and endpoint.wire == WIRE
    for code in record.quirks:  # every quirk names where it is written
        assert all(s.startswith("https://") for s in quirks.QUIRKS[code].sources)


def test_ollama_responses_follows_ollama_host() -> None:
    endpoint = parse_model_id("ollama-responses:qwen3", {"OLLAMA_HOST": "10.0.0.5:11434"})
    assert endpoint.url() == "http://10.0.0.5:11434/v1/responses"


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_a_full_run_on_each_server(server: str, stream: bool) -> None:
    stateless = "stateless" in get_provider(server).quirks  # type: ignore[union-attr]
    async with Emulator([CALL, AGAIN, ANSWER], plays=server) as emu:
        # a server that keeps responses answers an id it never kept as not found
        model = make_model(f"{server}:qwen3@{emu.base_url}", env=ENV, options={
            "previous_response_id": "resp_earlier"} if stateless else None)
        result = await Agent(model=model, tools=[TOOL], stream=stream).arun("Weather?")
        await model.aclose()
        emu.assert_done()
    assert result.stop is RunStop.ANSWERED, result.error
    assert check_transcript(result.messages, WIRE) == []
    assert [r.path for r in emu.received] == ["/v1/responses"] * 3
    _valid(emu)
    last = emu.received[-1].body
    assert [i.get("type", "message") for i in last["input"]] == [
        "message", "message", "function_call", "function_call_output", "function_call",
        "function_call_output"]
    if stateless:
        assert last["store"] is False and "previous_response_id" not in last


# --------------------------------------------------------------------------- refusals

SEARCH = {"type": "web_search"}
FUNCTION = {"type": "function", "name": "get_weather", "description": "Weather.",
            "parameters": {"type": "object", "properties": {}}, "strict": False}
IMAGE = "data:image/png;base64,iVBORw0KGgo="
BREAKING = {
    "stateless": {"previous_response_id": "resp_1"},
    "function_tools_only": {"tools": [FUNCTION, SEARCH]},
    "plain_items": {"input": [{"role": "user", "content": "hi"},
                              {"type": "compaction", "encrypted_content": "opaque"}]},
    "text_tool_output": {"input": [
        {"role": "user", "content": "look"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather",
         "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_1", "output": [
            {"type": "input_text", "text": "a chart"},
            {"type": "input_image", "image_url": IMAGE, "detail": "auto"}]}]},
}
CASES = [(server, code) for server in SERVERS
         for code in get_provider(server).quirks  # type: ignore[union-attr]
         if code in BREAKING]


def _post(emu: Emulator, body: dict[str, Any]) -> httpx2.Response:
    return httpx2.post(f"{emu.base_url}/v1/responses", json=body, timeout=10)


@pytest.mark.parametrize(("server", "code"), CASES, ids=[f"{s}-{c}" for s, c in CASES])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_the_emulator_refuses_as_the_server_does_and_the_fitted_body_passes(
        server: str, code: str, stream: bool) -> None:
    body = {"model": "qwen3", "input": [{"role": "user", "content": "hi"}], "stream": stream,
            **BREAKING[code]}
    assert_sdk_valid(body)
    with Emulator([ANSWER], plays=server) as emu:
        refused = _post(emu, body)
        assert refused.status_code == 400
        assert refused.json()["error"]["message"] == quirks.refusal(body, frozenset({code}))
        assert refused.json()["error"]["message"].split(":")[0] in quirks.QUIRKS[code].words
        fitted = quirks.fit(body, quirks.active(get_provider(server).quirks))  # type: ignore
        assert_sdk_valid(fitted)
        taken = _post(emu, fitted)
        assert taken.status_code == 200, taken.text
        if stream:
            assert "event: response.completed" in taken.text
        else:
            assert taken.json()["output"][0]["content"][0]["text"] == ANSWER.text
    with Emulator([ANSWER]) as emu:  # a server without the quirk takes the body as it is
        answered = _post(emu, body)
        if code == "stateless":  # it reads the id, and keeps no response under that one
            assert answered.status_code == 400
            assert answered.json()["error"]["message"] == (
                "Previous response with id 'resp_1' not found.")
        else:
            assert answered.status_code == 200


def test_a_quirk_a_server_lacks_is_not_played() -> None:
    body = {"model": "m", "input": "hi", **BREAKING["function_tools_only"]}
    with Emulator([ANSWER], plays="vllm-responses") as emu:
        assert _post(emu, body).status_code == 200
    with pytest.raises(ValueError, match="no provider has that name"):
        Emulator(plays="no-such-server")


# --------------------------------------------------------------------------- what toolwire does

def _request(**changes: Any) -> Request:
    given: dict[str, Any] = {"messages": (Message.user("Weather?"),), **changes}
    return Request(model="m", tools=(ToolSpec(name="get_weather", description="Weather.",
                                              input_schema={"type": "object",
                                                            "properties": {}}),), **given)


async def _sent(model_id: str, request: Request, **kwargs: Any) -> dict[str, Any]:
    async with Emulator([ANSWER], plays=model_id.split(":")[0]) as emu:
        model = make_model(f"{model_id}@{emu.base_url}", retry=RetryPolicy(max_attempts=1),
                           **kwargs)
        try:
            await model.complete(request)
        finally:
            await model.aclose()
    _valid(emu)
    body: dict[str, Any] = emu.received[-1].body
    return body


@pytest.mark.parametrize(("choice", "tools_kept"), [
    (ToolChoice(mode="none"), False), (ToolChoice(mode="required"), True),
    (ToolChoice(mode="tool", name="get_weather"), True)])
async def test_ollama_is_sent_no_tool_choice_and_none_leaves_the_tools_out(
        choice: ToolChoice, tools_kept: bool) -> None:
    sent = await _sent("ollama-responses:qwen3", _request(tool_choice=choice))
    assert "tool_choice" not in sent
    assert ("tools" in sent) is tools_kept
    as_is = await _sent("lmstudio-responses:qwen3", _request(tool_choice=choice))
    assert "tool_choice" in as_is and "tools" in as_is  # LM Studio takes them


def _with_picture() -> Request:
    call = ToolCallPart(id="call_1", name="get_weather", arguments={"city": "Paris"})
    result = ToolResultPart(call_id="call_1", name="get_weather", content=(
        TextPart(text="a chart"), Image.from_bytes(png(4, 4), "image/png")))
    return _request(messages=(Message.user("Weather?"),
                              Message(role="assistant", parts=(call,)),
                              Message(role="tool", parts=(result,))))


def _output(body: dict[str, Any]) -> Any:
    return next(i for i in body["input"] if i.get("type") == "function_call_output")["output"]


async def test_llama_cpp_is_sent_a_tool_output_as_one_string() -> None:
    sent = await _sent("llamacpp-responses:qwen3", _with_picture())
    output = _output(sent)
    assert output == "a chart\n[input_image left out]"
    as_is = await _sent("ollama-responses:qwen3", _with_picture())  # Ollama reads the parts
    output = _output(as_is)
    assert [p["type"] for p in output] == ["input_text", "input_image"]


@pytest.mark.parametrize(("model_id", "code", "request_of", "options"), [
    ("llamacpp-responses:qwen3", "text_tool_output", _with_picture, {}),
    ("ollama-responses:qwen3", "stateless", _request, {"previous_response_id": "resp_1"}),
])
async def test_a_quirk_turned_off_by_its_setting_brings_the_refusal_back(
        model_id: str, code: str, request_of: Any, options: dict[str, Any]) -> None:
    await _sent(model_id, request_of(), options=options)  # on: taken
    with pytest.raises(InvalidRequestError) as refused:
        await _sent(model_id, request_of(), options={**options, "_rules": {code: False}})
    assert quirks.QUIRKS[code].words.split(":")[0] in str(refused.value)


def test_the_setting_turns_a_quirk_on_for_a_server_without_it() -> None:
    assert quirks.active(("stateless",), {"_rules": {"function_tools_only": True}}) == {
        "stateless", "function_tools_only"}
    assert quirks.active(("stateless",), {"_rules": {"stateless": False, "nonsense": True}}) \
        == frozenset()
    body = {"model": "m", "input": "hi", "tools": [FUNCTION, SEARCH],
            "tool_choice": {"type": "web_search"}}
    assert quirks.fit(body, frozenset()) is body
    fitted = quirks.fit(body, frozenset({"function_tools_only"}))
    assert fitted["tools"] == [FUNCTION] and "tool_choice" not in fitted
    assert body["tools"] == [FUNCTION, SEARCH]  # changed on a copy
    only_search = quirks.fit({**body, "tools": [SEARCH]}, frozenset({"function_tools_only"}))
    assert "tools" not in only_search and "tool_choice" not in only_search


# --------------------------------------------------------------------------- Mantle's call ids

MANTLE = {"AWS_REGION": "us-east-1", "AWS_BEARER_TOKEN_BEDROCK": "bedrock-key"}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_mantle_s_reused_call_ids_are_made_unique_so_results_pair(stream: bool) -> None:
    async with Emulator([CALL, AGAIN, ANSWER], plays="bedrock-mantle") as emu:
        model = make_model(f"bedrock-mantle:openai.gpt-oss-120b@{emu.base_url}", env=MANTLE)
        result = await Agent(model=model, tools=[TOOL], stream=stream).arun("Weather?")
        await model.aclose()
    assert result.stop is RunStop.ANSWERED, result.error
    calls = [c.id for m in result.messages for c in m.tool_calls]
    assert calls == ["call_0", "call_0_2"]  # the server sent call_0 both times
    results = [r.call_id for m in result.messages for r in m.tool_results]
    assert results == calls and check_transcript(result.messages, WIRE) == []
    last = emu.received[-1].body["input"]
    pairs = [(i["type"], i["call_id"]) for i in last if "call_id" in i]
    assert pairs == [("function_call", "call_0"), ("function_call_output", "call_0"),
                     ("function_call", "call_0_2"), ("function_call_output", "call_0_2")]
    assert [i["output"] for i in last if i.get("type") == "function_call_output"] == [
        "18°C in Paris", "18°C in Rome"]
    _valid(emu)


async def test_without_the_renaming_mantle_s_ids_collide() -> None:
    async with Emulator([CALL, AGAIN, ANSWER], plays="bedrock-mantle") as emu:
        model = make_model(f"bedrock-mantle:openai.gpt-oss-120b@{emu.base_url}", env=MANTLE,
                           options={"_rules": {"reused_call_ids": False}})
        result = await Agent(model=model, tools=[TOOL]).arun("Weather?")
        await model.aclose()
    calls = [c.id for m in result.messages for c in m.tool_calls]
    assert calls[:2] == ["call_0", "call_0"]
    assert result.stop is RunStop.PROVIDER_ERROR and "used again" in str(result.error)
    assert [p.rule for p in check_transcript(result.messages, WIRE)] == ["duplicate_call_id"]


def test_renamed_ids_stay_within_mantle_s_length_and_unique() -> None:
    long_id = "c" * 64
    earlier = Message(role="assistant", parts=(ToolCallPart(id=long_id, name="f"),))
    request = Request(model="m", messages=(Message.user("x"), earlier))
    reply = Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id=long_id, name="f"), ToolCallPart(id=long_id, name="f"))))
    ids = [c.id for c in quirks.unique_ids(reply, request).tool_calls]
    assert len(set(ids)) == 2 and long_id not in ids
    assert all(len(i) <= quirks.MAX_CALL_ID for i in ids)
    same = Reply(message=Message(role="assistant", parts=(ToolCallPart(id="new", name="f"),)))
    assert quirks.unique_ids(same, request) is same
    with Emulator([ANSWER], plays="bedrock-mantle") as emu:
        too_long = {"model": "m", "input": [
            {"type": "function_call", "call_id": "x" * 65, "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "x" * 65, "output": "ok"}]}
        refused = httpx2.post(f"{emu.base_url}/openai/v1/responses", json=too_long, timeout=10)
    assert refused.status_code == 400 and "maximum length 64" in refused.text


# --------------------------------------------------------------------------- docs and counting


def test_docs_show_the_quirks_table_as_the_code_has_it() -> None:
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "servers.md").read_text("utf-8")
    shown = page.split("<!-- quirks: drawn by toolwire.http.quirks.table_markdown -->\n")[1]
    assert shown.split("<!-- end of quirks -->")[0] == quirks.table_markdown()
    for server in [*SERVERS, "bedrock-mantle"]:  # the provider table names each one
        assert f"| `{server}:" in page


@pytest.mark.parametrize("server", SERVERS)
async def test_a_server_without_the_counting_endpoint_is_counted_here(server: str) -> None:
    async with Emulator([]) as emu:
        model = make_model(f"{server}:qwen3@{emu.base_url}", env=ENV)
        counted = await model.count_tokens(_request())
        await model.aclose()
        assert counted > 0 and emu.received == []  # the local estimate: nothing was sent
        first_party = make_model(f"openai-responses:qwen3@{emu.base_url}", env={})
        await first_party.count_tokens(_request())
        await first_party.aclose()
        assert [r.path for r in emu.received] == ["/v1/responses/input_tokens"]


@pytest.mark.parametrize("dropped", [False, True])
async def test_reasoning_items_are_left_out_only_when_the_setting_says(dropped: bool) -> None:
    sealed = {"type": "reasoning", "id": "rs_1", "encrypted_content": "opaque",
              "summary": [{"type": "summary_text", "text": "Paris first."}]}
    thinking = Reply(message=Message(role="assistant", parts=(
        ReasoningPart(text="Paris first.", provider_data={WIRE: sealed}),
        *CALL.message.parts)), stop="tool_calls")
    async with Emulator([thinking, ANSWER], plays="vllm-responses") as emu:
        model = make_model(f"vllm-responses:qwen3@{emu.base_url}",
                           options={"_rules": {"no_reasoning_items": True}} if dropped else None)
        result = await Agent(model=model, tools=[TOOL]).arun("Weather?")
        await model.aclose()
    assert result.stop is RunStop.ANSWERED
    kinds = [i.get("type") for i in emu.received[1].body["input"]]
    assert ("reasoning" in kinds) is not dropped
    _valid(emu)
