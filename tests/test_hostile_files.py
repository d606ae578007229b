"""Files and answers from outside read by the newer paths give a toolwire error, never a stray
exception: cassettes (version 2, media kept apart), counting endpoints' replies, MCP results with
media and structured content, elicitation forms, Gemini's cached-content answers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire.errors import ToolwireError
from toolwire.http.cassette import ReplayTransport
from toolwire.http.transport import WireRequest

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)
bounded = settings(max_examples=60, deadline=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture])

# a response record as a hostile or damaged cassette might hold it
responses = json_values | st.fixed_dictionaries(
    {"status": json_values}, optional={"headers": json_values, "body": json_values,
                                       "stream": json_values, "text": json_values,
                                       "media": json_values})


def replays_or_names_the_cassette(path: Path, interactions: list[Any]) -> None:
    """Play the first request of a cassette holding ``interactions`` and read its answer: it
    plays, or a toolwire error names the file."""
    path.write_text(json.dumps({"toolwire_cassette": 2, "interactions": interactions}))

    async def replay() -> None:
        answer = await ReplayTransport(path).send(WireRequest(
            url="http://127.0.0.1/v1/messages", body={"model": "m"}))
        await answer.read()

    try:
        asyncio.run(replay())
    except ToolwireError as exc:
        assert str(path) in str(exc)


@bounded
@given(responses, st.booleans())
def test_a_damaged_cassette_replays_or_says_what_is_wrong(tmp_path: Path, response: Any,
                                                         media: bool) -> None:
    request: dict[str, Any] = {"path": "/v1/messages", "body": {"model": "m"}}
    if media:
        request["media"] = True
    replays_or_names_the_cassette(tmp_path / "hostile.json",
                                  [{"request": request, "response": response}])


@bounded
@given(json_values)
def test_a_cassette_whose_interactions_are_anything_is_refused_by_name(tmp_path: Path,
                                                                      item: Any) -> None:
    replays_or_names_the_cassette(tmp_path / "hostile.json", [item])


@bounded
@given(json_values)
def test_a_counting_endpoints_reply_is_a_count_or_a_wire_error(reply: Any) -> None:
    from toolwire.codecs.registry import WIRES, get_wire
    from toolwire.errors import WireFormatError
    from toolwire.http.counting import read_count

    for wire in WIRES:
        counting = get_wire(wire).count
        if counting is None:
            continue
        for raw in (json.dumps(reply).encode(), json.dumps({counting.field: reply}).encode()):
            try:
                count = read_count(raw, counting, wire)
            except WireFormatError as exc:
                assert counting.field in str(exc)
            else:
                assert isinstance(count, int) and count >= 0


base64_text = st.binary(max_size=24).map(lambda b: __import__("base64").b64encode(b).decode())
media_blocks = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["image", "audio"]),
                           "data": base64_text | st.text(max_size=12),
                           "mimeType": st.text(max_size=16) | st.sampled_from(
                               ["image/png", "audio/wav", "application/pdf", "image/svg+xml"])}),
    st.fixed_dictionaries({"type": st.just("resource"), "resource": st.fixed_dictionaries(
        {"uri": st.just("file:///x"), "blob": base64_text | st.text(max_size=12)},
        optional={"mimeType": st.text(max_size=16)})}),
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=12)}))


@bounded
@given(st.lists(media_blocks, max_size=4), json_values,
       st.none() | st.just({"type": "object", "properties": {"result": {}}}) | st.just({}))
def test_mcp_results_with_any_media_and_structured_content_become_tool_values(
        blocks: list[Any], structured: Any, schema: Any) -> None:
    from mcp_types import CallToolResult

    from toolwire.mcp._results import result_value
    from toolwire.media import media_content

    fields: dict[str, Any] = {"content": blocks}
    if isinstance(structured, dict):
        fields["structuredContent"] = structured
    value = result_value(CallToolResult.model_validate(fields), schema)
    if isinstance(value, list):
        parts = media_content(value, str)  # a tool result of text and media parts
        assert parts is not None and len(parts) == len(value)


form_props = st.dictionaries(st.text(max_size=6), json_values | st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "integer", "number", "boolean", "array", "x"])},
    optional={"enum": json_values, "oneOf": json_values, "items": json_values,
              "title": json_values, "description": json_values, "default": json_values,
              "minimum": json_values, "pattern": json_values, "format": json_values}),
    max_size=3)


@bounded
@given(form_props, json_values, st.lists(st.text(max_size=8), min_size=1, max_size=4))
def test_an_elicitation_form_of_any_shape_is_accepted_declined_or_cancelled(
        props: Any, required: Any, answers: list[str]) -> None:
    from mcp_types import ElicitRequestFormParams

    from toolwire.mcp.elicit import Asker

    said: list[tuple[str, str, str]] = []
    left = iter(answers * 20)
    asker = Asker(lambda question, choices: next(left), "odd", lambda *told: said.append(told))
    schema = {"type": "object", "properties": props, "required": required}
    result = asyncio.run(asker(None, ElicitRequestFormParams(message="?",
                                                            requested_schema=schema)))
    assert result.action in ("accept", "decline", "cancel")
    assert [action for _, action, _ in said] == [result.action]


@bounded
@given(json_values, st.sampled_from([200, 400, 500]))
def test_a_cached_content_answer_of_any_shape_leaves_a_request_to_send(answer: Any,
                                                                      status: int) -> None:
    from toolwire.http.cached_contents import explicit_caches
    from toolwire.http.transport import WireResponse
    from toolwire.transcript import Cache

    caches = explicit_caches("gemini-generate", "gemini-2.5-flash")
    assert caches is not None
    contents = [{"role": "user", "parts": [{"text": "word " * 1500}]},
                {"role": "user", "parts": [{"text": "go on"}]}]
    sent = WireRequest(url="http://127.0.0.1/v1beta/models/gemini-2.5-flash:generateContent",
                       body={"contents": contents})

    async def send(request: WireRequest) -> WireResponse:
        if status != 200:
            from toolwire.errors import ProviderError
            raise ProviderError(f"refused with {status}")
        return WireResponse(status, content=json.dumps(answer).encode())

    out = asyncio.run(caches.use(sent, Cache(explicit=True), send))
    named = out.body.get("cachedContent")
    assert named is None or (isinstance(named, str) and out.body["contents"] == contents[1:])


saved_media = st.fixed_dictionaries({"type": st.just("media")}, optional={
    "file": json_values | st.sampled_from(["0" * 64 + ".png", "../" + "0" * 64 + ".png"]),
    "data": json_values | base64_text, "media_type": json_values, "size": json_values,
    "kind": json_values, "name": json_values})


@bounded
@given(st.lists(saved_media, min_size=1, max_size=3), st.sampled_from(["message", "result"]))
def test_a_run_log_naming_media_of_any_shape_reads_or_names_its_line(
        tmp_path: Path, media: list[Any], holder: str) -> None:
    from toolwire.agent.runlog import read_log
    from toolwire.errors import TranscriptError

    log = tmp_path / "run.jsonl"
    (tmp_path / "run.jsonl.media").mkdir(exist_ok=True)
    (tmp_path / "run.jsonl.media" / ("0" * 64 + ".png")).write_bytes(b"not the hash")
    if holder == "message":
        line = {"event": "message", "index": 0,
                "message": {"type": "message", "role": "user", "parts": media}}
    else:
        line = {"event": "call_end", "id": "c1", "name": "t",
                "result": {"type": "tool_result", "call_id": "c1", "content": media}}
    log.write_text(json.dumps({"event": "header", "format": 8, "model": "m"}) + "\n"
                   + json.dumps(line) + "\n")
    try:
        read_log(log)
    except TranscriptError as exc:
        assert f"{log}:" in str(exc)


def test_a_form_default_no_answer_can_hold_is_left_out_and_infinity_is_asked_again() -> None:
    from mcp_types import ElicitRequestFormParams

    from toolwire.mcp.elicit import Asker

    given = iter(["", "inf", "2.5"])
    asker = Asker(lambda question, choices: next(given), "odd", lambda *told: None)
    schema = {"type": "object", "properties": {"a": {"type": "string", "default": [None]},
                                                "x": {"type": "number"}}, "required": ["x"]}
    result = asyncio.run(asker(None, ElicitRequestFormParams(message="?",
                                                            requested_schema=schema)))
    assert (result.action, result.content) == ("accept", {"x": 2.5})
