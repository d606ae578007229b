"""`toolwire proxy` driven by the official SDK clients, the emulator as the upstream in every
other wire: a two-turn run with parallel tool calls, whole and streamed. Every reply is read
by the client's SDK and validated against its types; the upstream's requests are valid for
the upstream's SDK types and keep the transcript rules of its wire (and, where both wires
carry call ids, hold the upstream's own ids again on the second turn); the client's call ids
keep its wire's rules."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from media_files import png
from proxy_harness import running_proxy
from sdk_types import assert_wire_valid
from toolwire.codecs import get_codec
from toolwire.codecs.registry import get_wire
from toolwire.emulator import Emulator
from toolwire.proxy.ids import longest
from toolwire.rules import check_transcript
from toolwire.transcript import (
    MediaPart,
    Message,
    ReasoningPart,
    Reply,
    Request,
    ToolCallPart,
    ToolResultPart,
)

pytest.importorskip("uvicorn")
anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
ollama = pytest.importorskip("ollama")
genai = pytest.importorskip("google.genai")

UPSTREAM_IDS = {
    "anthropic-messages": ("toolu_01Rk3vXb9LmT2aWc4YdE8q", "toolu_01Pn7zK3vXb9LmT2aWc4Yd"),
    # as some Chat Completions servers give them: '.' and ':' are not allowed in Anthropic's
    "openai-chat": ("functions.get_weather:0", "functions.get_weather:1"),
    "openai-responses": ("call_Rq7zPnK3vXb9LmT2aWc4YdE8", "call_Pn7zK3vXb9LmT2aWc4YdE8Rq"),
    "gemini-generate": ("fc-rome", "fc-oslo"),
    "ollama-chat": ("call_0", "call_1"),
    "bedrock-converse": ("tooluse_Rk3vXb9LmT2aWc4YdE8q", "tooluse_Pn7zK3vXb9LmT2aWc4Yd"),
}
"""The call ids each upstream wire's server gives."""
CITIES = ("Rome", "Oslo")
IMAGE = png(4, 4, seed=7)
"""A small picture each client sends with its first question: media go across too."""
B64 = base64.b64encode(IMAGE).decode()
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


THOUGHT = "Both cities, one call each."
REASONING: dict[str, Any] = {
    "anthropic-messages": {"type": "thinking", "thinking": THOUGHT, "signature": "sig-A1b2"},
    "openai-responses": {"type": "reasoning", "id": "rs_0a1b2c", "summary": [
        {"type": "summary_text", "text": THOUGHT}], "encrypted_content": "gAAAAenc0a1b2c"},
    "bedrock-converse": {"reasoningText": {"text": THOUGHT, "signature": "sig-B3c4"}},
}
"""Each upstream's own signed or encrypted reasoning block, which must come back to it."""
ON_CALLS = {"gemini-generate": {"thoughtSignature": "c2lnLUc1ZDY="}}
"""What an upstream keeps on its first call, which must come back with it (Gemini signs its
thinking on the call when it does not show the thoughts)."""
CARRIED = {*REASONING, "gemini-generate"}
"""The client wires with a field the upstream's reasoning travels in."""


def answer(request: Request, wire: str) -> Reply:
    """Reasoning and two parallel calls to a fresh question; a text once the results are in."""
    last = request.messages[-1]
    if any(isinstance(p, ToolResultPart) for p in last.parts):
        return Reply(message=Message.assistant("Rome is sunny, Oslo is cold."))
    thought = ([ReasoningPart(text=THOUGHT, provider_data={wire: REASONING[wire]})]
               if wire in REASONING else [])
    kept = {wire: ON_CALLS[wire]} if wire in ON_CALLS else None
    return Reply(message=Message(role="assistant", parts=(*thought, *(
        ToolCallPart(id=i, name="get_weather", arguments={"city": c},
                     provider_data=kept if n == 0 else None)
        for n, (i, c) in enumerate(zip(UPSTREAM_IDS[wire], CITIES, strict=True))))),
        stop="tool_calls")


