"""Streams that grow one thing in many small deltas, on every wire.

What a chatty or hostile server sends: one text, reasoning text or argument string in n deltas
of `PIECE`, or n items one after another. Each `Case` makes the stream's chunks (one event per
chunk) and reads back from the reply what the deltas built, so a test can check both the value
and what decoding it cost. Shared by tests/test_stream_linear.py and
bench/hostile_streams.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolwire.codecs.bedrock_converse.stream import event as converse_event
from toolwire.transcript import ReasoningPart, Reply

PIECE = "abcdefgh"
"""What each delta adds."""


@dataclass(frozen=True)
class Case:
    wire: str
    name: str
    make: Callable[[int], list[bytes]]
    """The stream's chunks for n deltas (or n items)."""
    read: Callable[[Reply], Any]
    """What the deltas built, read from the reply."""
    expect: Callable[[int], Any]
    """What `read` gives for n."""
    copies: bool = True
    """Whether a decoder that joined piece by piece would hold a growing copy (a case that only
    scans what came before, without copying it, shows in time, not in memory)."""

    @property
    def id(self) -> str:
        return f"{self.wire} {self.name}"


def _text(reply: Reply) -> str:
    return reply.message.text


def _reasoning(reply: Reply) -> str:
    return "".join(p.text for p in reply.message.parts if isinstance(p, ReasoningPart))


def _argument(reply: Reply) -> Any:
    return reply.message.tool_calls[0].arguments["a"]


def _grown(n: int) -> str:
    return PIECE * n


def _sse(payload: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload)}\n\n".encode()


# --------------------------------------------------------------------------- openai-chat


def _chat(deltas: list[dict[str, Any]], finish: str = "stop") -> list[bytes]:
    def chunk(delta: dict[str, Any], reason: str | None = None) -> bytes:
        return _sse({"id": "chatcmpl-1", "model": "m", "created": 1,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]})

    return [chunk({"role": "assistant"}), *(chunk(d) for d in deltas), chunk({}, finish),
            b"data: [DONE]\n\n"]


