"""Reply shapes real servers send that the common case does not: one test per shape.

Each body or stream below is written in the exact shape a server was seen to send (the
fields that matter kept, ids and text shortened). For streams, the reply assembled from the
events must agree with the events themselves and with the same reply sent whole.
"""

from __future__ import annotations

import json
from typing import Any

from toolwire import Message, Request
from toolwire.codecs import get_codec
from toolwire.events import ToolCallFinished, ToolCallStarted


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(
        f"event: {e.get('type', 'message')}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def sse_data(*events: dict[str, Any] | str) -> bytes:
    return b"".join(
        f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n".encode() for e in events)


def run_stream(wire: str, data: bytes) -> tuple[list[Any], Any]:
    decoder = get_codec(wire).stream_decoder()
    events: list[Any] = []
    for i in range(0, len(data), 7):  # split anywhere
        events += decoder.feed(data[i:i + 7])
    return events, decoder.finish()


# --- Anthropic: blocks that arrive whole inside message_start


def test_a_call_made_by_server_side_code_arrives_whole_in_message_start_and_is_kept() -> None:
    head = [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution",
         "input": {"code": "r = await get_weather(city='Paris')"}},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
         "input": {"city": "Paris"},
         "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}},
    ]
    data = sse(
        {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": head, "stop_reason": None, "stop_sequence": None,
            "container": {"id": "container_1", "expires_at": "2026-12-01T00:00:00Z"},
            "usage": {"input_tokens": 20, "output_tokens": 1}}},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 30}},
        {"type": "message_stop"},
    )
    events, reply = run_stream("anthropic-messages", data)
    calls = reply.message.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("toolu_1", "get_weather", {"city": "Paris"})]
    assert (reply.stop, reply.raw_stop) == ("tool_calls", "tool_use")
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.index, e.id, e.name) for e in started] == [(0, "toolu_1", "get_weather")]
    assert [e.call for e in finished] == list(calls)
    # the same message sent whole reads the same, and goes back with its blocks in order
    whole = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
             "content": head, "stop_reason": "tool_use", "stop_sequence": None,
             "container": {"id": "container_1", "expires_at": "2026-12-01T00:00:00Z"},
             "usage": {"input_tokens": 20, "output_tokens": 30}}
    codec = get_codec("anthropic-messages")
    assert codec.decode_response(whole).message == reply.message
    request = codec.encode_request(
        Request(model="claude-x", messages=(Message.user("weather?"), reply.message)))
    sent = request["messages"][-1]["content"]
    assert [b["type"] for b in sent] == ["server_tool_use", "tool_use"]
    assert sent[1]["caller"] == head[1]["caller"]


def test_message_start_blocks_come_before_the_blocks_the_stream_builds() -> None:
    data = sse(
        {"type": "message_start", "message": {
            "id": "msg_2", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [{"type": "tool_use", "id": "toolu_a", "name": "lookup",
                         "input": {"q": "a"}}],
            "stop_reason": None, "usage": {"input_tokens": 5, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "toolu_b", "name": "lookup", "input": {}}},
        {"type": "content_block_delta", "index": 1,
         "delta": {"type": "input_json_delta", "partial_json": "{\"q\": \"b\"}"}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    )
    events, reply = run_stream("anthropic-messages", data)
    assert [(c.id, c.arguments) for c in reply.message.tool_calls] == [
        ("toolu_a", {"q": "a"}), ("toolu_b", {"q": "b"})]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [(e.index, e.call.id) for e in finished] == [(0, "toolu_a"), (1, "toolu_b")]


# --- Chat Completions: usage


def test_moonshot_top_level_cached_tokens_are_cache_reads() -> None:
    body = {"id": "chatcmpl-1", "object": "chat.completion", "model": "kimi-k2",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "hi"}}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 2, "total_tokens": 32,
                      "cached_tokens": 10}}
    usage = get_codec("openai-chat").decode_response(body).usage
    assert (usage.input_tokens, usage.cache_read_tokens) == (30, 10)