UPSTREAMS = {
    "anthropic-messages": "anthropic:m@{url}",
    "openai-chat": "openai:m@{url}",
    "openai-responses": "openai-responses:m@{url}",
    "ollama-chat": "ollama:m@{url}",
    "gemini-generate": "gemini:m@{url}",
    "bedrock-converse": "bedrock:m@{url}",
}


@pytest.fixture(scope="module")
def emulator() -> Iterator[Emulator]:
    with Emulator(answer) as emu:
        yield emu


@pytest.fixture(scope="module")
def proxies(emulator: Emulator) -> Iterator[dict[str, str]]:
    from contextlib import ExitStack

    with ExitStack() as stack, pytest.MonkeyPatch.context() as env:
        env.setenv("AWS_BEARER_TOKEN_BEDROCK", "upstream-token")  # the proxy's own key
        env.setenv("AWS_REGION", "us-east-1")
        yield {wire: stack.enter_context(running_proxy(model.format(url=emulator.base_url)))
               for wire, model in UPSTREAMS.items()}


# ---------------------------------------------------------------- one driver per client SDK

Turn = tuple[list[tuple[str, dict[str, Any]]], str]
"""What a client read from one reply: its calls (id, arguments) and its text."""


def _valid(model: Any) -> None:
    """The SDK object validates against its own type (the SDK builds it without checking)."""
    type(model).model_validate(model.model_dump(mode="json", exclude_none=True))


def anthropic_run(url: str, stream: bool) -> list[Turn]:
    client = anthropic.Anthropic(base_url=url, api_key="unused", max_retries=0)
    tools = [{"name": "get_weather", "input_schema": SCHEMA}]
    messages: list[dict[str, Any]] = [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64}},
        {"type": "text", "text": "Weather in Rome and Oslo?"}]}]
    turns: list[Turn] = []
    for _ in range(2):
        if stream:
            with client.messages.stream(model="claude", max_tokens=200, messages=messages,
                                        tools=tools) as events:
                reply = events.get_final_message()
        else:
            reply = client.messages.create(model="claude", max_tokens=200, messages=messages,
                                           tools=tools)
        _valid(reply)
        calls = [(b.id, b.input) for b in reply.content if b.type == "tool_use"]
        text = "".join(b.text for b in reply.content if b.type == "text")
        turns.append((calls, text))
        messages.append({"role": "assistant",
                         "content": [b.model_dump(exclude_none=True) for b in reply.content]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": i, "content": "sunny"} for i, _ in calls]})
    return turns


def chat_run(url: str, stream: bool, client: Any = None) -> list[Turn]:
    client = client or openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]
    messages: list[dict[str, Any]] = [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}},
        {"type": "text", "text": "Weather in Rome and Oslo?"}]}]
    turns: list[Turn] = []
    for _ in range(2):
        if stream:
            chunks = list(client.chat.completions.create(model="gpt", messages=messages,
                                                         tools=tools, stream=True))
            for chunk in chunks:
                _valid(chunk)
            text = "".join(c.delta.content or "" for ch in chunks for c in ch.choices)
            found: dict[int, dict[str, str]] = {}
            for ch in chunks:
                for c in ch.choices:
                    for tc in c.delta.tool_calls or []:
                        slot = found.setdefault(tc.index, {"id": "", "args": ""})
                        slot["id"] += tc.id or ""
                        slot["args"] += (tc.function.arguments or "") if tc.function else ""
            calls = [(s["id"], json.loads(s["args"])) for _, s in sorted(found.items())]
        else:
            done = client.chat.completions.create(model="gpt", messages=messages, tools=tools)
            _valid(done)
            message = done.choices[0].message
            text = message.content or ""
            calls = [(c.id, json.loads(c.function.arguments)) for c in message.tool_calls or []]
        turns.append((calls, text))
        messages.append({"role": "assistant", "content": text or None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "get_weather",
                                                       "arguments": json.dumps(a)}}
            for i, a in calls]} if calls else {"role": "assistant", "content": text})
        messages += [{"role": "tool", "tool_call_id": i, "content": "sunny"} for i, _ in calls]
    return turns


