"""ScriptedModel: answers from its script, records requests, and fails loudly on a mismatch."""

from __future__ import annotations

import pytest

from toolwire.agent.loop import Agent, RunStop
from toolwire.errors import RateLimitError, WireFormatError
from toolwire.events import StreamEnd, TextDelta, ToolCallDelta, ToolCallStarted
from toolwire.protocol import Model, StreamingModel, model_name
from toolwire.testing import ScriptedModel, ScriptError, call, reply
from toolwire.transcript import Message, Reply, Request, ToolCallPart


def request(text: str = "hi") -> Request:
    return Request(model="m", messages=(Message.user(text),))


async def test_answers_in_order_and_records_requests() -> None:
    async def later(req: Request) -> Reply:
        return reply(f"saw {req.messages[-1].text}")

    model = ScriptedModel(["one", reply(call("t", {"a": 1}), call("t", id="mine")), later])
    assert isinstance(model, Model) and isinstance(model, StreamingModel)
    assert model_name(model) == "scripted" and model_name(object()).startswith("<object")
    assert (await model.complete(request("a"))).text == "one"
    second = await model.complete(request("b"))
    assert [c.id for c in second.tool_calls] == ["call_2_0", "mine"]
    assert second.tool_calls[0] == ToolCallPart(id="call_2_0", name="t", arguments={"a": 1})
    assert second.stop == "tool_calls"
    assert (await model.complete(request("c"))).text == "saw c"
    assert [r.messages[-1].text for r in model.requests] == ["a", "b", "c"]
    assert model.remaining == 0
    model.assert_done()


async def test_request_past_the_end_names_it() -> None:
    model = ScriptedModel(["only"], name="demo")
    await model.complete(request())
    with pytest.raises(ScriptError) as error:
        await model.complete(request("what now?"))
    assert str(error.value) == (
        "ScriptedModel 'demo' got request #2 but its script has only 1 entries; the request "
        "ended with user: 'what now?'"
    )


def test_unused_entries_fail_the_block() -> None:
    with pytest.raises(ScriptError) as error, ScriptedModel(["a", reply(call("x")), "c"]) as m:
        Agent(model=m).run("go")
    assert str(error.value) == (
        "ScriptedModel 'scripted': 2 of 3 scripted entries were never requested (1 requests "
        "came): #2: reply calling x; #3: text reply 'c'"
    )
    with pytest.raises(ZeroDivisionError), ScriptedModel(["unused"]):
        raise ZeroDivisionError  # an error inside the block is not hidden by assert_done


async def test_bad_entry_and_raised_entries() -> None:
    model = ScriptedModel([lambda req: "not a reply"])  # type: ignore[list-item,return-value]
    with pytest.raises(ScriptError, match="returned str, not a Reply"):
        await model.complete(request())
    limited = RateLimitError("slow down", status=429)
    result = await Agent(model=ScriptedModel([limited])).arun("go")
    assert result.stop is RunStop.PROVIDER_ERROR and result.error is limited
    broken = WireFormatError("not an anthropic reply")
    result = await Agent(model=ScriptedModel([broken])).arun("go")
    assert result.stop is RunStop.BAD_REPLY and result.error is broken


async def test_stream_events() -> None:
    model = ScriptedModel([reply("hey", call("t", {"a": 1}))])
    events = [e async for e in model.stream(request())]
    assert [type(e) for e in events][:3] == [TextDelta, ToolCallStarted, ToolCallDelta]
    assert isinstance(events[-1], StreamEnd) and events[-1].reply.text == "hey"
    assert isinstance(events[2], ToolCallDelta) and events[2].fragment == '{"a":1}'


async def test_stream_without_end_is_a_bad_reply() -> None:
    class Broken:
        name = "broken"

        async def complete(self, req: Request) -> Reply:
            raise AssertionError("not used when streaming")

        async def stream(self, req: Request):  # type: ignore[no-untyped-def]
            yield TextDelta(text="half")

    result = await Agent(model=Broken(), stream=True).arun("go")
    assert result.stop is RunStop.BAD_REPLY and isinstance(result.error, WireFormatError)
    assert "ended without a whole reply" in str(result.error)


async def test_request_fields_from_agent() -> None:
    with ScriptedModel(["ok"]) as model:
        await Agent(model=model, max_tokens=99, temperature=0.5,
                    provider_options={"openai-chat": {"seed": 1}}).arun("go")
    sent = model.requests[0]
    assert (sent.max_tokens, sent.temperature) == (99, 0.5)
    assert sent.provider_options == {"openai-chat": {"seed": 1}}
    assert sent.tools == () and sent.tool_choice is None