# --- Chat Completions: reasoning as content items (Mistral), refusals streamed

THINKING = {"type": "thinking", "thinking": [{"type": "text", "text": "The user greets me."}]}


def mistral_body(content: Any) -> dict[str, Any]:
    return {"id": "cmpl-1", "object": "chat.completion", "model": "magistral-medium-2509",
            "created": 1, "choices": [{"index": 0, "finish_reason": "stop",
                                       "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14}}


def test_a_thinking_content_item_is_reasoning_and_goes_back_exactly_as_it_came() -> None:
    codec = get_codec("openai-chat")
    content = [THINKING, {"type": "text", "text": "Hello!"}]
    reply = codec.decode_response(mistral_body(content))
    kinds = [type(p).__name__ for p in reply.message.parts]
    assert kinds == ["ReasoningPart", "TextPart"]
    assert reply.message.parts[0].text == "The user greets me."
    assert reply.text == "Hello!"
    # two parts in, two parts out: as a reply body and in the next request
    assert codec.encode_response(reply)["choices"][0]["message"]["content"] == content
    body = codec.encode_request(Request(model="magistral-medium-2509", messages=(
        Message.user("hi"), reply.message, Message.user("and?"))))
    assert body["messages"][1]["content"] == content
    assert codec.decode_response(codec.encode_response(reply)).message == reply.message


def test_list_content_in_stream_deltas_keeps_text_and_reasoning() -> None:
    head = {"id": "cmpl-2", "object": "chat.completion.chunk", "model": "magistral-small",
            "created": 1}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    data = sse_data(
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "The "}]}]}),
        chunk({"content": [{"type": "thinking",
                            "thinking": [{"type": "text", "text": "user greets me."}]}]}),
        chunk({"content": [{"type": "text", "text": "Hel"}]}),
        chunk({"content": "lo!"}),
        chunk({}, "stop"),
        "[DONE]",
    )
    events, reply = run_stream("openai-chat", data)
    reasoning = "".join(e.text for e in events if type(e).__name__ == "ReasoningDelta")
    text = "".join(e.text for e in events if type(e).__name__ == "TextDelta")
    assert (reasoning, text) == ("The user greets me.", "Hello!")
    whole = get_codec("openai-chat").decode_response(
        mistral_body([THINKING, {"type": "text", "text": "Hello!"}]))
    assert reply.message == whole.message


def test_a_rendered_stream_with_a_thinking_item_decodes_to_its_reply() -> None:
    codec = get_codec("openai-chat")
    reply = codec.decode_response(mistral_body([THINKING, {"type": "text", "text": "Hello!"}]))
    _, again = run_stream("openai-chat", b"".join(codec.encode_stream(reply)))
    assert again.message == reply.message


def test_refusal_deltas_stream_as_text_and_agree_with_the_reply() -> None:
    head = {"id": "cmpl-3", "object": "chat.completion.chunk", "model": "gpt-x", "created": 1}
    data = sse_data(
        {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "refusal": ""},
                              "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {"refusal": "I can't help "},
                              "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {"refusal": "with that."},
                              "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        "[DONE]",
    )
    events, reply = run_stream("openai-chat", data)
    streamed = "".join(e.text for e in events if type(e).__name__ == "TextDelta")
    assert streamed == reply.text == "I can't help with that."
    assert reply.stop == "refusal"


# --- Gemini on Vertex AI: function-call arguments streamed in fragments


def vertex_chunk(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}}
    if finish:
        cand["finishReason"] = finish
    return {"candidates": [cand], "modelVersion": "gemini-3-pro", "responseId": "r1",
            "usageMetadata": {"promptTokenCount": 10, "totalTokenCount": 10}}