def responses_run(url: str, stream: bool) -> list[Turn]:
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    tools = [{"type": "function", "name": "get_weather", "parameters": SCHEMA, "strict": True}]
    items: list[Any] = [{"role": "user", "content": [
        {"type": "input_image", "image_url": f"data:image/png;base64,{B64}", "detail": "auto"},
        {"type": "input_text", "text": "Weather in Rome and Oslo?"}]}]
    turns: list[Turn] = []
    for _ in range(2):
        if stream:
            events = list(client.responses.create(model="gpt", input=items, tools=tools,
                                                  stream=True, store=False))
            for event in events:
                _valid(event)
            assert events[-1].type == "response.completed"
            response = events[-1].response
        else:
            response = client.responses.create(model="gpt", input=items, tools=tools,
                                               store=False)
        _valid(response)
        calls = [(o.call_id, json.loads(o.arguments)) for o in response.output
                 if o.type == "function_call"]
        turns.append((calls, response.output_text))
        items += [o.model_dump(exclude_none=True) for o in response.output]
        items += [{"type": "function_call_output", "call_id": i, "output": "sunny"}
                  for i, _ in calls]
    return turns


def ollama_run(url: str, stream: bool, client: Any = None) -> list[Turn]:
    client = client or ollama.Client(host=url)
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}]
    messages: list[Any] = [{"role": "user", "content": "Weather in Rome and Oslo?",
                             "images": [B64]}]
    turns: list[Turn] = []
    for _ in range(2):
        if stream:
            parts = list(client.chat(model="llama", messages=messages, tools=tools, stream=True))
            for part in parts:
                _valid(part)
            text = "".join(p.message.content or "" for p in parts)
            raw_calls = [c for p in parts for c in p.message.tool_calls or []]
        else:
            done = client.chat(model="llama", messages=messages, tools=tools, stream=False)
            _valid(done)
            text = done.message.content or ""
            raw_calls = list(done.message.tool_calls or [])
        calls = [("", dict(c.function.arguments)) for c in raw_calls]
        turns.append((calls, text))
        messages.append({"role": "assistant", "content": text, "tool_calls": [
            {"function": {"name": "get_weather", "arguments": a}} for _, a in calls]})
        messages += [{"role": "tool", "content": "sunny", "tool_name": "get_weather"}
                     for _ in calls]
    return turns


def gemini_run(url: str, stream: bool) -> list[Turn]:
    from google.genai import types

    client = genai.Client(api_key="unused", http_options=types.HttpOptions(base_url=url))
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[
        types.FunctionDeclaration(name="get_weather", parameters_json_schema=SCHEMA)])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    contents: list[Any] = [types.Content(role="user", parts=[
        types.Part(inline_data=types.Blob(mime_type="image/png", data=IMAGE)),
        types.Part(text="Weather in Rome and Oslo?")])]
    turns: list[Turn] = []
    for _ in range(2):
        if stream:
            pieces = list(client.models.generate_content_stream(model="gemini",
                                                                contents=contents,
                                                                config=config))
            for piece in pieces:
                _valid(piece)
            parts = [p for piece in pieces for c in piece.candidates or []
                     for p in (c.content.parts if c.content else None) or []]
        else:
            done = client.models.generate_content(model="gemini", contents=contents,
                                                  config=config)
            _valid(done)
            parts = list(done.candidates[0].content.parts or [])
        calls = [(p.function_call.id or "", dict(p.function_call.args or {}))
                 for p in parts if p.function_call]
        text = "".join(p.text or "" for p in parts if p.text)
        turns.append((calls, text))
        contents.append(types.Content(role="model", parts=parts))
        contents.append(types.Content(role="user", parts=[
            types.Part(function_response=types.FunctionResponse(
                id=i or None, name="get_weather", response={"result": "sunny"}))
            for i, _ in calls]))
    return turns