def _chat_call(n: int) -> list[bytes]:
    first = {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                             "function": {"name": "f", "arguments": '{"a": "'}}]}
    more = {"tool_calls": [{"index": 0, "function": {"arguments": PIECE}}]}
    last = {"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}
    return _chat([first, *[more] * n, last], "tool_calls")


def _chat_calls(n: int) -> list[bytes]:
    deltas = []
    for i in range(n):
        deltas.append({"tool_calls": [{"index": i, "id": f"call_{i}", "type": "function",
                                       "function": {"name": "f", "arguments": '{"a": '}}]})
        deltas.append({"tool_calls": [{"index": i, "function": {"arguments": "1}"}}]})
    return _chat(deltas, "tool_calls")


def _chat_reused_index(n: int) -> list[bytes]:
    """Every fragment names the function and opens an object on index 0 (no ids): each asks
    whether the call so far is a whole object."""
    first = {"tool_calls": [{"index": 0, "type": "function",
                             "function": {"name": "f", "arguments": '{"a": "'}}]}
    more = {"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "{" + PIECE}}]}
    return _chat([first, *[more] * n], "tool_calls")


CHAT = [
    Case("openai-chat", "text", lambda n: _chat([{"content": PIECE}] * n), _text, _grown),
    Case("openai-chat", "arguments", _chat_call, _argument, _grown),
    Case("openai-chat", "reasoning_details",
         lambda n: _chat([{"reasoning_details": [{"type": "reasoning.text", "index": 0,
                                                  "text": PIECE}]}] * n), _reasoning, _grown),
    Case("openai-chat", "content items",
         lambda n: _chat([{"content": [{"type": "text", "text": PIECE}]}] * n), _text, _grown),
    Case("openai-chat", "thinking items",
         lambda n: _chat([{"content": [{"type": "thinking", "thinking": [
             {"type": "text", "text": PIECE}]}]}] * n), _reasoning, _grown),
    Case("openai-chat", "calls", _chat_calls, lambda r: len(r.message.tool_calls), lambda n: n,
         copies=False),
    Case("openai-chat", "reused index", _chat_reused_index,
         lambda r: len(r.message.tool_calls), lambda n: 1),
]


# --------------------------------------------------------------------------- anthropic


def _anthropic(start: dict[str, Any], deltas: list[dict[str, Any]],
               stop: str = "end_turn") -> list[bytes]:
    events = [{"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}},
              {"type": "content_block_start", "index": 0, "content_block": start},
              *({"type": "content_block_delta", "index": 0, "delta": d} for d in deltas),
              {"type": "content_block_stop", "index": 0},
              {"type": "message_delta", "delta": {"stop_reason": stop},
               "usage": {"output_tokens": 2}},
              {"type": "message_stop"}]
    return [_sse(e, e["type"]) for e in events]


def _anthropic_citations(n: int) -> list[bytes]:
    citation = {"type": "char_location", "cited_text": PIECE, "document_index": 0,
                "start_char_index": 0, "end_char_index": 8}
    return _anthropic({"type": "text", "text": "", "citations": []},
                      [{"type": "citations_delta", "citation": citation}] * n
                      + [{"type": "text_delta", "text": "x"}])


def _anthropic_blocks(n: int) -> list[bytes]:
    """n text blocks, each started and given a delta before any stops."""
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "usage": {"input_tokens": 1, "output_tokens": 1}}}]
    for i in range(n):
        events.append({"type": "content_block_start", "index": i,
                       "content_block": {"type": "text", "text": ""}})
        events.append({"type": "content_block_delta", "index": i,
                       "delta": {"type": "text_delta", "text": "x"}})
    events += [{"type": "content_block_stop", "index": i} for i in range(n)]
    events += [{"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
               {"type": "message_stop"}]
    return [_sse(e, e["type"]) for e in events]


ANTHROPIC = [
    Case("anthropic-messages", "text",
         lambda n: _anthropic({"type": "text", "text": ""},
                              [{"type": "text_delta", "text": PIECE}] * n), _text, _grown),
    Case("anthropic-messages", "thinking",
         lambda n: _anthropic({"type": "thinking", "thinking": ""},
                              [{"type": "thinking_delta", "thinking": PIECE}] * n),
         _reasoning, _grown),
    Case("anthropic-messages", "arguments",
         lambda n: _anthropic({"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
                              [{"type": "input_json_delta", "partial_json": '{"a": "'}]
                              + [{"type": "input_json_delta", "partial_json": PIECE}] * n
                              + [{"type": "input_json_delta", "partial_json": '"}'}],
                              "tool_use"), _argument, _grown),
    Case("anthropic-messages", "citations", _anthropic_citations, _text, lambda n: "x"),
    Case("anthropic-messages", "open blocks", _anthropic_blocks, _text, lambda n: "x" * n,
         copies=False),
]


# --------------------------------------------------------------------------- openai-responses


def _responses(events: list[dict[str, Any]]) -> list[bytes]:
    shell = {"id": "resp_1", "object": "response", "model": "m", "status": "in_progress",
             "output": []}
    done = {**shell, "status": "completed", "usage": {"input_tokens": 1, "output_tokens": 1,
                                                       "total_tokens": 2}}
    every = [{"type": "response.created", "response": shell}, *events,
             {"type": "response.completed", "response": done}]
    return [_sse(e, e["type"]) for e in every]


def _responses_text(n: int) -> list[bytes]:
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress",
            "content": []}
    return _responses([{"type": "response.output_item.added", "output_index": 0, "item": item},
                       *[{"type": "response.output_text.delta", "item_id": "msg_1",
                          "output_index": 0, "content_index": 0, "delta": PIECE}] * n])


def _responses_call(n: int) -> list[bytes]:
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "f",
            "arguments": "", "status": "in_progress"}
    where = {"item_id": "fc_1", "output_index": 0}
    return _responses([{"type": "response.output_item.added", "output_index": 0, "item": item},
                       {"type": "response.function_call_arguments.delta", **where,
                        "delta": '{"a": "'},
                       *[{"type": "response.function_call_arguments.delta", **where,
                          "delta": PIECE}] * n,
                       {"type": "response.function_call_arguments.delta", **where,
                        "delta": '"}'}])


def _responses_items(n: int) -> list[bytes]:
    """n message items named by no index: each goes after the last, its delta to the last."""
    events: list[dict[str, Any]] = []
    for _ in range(n):
        events.append({"type": "response.output_item.added",
                       "item": {"type": "message", "role": "assistant", "content": []}})
        events.append({"type": "response.output_text.delta", "delta": "x"})
    return _responses(events)


RESPONSES = [
    Case("openai-responses", "text", _responses_text, _text, _grown),
    Case("openai-responses", "arguments", _responses_call, _argument, _grown),
    Case("openai-responses", "unnumbered items", _responses_items, _text, lambda n: "x" * n,
         copies=False),
]


# --------------------------------------------------------------------------- gemini


def _gemini(parts: list[list[dict[str, Any]]]) -> list[bytes]:
    chunks = [{"candidates": [{"content": {"role": "model", "parts": p}, "index": 0}]}
              for p in parts]
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    chunks[-1]["usageMetadata"] = {"promptTokenCount": 1, "candidatesTokenCount": 1,
                                   "totalTokenCount": 2}
    return [_sse(c) for c in chunks]


def _gemini_partial(n: int) -> list[bytes]:
    def fragment(value: str, more: bool = True) -> list[dict[str, Any]]:
        return [{"functionCall": {"willContinue": True, "partialArgs": [
            {"jsonPath": "$.a", "stringValue": value, "willContinue": more}]}}]

    first = [{"functionCall": {"name": "f", "willContinue": True, "partialArgs": [
        {"jsonPath": "$.a", "stringValue": "", "willContinue": True}]}}]
    last = [{"functionCall": {"partialArgs": [{"jsonPath": "$.a", "stringValue": ""}]}}]
    return _gemini([first, *[fragment(PIECE)] * n, last])


GEMINI = [
    Case("gemini-generate", "text", lambda n: _gemini([[{"text": PIECE}]] * n), _text, _grown),
    Case("gemini-generate", "thought",
         lambda n: _gemini([[{"text": PIECE, "thought": True}]] * n + [[{"text": "."}]]),
         _reasoning, _grown),
    Case("gemini-generate", "partial arguments", _gemini_partial, _argument, _grown),
]


# --------------------------------------------------------------------------- bedrock


def _converse(start: dict[str, Any] | None, deltas: list[dict[str, Any]],
              stop: str = "end_turn") -> list[bytes]:
    frames = [converse_event("messageStart", {"role": "assistant"})]
    if start is not None:
        frames.append(converse_event("contentBlockStart",
                                     {"contentBlockIndex": 0, "start": start}))
    frames += [converse_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": d})
               for d in deltas]
    frames.append(converse_event("contentBlockStop", {"contentBlockIndex": 0}))
    frames.append(converse_event("messageStop", {"stopReason": stop}))
    frames.append(converse_event("metadata", {"usage": {
        "inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 1}}))
    return frames


BEDROCK = [
    Case("bedrock-converse", "text", lambda n: _converse(None, [{"text": PIECE}] * n), _text,
         _grown),
    Case("bedrock-converse", "reasoning",
         lambda n: _converse(None, [{"reasoningContent": {"text": PIECE}}] * n), _reasoning,
         _grown),
    Case("bedrock-converse", "arguments",
         lambda n: _converse({"toolUse": {"toolUseId": "t1", "name": "f"}},
                             [{"toolUse": {"input": '{"a": "'}}]
                             + [{"toolUse": {"input": PIECE}}] * n
                             + [{"toolUse": {"input": '"}'}}], "tool_use"), _argument, _grown),
]


# --------------------------------------------------------------------------- ollama


def _ollama(n: int, field: str) -> list[bytes]:
    line = {"model": "m", "created_at": "2025-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": "", field: PIECE}, "done": False}
    final = {"model": "m", "created_at": "2025-01-01T00:00:00Z",
             "message": {"role": "assistant", "content": ""}, "done": True,
             "done_reason": "stop", "prompt_eval_count": 1, "eval_count": 1}
    return [(json.dumps(x) + "\n").encode() for x in [*[line] * n, final]]


OLLAMA = [
    Case("ollama-chat", "text", lambda n: _ollama(n, "content"), _text, _grown),
    Case("ollama-chat", "thinking", lambda n: _ollama(n, "thinking"), _reasoning, _grown),
]

# --------------------------------------------------------------------------- interactions


def _interaction(step: dict[str, Any], deltas: list[dict[str, Any]]) -> list[bytes]:
    events = [{"event_type": "interaction.created",
               "interaction": {"id": "v1_i", "status": "in_progress"}},
              {"event_type": "step.start", "index": 0, "step": step},
              *({"event_type": "step.delta", "index": 0, "delta": d} for d in deltas),
              {"event_type": "step.stop", "index": 0},
              {"event_type": "interaction.completed",
               "interaction": {"id": "v1_i", "status": "completed"}}]
    return [_sse(e, e["event_type"]) for e in events]


INTERACTIONS = [
    Case("gemini-interactions", "text",
         lambda n: _interaction({"type": "model_output"}, [{"type": "text", "text": PIECE}] * n),
         _text, _grown),
    Case("gemini-interactions", "thought summary",
         lambda n: _interaction({"type": "thought"}, [{"type": "thought_summary", "content": {
             "type": "text", "text": PIECE}}] * n), _reasoning, _grown),
    Case("gemini-interactions", "arguments",
         lambda n: _interaction(
             {"type": "function_call", "id": "c1", "name": "f", "arguments": {}},
             [{"type": "arguments_delta", "arguments": '{"a": "'}]
             + [{"type": "arguments_delta", "arguments": PIECE}] * n
             + [{"type": "arguments_delta", "arguments": '"}'}]), _argument, _grown),
]

CASES = [*CHAT, *ANTHROPIC, *RESPONSES, *GEMINI, *BEDROCK, *OLLAMA, *INTERACTIONS]