def test_streamed_function_call_arguments_assemble_into_one_call() -> None:
    data = sse_data(
        vertex_chunk([{"functionCall": {"name": "plan_trip", "willContinue": True,
                                        "partialArgs": [{"jsonPath": "$.city",
                                                         "stringValue": "New ",
                                                         "willContinue": True}]}}]),
        vertex_chunk([{"functionCall": {"willContinue": True, "partialArgs": [
            {"jsonPath": "$.city", "stringValue": "York"},
            {"jsonPath": "$.days", "numberValue": 3},
            {"jsonPath": "$.stops[0].name", "stringValue": "MoMA"},
            {"jsonPath": "$.stops[1].name", "stringValue": "Met"},
            {"jsonPath": "$.options['by train']", "boolValue": True},
            {"jsonPath": "$.note", "nullValue": None}]}}]),
        vertex_chunk([{"functionCall": {}, "thoughtSignature": "c2ln"}], finish="STOP"),
    )
    events, reply = run_stream("gemini-generate", data)
    (call,) = reply.message.tool_calls
    assert call.name == "plan_trip"
    assert call.arguments == {"city": "New York", "days": 3,
                              "stops": [{"name": "MoMA"}, {"name": "Met"}],
                              "options": {"by train": True}, "note": None}
    assert [type(e).__name__ for e in events if "ToolCall" in type(e).__name__] == [
        "ToolCallStarted", "ToolCallDelta", "ToolCallFinished"]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert finished[0].call == call
    assert reply.stop == "tool_calls"
    # the same call sent whole reads the same
    whole = vertex_chunk([{"functionCall": {"name": "plan_trip", "args": call.arguments},
                           "thoughtSignature": "c2ln"}], finish="STOP")
    assert get_codec("gemini-generate").decode_response(whole).message == reply.message


def test_a_stream_that_ends_while_a_call_continues_has_a_truncated_call() -> None:
    data = sse_data(
        vertex_chunk([{"functionCall": {"name": "plan_trip", "willContinue": True,
                                        "partialArgs": [{"jsonPath": "$.city",
                                                         "stringValue": "Par",
                                                         "willContinue": True}]}}]),
        vertex_chunk([], finish="MAX_TOKENS"),
    )
    _, reply = run_stream("gemini-generate", data)
    (call,) = reply.message.tool_calls
    assert call.arguments is None and call.parse_error is not None
    assert (reply.stop, reply.truncated_call) == ("max_tokens", True)


def test_a_partial_argument_path_with_a_huge_index_is_a_stream_error() -> None:
    import pytest

    from toolwire.errors import StreamError

    data = sse_data(vertex_chunk([{"functionCall": {"name": "f", "willContinue": True,
                                                    "partialArgs": [{"jsonPath": "$.a[99999999]",
                                                                     "numberValue": 1}]}}]))
    with pytest.raises(StreamError, match="over the limit"):
        run_stream("gemini-generate", data)


# --- rendering: a rendered stream decodes to exactly the reply it was rendered from


def test_gemini_consecutive_text_parts_keep_their_boundaries_in_a_stream() -> None:
    codec = get_codec("gemini-generate")
    body = {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "First part, "}, {"text": "second part."}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 4,
                          "totalTokenCount": 7}, "modelVersion": "gemini-x", "responseId": "r2"}
    reply = codec.decode_response(body)
    assert len(reply.message.parts) == 2
    _, again = run_stream("gemini-generate", b"".join(codec.encode_stream(reply)))
    assert again.message == reply.message


def test_two_reasoning_details_sharing_index_0_stay_apart_in_a_chat_stream() -> None:
    codec = get_codec("openai-chat")
    details = [{"type": "reasoning.summary", "summary": "Thought about it.", "index": 0,
                "format": "openai-responses-v1"},
               {"type": "reasoning.encrypted", "data": "gAAAAB", "id": "rs_1", "index": 0,
                "format": "openai-responses-v1"}]
    body = {"id": "gen-1", "object": "chat.completion", "model": "openai/gpt-x", "created": 1,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": "ok", "reasoning": "Thought about it.",
                "reasoning_details": details}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}}
    reply = codec.decode_response(body)
    _, again = run_stream("openai-chat", b"".join(codec.encode_stream(reply)))
    assert again.message == reply.message
    assert codec.encode_response(again)["choices"][0]["message"]["reasoning_details"] == details