def bedrock_run(url: str, stream: bool) -> list[Turn]:
    import boto3
    from botocore.config import Config

    client = boto3.client("bedrock-runtime", endpoint_url=url, region_name="us-east-1",
                          aws_access_key_id="unused", aws_secret_access_key="unused",
                          # signed, not the bearer token the proxy's own upstream reads from
                          # the environment (newer botocore sends a bearer one only by https)
                          config=Config(retries={"max_attempts": 1}, signature_version="v4"))
    tools = {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": SCHEMA}}}]}
    messages: list[Any] = [{"role": "user", "content": [
        {"image": {"format": "png", "source": {"bytes": IMAGE}}},
        {"text": "Weather in Rome and Oslo?"}]}]
    turns: list[Turn] = []
    for _ in range(2):
        if stream:
            events = list(client.converse_stream(modelId="claude", messages=messages,
                                                 toolConfig=tools)["stream"])
            assert "messageStop" in events[-2] and "metadata" in events[-1]
            blocks: dict[int, dict[str, Any]] = {}
            for event in events:
                if "contentBlockStart" in event:
                    start = event["contentBlockStart"]
                    use = start["start"]["toolUse"]
                    blocks[start["contentBlockIndex"]] = {"toolUse": {**use, "input": ""}}
                elif "contentBlockDelta" in event:
                    delta = event["contentBlockDelta"]
                    said = delta["delta"]
                    if "reasoningContent" in said:
                        block = blocks.setdefault(delta["contentBlockIndex"], {
                            "reasoningContent": {"reasoningText": {"text": ""}}})
                        readable = block["reasoningContent"]["reasoningText"]
                        readable["text"] += said["reasoningContent"].get("text", "")
                        if "signature" in said["reasoningContent"]:
                            readable["signature"] = said["reasoningContent"]["signature"]
                        continue
                    block = blocks.setdefault(delta["contentBlockIndex"], {"text": ""})
                    if "text" in said:
                        block["text"] += said["text"]
                    else:
                        block["toolUse"]["input"] += said["toolUse"]["input"]
            content = [b if "toolUse" not in b else {"toolUse": {
                **b["toolUse"], "input": json.loads(b["toolUse"]["input"] or "{}")}}
                for _, b in sorted(blocks.items())]
        else:
            done = client.converse(modelId="claude", messages=messages, toolConfig=tools)
            content = done["output"]["message"]["content"]
        calls = [(b["toolUse"]["toolUseId"], b["toolUse"]["input"]) for b in content
                 if "toolUse" in b]
        turns.append((calls, "".join(b.get("text", "") for b in content)))
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": [
            {"toolResult": {"toolUseId": i, "content": [{"text": "sunny"}]}}
            for i, _ in calls]})
    return turns


CLIENTS: dict[str, Callable[[str, bool], list[Turn]]] = {
    "anthropic-messages": anthropic_run,
    "openai-chat": chat_run,
    "openai-responses": responses_run,
    "ollama-chat": ollama_run,
    "gemini-generate": gemini_run,
    "bedrock-converse": bedrock_run,
}

PAIRS = [(c, u) for c in CLIENTS for u in UPSTREAMS if c != u]


def fits(call_id: str, wire: str) -> bool:
    pattern = get_wire(wire).rules.id_pattern
    return (0 < len(call_id) <= longest(wire)
            and (pattern is None or pattern.fullmatch(call_id) is not None))


def check_upstream_request(emulator: Emulator, upstream: str) -> Request:
    """The upstream's last request: its SDK's types accept it, its wire's rules hold."""
    received = emulator.received[-1]
    assert received.wire == upstream
    assert_wire_valid(upstream, received.body)  # every wire: its own SDK's request types
    path_model = {"model": "m", "stream": received.path.endswith(("streamGenerateContent",
                                                                  "converse-stream"))}
    request = get_codec(upstream).decode_request(
        received.body, **(path_model if get_wire(upstream).model_in_path else {}))
    assert [p for p in check_transcript(request.messages, upstream)
            if p.severity == "error"] == []
    return request


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(("client", "upstream"), PAIRS, ids=[f"{c}>{u}" for c, u in PAIRS])
def test_a_two_turn_run_with_parallel_calls_across_wires(
        client: str, upstream: str, stream: bool, emulator: Emulator,
        proxies: dict[str, str]) -> None:
    turns = CLIENTS[client](proxies[upstream], stream)
    (calls, _), (again, text) = turns
    assert [a for _, a in calls] == [{"city": c} for c in CITIES]  # both, in one reply
    assert again == [] and text == "Rome is sunny, Oslo is cold."
    rules = get_wire(client).rules
    if rules.results_by == "id":
        assert all(fits(i, client) for i, _ in calls), calls
        assert len({i for i, _ in calls}) == 2
    sent = check_upstream_request(emulator, upstream)
    history = [p.id for m in sent.messages for p in m.parts if isinstance(p, ToolCallPart)]
    results = [p.call_id for m in sent.messages for p in m.parts
               if isinstance(p, ToolResultPart)]
    assert len(history) == 2 and results == history
    pictures = [p for p in sent.messages[0].parts if isinstance(p, MediaPart)]
    assert [(p.media_type, p.data) for p in pictures] == [("image/png", IMAGE)]
    both_carry = rules.results_by == "id" and get_wire(upstream).rules.results_by == "id"
    if both_carry:  # the upstream gets its own ids back, however the client had to see them
        assert history == list(UPSTREAM_IDS[upstream])
    thoughts = [p.provider_data for m in sent.messages for p in m.parts
                if isinstance(p, ReasoningPart)]
    if upstream in REASONING and client in CARRIED:  # its own block, back as it sent it
        assert thoughts == [{upstream: REASONING[upstream]}]
    if upstream in ON_CALLS and client in CARRIED:  # and what it kept on its first call
        kept = [p.provider_data for m in sent.messages for p in m.parts
                if isinstance(p, ToolCallPart)]
        assert kept[0] is not None
        assert {k: v for k, v in kept[0][upstream].items() if k in ON_CALLS[upstream]} == (
            ON_CALLS[upstream])


@pytest.mark.parametrize("upstream", ["openai-chat", "anthropic-messages"])
def test_bedrock_invoke_model_paths_serve_the_anthropic_sdk(
        upstream: str, emulator: Emulator, proxies: dict[str, str]) -> None:
    """InvokeModel's paths take Anthropic bodies; the streamed reply comes wrapped in an AWS
    event stream, as Bedrock sends it, and the Anthropic SDK's Bedrock client reads both."""
    client = anthropic.AnthropicBedrock(base_url=proxies[upstream], aws_region="us-east-1",
                                        api_key="unused", max_retries=0)  # a bearer token
    ask = {"model": "anthropic.claude", "max_tokens": 100,
           "messages": [{"role": "user", "content": "Weather in Rome and Oslo?"}],
           "tools": [{"name": "get_weather", "input_schema": SCHEMA}]}
    whole = client.messages.create(**ask)  # type: ignore[arg-type]
    with client.messages.stream(**ask) as events:  # type: ignore[arg-type]
        streamed = events.get_final_message()
    for reply in (whole, streamed):
        _valid(reply)
        assert [b.input for b in reply.content if b.type == "tool_use"] == [
            {"city": c} for c in CITIES]
        assert all(fits(b.id, "anthropic-messages") for b in reply.content
                   if b.type == "tool_use")
    assert emulator.received[-1].wire == upstream