# --- Responses: the completed response is the reply


def test_a_responses_stream_gives_the_completed_response_when_servers_rotate_ids() -> None:
    """OpenRouter streams reasoning under a temporary id and re-issues the encrypted blob in the
    completed object; the stream's reply is the completed object's, as sent whole."""
    def event(kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, **fields}

    streamed = {"type": "reasoning", "id": "rs_tmp_abc", "summary": [],
                "encrypted_content": "ENC-stream"}
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup",
            "arguments": "{\"q\":\"x\"}", "status": "completed"}
    final = {"type": "reasoning", "id": "rs_real_1", "summary": [],
             "encrypted_content": "ENC-final"}
    completed = {"id": "resp_1", "object": "response", "model": "openai/gpt-x",
                 "status": "completed", "output": [final, call],
                 "usage": {"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}}
    data = sse(
        event("response.created", response={**completed, "status": "in_progress",
                                            "output": []}),
        event("response.output_item.added", output_index=0, item=streamed),
        event("response.output_item.done", output_index=0, item=streamed),
        event("response.output_item.added", output_index=1, item={**call, "arguments": ""}),
        event("response.function_call_arguments.delta", output_index=1, item_id="fc_1",
              delta="{\"q\":\"x\"}"),
        event("response.output_item.done", output_index=1, item=call),
        event("response.completed", response=completed),
    )
    events, reply = run_stream("openai-responses", data)
    assert reply == get_codec("openai-responses").decode_response(completed)
    assert reply.message.parts[0].provider_data == {"openai-responses": final}
    assert [e.call for e in events if isinstance(e, ToolCallFinished)] == list(reply.tool_calls)


# --- every wire: a reply rendered whole and as a stream reads the same, boundaries included

import pytest  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from strategies import object_call, texts  # noqa: E402
from toolwire import Reply  # noqa: E402
from toolwire.events import StreamEnd  # noqa: E402
from toolwire.transcript import TextPart  # noqa: E402
from wire_data import looped  # noqa: E402


@st.composite
def replies_with_runs_of_text(draw: st.DrawFn) -> Reply:
    """Replies whose text comes in one to three parts side by side, then any calls."""
    parts: list[Any] = [TextPart(text=t) for t in draw(st.lists(texts, min_size=1, max_size=3))]
    calls = [object_call(draw, f"call_{i}") for i in range(draw(st.integers(0, 2)))]
    return Reply(message=Message(role="assistant", parts=(*parts, *calls)),
                 stop="tool_calls" if calls else "end_turn", model="m", id="r-1")


@pytest.mark.parametrize("wire", looped())
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(reply=replies_with_runs_of_text(),
       cuts=st.lists(st.integers(min_value=0, max_value=1 << 16), max_size=8))
def test_a_reply_rendered_whole_and_streamed_reads_the_same(
        reply: Reply, wire: str, cuts: list[int]) -> None:
    codec = get_codec(wire)
    whole = codec.decode_response(codec.encode_response(reply))  # as this wire reads it
    raw = b"".join(codec.encode_stream(whole))
    at = sorted({c % (len(raw) + 1) for c in cuts})
    pieces = [raw[a:b] for a, b in zip([0, *at], [*at, len(raw)], strict=True)]
    events = list(codec.decode_stream(pieces))
    assert isinstance(events[-1], StreamEnd)
    assert events[-1].reply.message == whole.message
    assert events[-1].reply.tool_calls == whole.tool_calls


def test_a_chat_stream_finishes_a_call_when_the_next_one_starts() -> None:
    """So a tool that may start early starts before the reply ends."""
    head = {"id": "cmpl-4", "object": "chat.completion.chunk", "model": "gpt-x", "created": 1}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse_data({**head, "choices": [{"index": 0, "delta": delta,
                                              "finish_reason": finish}]})

    def call(i: int, name: str | None, args: str) -> dict[str, Any]:
        fn: dict[str, Any] = {"arguments": args}
        if name:
            fn["name"] = name
        entry: dict[str, Any] = {"index": i, "function": fn}
        if name:
            entry.update(id=f"call_{i}", type="function")
        return {"tool_calls": [entry]}

    decoder = get_codec("openai-chat").stream_decoder()
    seen: list[list[str]] = []
    for piece in (chunk(call(0, "read", "")), chunk(call(0, None, "{\"p\": ")),
                  chunk(call(0, None, "\"a\"}")), chunk(call(1, "read", "{\"p\": \"b\"}")),
                  chunk({}, "tool_calls"), b"data: [DONE]\n\n"):
        seen.append([f"{type(e).__name__}:{getattr(e, 'index', '')}"
                     for e in decoder.feed(piece)])
    reply = decoder.finish()
    assert "ToolCallFinished:0" in seen[3]  # when call 1 started
    assert seen[4] == ["ToolCallFinished:1"]  # call 0 is not finished twice
    assert [c.arguments for c in reply.tool_calls] == [{"p": "a"}, {"p": "b"}]


# --- error bodies that came with a success status


def test_error_bodies_sent_as_replies_raise_their_typed_errors() -> None:
    import pytest

    from toolwire.errors import ProviderError

    responses = {"error": {"message": "The server had an error.", "type": "server_error",
                           "code": "server_error"}}
    bedrock_shaped = {"message": "The security token included in the request is invalid."}
    for wire, body in (("openai-responses", responses), ("anthropic-messages", bedrock_shaped)):
        codec = get_codec(wire)
        with pytest.raises(ProviderError) as raised:
            codec.decode_response(body)
        assert type(raised.value) is type(codec.decode_error(raised.value.status or 0, body))


def test_a_string_streamed_in_many_fragments_is_joined_once() -> None:
    pieces = [{"functionCall": {"name": "write", "willContinue": True, "partialArgs": [
        {"jsonPath": "$.text", "stringValue": "", "willContinue": True}]}}]
    pieces += [{"functionCall": {"willContinue": True, "partialArgs": [
        {"jsonPath": "$.text", "stringValue": "ab", "willContinue": True}]}}] * 20_000
    pieces += [{"functionCall": {"partialArgs": [{"jsonPath": "$.text", "stringValue": "!"}]}}]
    data = b"".join(sse_data(vertex_chunk([p])) for p in pieces[:-1])
    data += sse_data(vertex_chunk([pieces[-1]], finish="STOP"))
    _, reply = run_stream("gemini-generate", data)
    assert reply.message.tool_calls[0].arguments == {"text": "ab" * 20_000 + "!"}


# --- Bedrock Converse: cited text and the provider's own tools


def converse_body(content: list[Any], stop: str = "end_turn") -> dict[str, Any]:
    return {"output": {"message": {"role": "assistant", "content": content}},
            "stopReason": stop, "usage": {"inputTokens": 9, "outputTokens": 4,
                                          "totalTokens": 13}, "metrics": {"latencyMs": 1}}


CITED = {"citationsContent": {
    "content": [{"text": "The grass is green."}],
    "citations": [{"title": "doc", "sourceContent": [{"text": "grass is green"}],
                   "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 14}}}]}}


def test_cited_text_is_part_of_the_reply_text_and_goes_back_as_it_came() -> None:
    codec = get_codec("bedrock-converse")
    reply = codec.decode_response(converse_body([{"text": "Sure. "}, CITED]))
    assert reply.text == "Sure. The grass is green."
    assert codec.encode_response(reply)["output"]["message"]["content"] == [
        {"text": "Sure. "}, CITED]
    body = codec.encode_request(Request(model="m", messages=(
        Message.user("colour?"), reply.message, Message.user("and?"))))
    assert body["messages"][1]["content"] == [{"text": "Sure. "}, CITED]


SERVER_CALL = {"toolUse": {"toolUseId": "tooluse_1", "name": "nova_code_interpreter",
                           "type": "server_tool_use", "input": {"code": "print(7 * 6)"}}}
SERVER_RESULT = {"toolResult": {"toolUseId": "tooluse_1", "type": "nova_code_interpreter_result",
                                "status": "success", "content": [{"json": {"stdOut": "42"}}]}}


def test_a_call_the_provider_ran_itself_is_no_call_for_the_client() -> None:
    codec = get_codec("bedrock-converse")
    body = converse_body([SERVER_CALL, SERVER_RESULT, {"text": "It is 42."}])
    reply = codec.decode_response(body)
    assert reply.tool_calls == () and reply.stop == "end_turn"
    assert reply.text == "It is 42."
    assert codec.encode_response(reply)["output"]["message"]["content"] == body[
        "output"]["message"]["content"]
    # streamed: the call's input and the result arrive in pieces
    from toolwire.codecs.bedrock_converse.stream import event
    frames = [event("messageStart", {"role": "assistant"}),
              event("contentBlockStart", {"contentBlockIndex": 0, "start": {"toolUse": {
                  "toolUseId": "tooluse_1", "name": "nova_code_interpreter",
                  "type": "server_tool_use"}}}),
              event("contentBlockDelta", {"contentBlockIndex": 0,
                                          "delta": {"toolUse": {"input": '{"code": "print'}}}),
              event("contentBlockDelta", {"contentBlockIndex": 0,
                                          "delta": {"toolUse": {"input": '(7 * 6)"}'}}}),
              event("contentBlockStop", {"contentBlockIndex": 0}),
              event("contentBlockStart", {"contentBlockIndex": 1, "start": {"toolResult": {
                  "toolUseId": "tooluse_1", "type": "nova_code_interpreter_result",
                  "status": "success"}}}),
              event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {
                  "toolResult": [{"json": {"stdOut": "42"}}]}}),
              event("contentBlockStop", {"contentBlockIndex": 1}),
              event("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"text": "It is 42."}}),
              event("contentBlockStop", {"contentBlockIndex": 2}),
              event("messageStop", {"stopReason": "end_turn"}),
              event("metadata", {"usage": body["usage"], "metrics": {"latencyMs": 1}})]
    events, streamed = run_stream("bedrock-converse", b"".join(frames))
    assert not [e for e in events if isinstance(e, ToolCallStarted | ToolCallFinished)]
    assert streamed.message == reply.message
    _, again = run_stream("bedrock-converse", b"".join(codec.encode_stream(reply)))
    assert again.message == reply.message


def test_a_gemini_call_without_args_keeps_its_made_up_id_through_a_round_trip() -> None:
    codec = get_codec("gemini-generate")
    chunk = {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "get_time"}, "thoughtSignature": "c2ln"}]},
        "finishReason": "STOP", "index": 0}], "responseId": "r1",
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3}}
    _, reply = run_stream("gemini-generate", sse_data(chunk))
    _, again = run_stream("gemini-generate", b"".join(codec.encode_stream(reply)))
    assert again.message == reply.message
    assert codec.decode_response(codec.encode_response(reply)).message == reply.message


def test_a_chat_stream_keeps_a_trailing_empty_text_part_when_rendered() -> None:
    head = {"id": "a4", "object": "chat.completion.chunk", "created": 1,
            "model": "magistral-medium-2507"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    data = sse_data(
        chunk({"role": "assistant", "content": [THINKING]}),
        chunk({"content": [{"type": "text", "text": "2 + 2 = 4"}]}),
        {**chunk({"content": ""}, "stop"),
         "usage": {"prompt_tokens": 10, "total_tokens": 56, "completion_tokens": 46}})
    _, reply = run_stream("openai-chat", data)
    assert reply.text == "2 + 2 = 4"
    _, again = run_stream("openai-chat", b"".join(get_codec("openai-chat").encode_stream(reply)))
    assert again.message == reply.message
