"""The cheap tests a turn makes first give what the whole checks give: a request's tools
checked once per tuple, a reply of one call taken as usable at once, no deferred tool meaning
no call waits. Each is held to the general rule, written out here, over values hypothesis
makes.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolwire import Tool
from toolwire.agent.calls import unusable
from toolwire.agent.dispatch import Dispatcher
from toolwire.errors import TranscriptError
from toolwire.transcript import (
    Message,
    ReasoningPart,
    Reply,
    Request,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
)


def _noop(x: int) -> int:
    return x


SPECS = [ToolSpec(name=f"t{i}") for i in range(3)]
TOOL = Tool.from_function(_noop, name="noop")
# a pool of tool sequences: tuples of specs (some shared, so the same object comes again),
# a list, a tuple holding a Tool, one holding something that is no tool, and none
SHARED = tuple(SPECS)
POOL: list[Any] = [SHARED, SHARED, (SPECS[0],), [SPECS[1], SPECS[2]], (SPECS[0], TOOL),
                   (SPECS[2], 42), (), SHARED[:2]]


def _expected_tools(tools: Any) -> tuple[ToolSpec, ...] | None:
    """The general rule: every item a ToolSpec, or a Tool's spec; None: refused."""
    found = []
    for item in tools:
        if isinstance(item, ToolSpec):
            found.append(item)
        elif isinstance(getattr(item, "spec", None), ToolSpec):
            found.append(item.spec)
        else:
            return None
    return tuple(found)


@settings(deadline=None)  # a busy machine is slow; nothing here is timed
@given(st.lists(st.sampled_from(range(len(POOL))), min_size=1, max_size=20))
def test_request_tools_are_what_the_whole_check_makes_of_them(order: list[int]) -> None:
    for i in order:
        given_tools = POOL[i]
        expected = _expected_tools(given_tools)
        if expected is None:
            with pytest.raises(TranscriptError, match="not a ToolSpec or a Tool"):
                Request(model="m", tools=given_tools)
            continue
        request = Request(model="m", tools=given_tools)
        assert type(request.tools) is tuple and request.tools == expected
        assert all(type(t) is ToolSpec for t in request.tools)


_IDS = st.sampled_from(["a", "b", "c"])
_PART = st.one_of(
    st.builds(lambda i: ToolCallPart(id=i, name="noop", arguments={"x": 1}), _IDS),
    st.builds(lambda t: TextPart(text=t), st.sampled_from(["", " ", "hi"])),
    st.builds(lambda t: ReasoningPart(text=t), st.sampled_from(["", "think"])),
)
_STOP = st.sampled_from(["end_turn", "tool_calls", "max_tokens", "refusal", "pause_turn"])


@settings(deadline=None)  # a busy machine is slow; nothing here is timed
@given(parts=st.lists(_PART, max_size=4), stop=_STOP)
def test_a_reply_is_refused_exactly_as_the_general_rule_says(parts: list[Any],
                                                             stop: str) -> None:
    reply = Reply(message=Message(role="assistant", parts=tuple(parts)), stop=stop)  # type: ignore[arg-type]
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    content = calls or any(isinstance(p, TextPart) and p.text.strip() for p in parts)
    explained = stop in ("max_tokens", "refusal", "pause_turn")
    ids = [c.id for c in calls]
    why = unusable(reply)
    if not content and not explained:
        assert why is not None and "holds no text and no tool call" in why
    elif len(set(ids)) < len(ids):
        assert why is not None and "more than one tool call the id" in why
    else:
        assert why is None


_POLICY = st.sampled_from(["allow", "ask", "deny", "defer"])


@settings(deadline=None)  # a busy machine is slow; nothing here is timed
@given(default=_POLICY, own=st.dictionaries(st.sampled_from(["noop", "other"]), _POLICY),
       names=st.lists(st.sampled_from(["noop", "other", "missing"]), max_size=4))
def test_the_calls_awaiting_decisions_are_those_of_deferred_tools(
        default: str, own: dict[str, str], names: list[str]) -> None:
    other = Tool.from_function(_noop, name="other")
    dispatcher = Dispatcher([TOOL, other], policy={"*": default, **own})  # type: ignore[dict-item]
    calls = [ToolCallPart(id=f"c{i}", name=n, arguments={"x": i}) for i, n in enumerate(names)]
    expected = [c for c in calls
                if own.get(c.name, default) == "defer" and c.name in ("noop", "other")]
    assert dispatcher.awaiting(calls) == expected
    # the loop asks `awaiting` only of a dispatcher that defers some tool
    assert dispatcher.defers == ("defer" in (default, *own.values()))
    if not dispatcher.defers:
        assert expected == []


@settings(deadline=None)  # a busy machine is slow; nothing here is timed
@given(default=_POLICY, own=st.dictionaries(st.sampled_from(["noop", "other"]), _POLICY),
       name=st.sampled_from(["noop", "other"]))
async def test_a_call_is_admitted_as_its_tools_policy_says(
        default: str, own: dict[str, str], name: str) -> None:
    """``allow`` lets the call run at once; every other policy, with no one to ask and no
    decision given, answers it with an error result."""
    other = Tool.from_function(_noop, name="other")
    dispatcher = Dispatcher([TOOL, other], policy={"*": default, **own})  # type: ignore[dict-item]
    call = ToolCallPart(id="c1", name=name, arguments={"x": 1})
    admitted = await dispatcher.admit(call)
    # `allowed`, which the dispatcher asks first, gives what `admit` gives or leaves it to it
    quick = dispatcher.allowed(call)
    assert (quick is None) == (own.get(name, default) != "allow")
    if quick is not None:
        assert quick == admitted
    if own.get(name, default) == "allow":
        assert isinstance(admitted, tuple) and admitted[0].name == name
        assert admitted[1] == {"x": 1}
    else:
        assert isinstance(admitted, ToolResultPart) and admitted.is_error


@settings(deadline=None)
@given(setting=st.sampled_from([None, "clear", "summarize", "provider"]),
       window=st.sampled_from([None, 50, 100_000]),
       sizes=st.lists(st.integers(0, 400), min_size=1, max_size=8))
async def test_a_keeper_that_is_idle_leaves_every_history_as_it_was(
        setting: str | None, window: int | None, sizes: list[int]) -> None:
    """The loop skips `Keeper.before_call` when the keeper is idle: the call would have
    changed no history and added no note."""
    from toolwire.agent.compaction import Keeper, compaction_setting
    from toolwire.agent.run import RunState
    from toolwire.testing import ScriptedModel

    keeper = Keeper(ScriptedModel(["ok"]), compaction_setting(setting), window)
    messages = [Message.user("x" * n) if i % 2 == 0 else Message.assistant("y" * n)
                for i, n in enumerate(sizes)]
    state = RunState(messages=list(messages), request_base=Request(model="m"))
    await keeper.before_call(state)
    if keeper.idle:
        assert state.messages == messages and state.notes == []
    assert keeper.idle == (setting is None or (window is None and setting != "provider"))


# --------------------------------------------------------------------------- a whole run, both ways

_NOTE = st.sampled_from(["names mapped", "schema rewritten", "reasoning dropped"])
_TURN = st.fixed_dictionaries({
    "wire_notes": st.lists(_NOTE, max_size=2),
    "retry": st.booleans(),
    "calls": st.lists(st.tuples(st.sampled_from(["noop", "loud", "missing"]),
                                st.integers(0, 3)), max_size=3),
    "tool_note": _NOTE,
})


def _scripted_run(turns: list[dict[str, Any]]) -> tuple[Any, list[Any]]:
    """A model that emits wire notes (and a retry) while it answers, and tools that emit a
    note as they run: what a turn hears with no `TurnWatch` and through one."""
    from toolwire.errors import OverloadedError
    from toolwire.events import RetryEvent, ToolNote, WireNotes, emit
    from toolwire.testing import call, reply

    entries: list[Any] = []
    for n, turn in enumerate(turns):
        def answer(request: Any, turn: dict[str, Any] = turn, n: int = n) -> Any:
            if turn["retry"]:
                emit(RetryEvent(attempt=1, wait=0.0, error=OverloadedError("busy")))
            if turn["wire_notes"]:
                emit(WireNotes(wire="test", notes=tuple(turn["wire_notes"])))
            calls = [call(name, {"x": x}, id=f"c{n}_{i}")
                     for i, (name, x) in enumerate(turn["calls"])]
            return reply(*calls) if calls else reply(f"done after {n}")
        entries.append(answer)
    entries.append(lambda request: reply("the end"))

    def loud(x: int) -> int:
        emit(ToolNote(source="loud", note=turns[0]["tool_note"]))
        return x

    return entries, [TOOL, Tool.from_function(loud, name="loud")]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=st.lists(_TURN, min_size=1, max_size=4))
async def test_a_turn_without_a_watch_gives_the_run_what_a_watched_turn_gives(
        turns: list[dict[str, Any]]) -> None:
    """With no listener and no eager calls a turn makes no `TurnWatch` (`toolwire.agent.asking`):
    the model's and the tools' events go to the run as they are. The run ends as it ends with
    a listener, whose turns are watched: the same messages, stop, notes and turns."""
    from toolwire import Agent
    from toolwire.testing import ScriptedModel

    results = []
    for on_event in (None, [].append):
        entries, tools = _scripted_run(turns)
        agent = Agent(ScriptedModel(entries), tools, max_turns=len(turns) + 1,
                      on_event=on_event)
        results.append(await agent.arun("go"))
    quiet, heard = results
    assert (quiet.stop, quiet.messages, quiet.notes, quiet.turns, quiet.answer) == (
        heard.stop, heard.messages, heard.notes, heard.turns, heard.answer)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=st.lists(_TURN.filter(lambda turn: turn["calls"]), min_size=1, max_size=4))
async def test_calls_without_structured_output_are_answered_as_answer_calls_answers_them(
        turns: list[dict[str, Any]]) -> None:
    """A run with no output type runs a reply's calls itself; one with an output type goes
    through `answer_calls`, which, for calls none of which is the final answer, gives the
    same results and goes on. Each turn's results and what came after are the same."""
    import pydantic

    from toolwire import Agent
    from toolwire.testing import ScriptedModel, call, reply

    class Answer(pydantic.BaseModel):
        text: str

    steps = []
    for output in (None, Answer):
        entries, tools = _scripted_run(turns)
        if output is not None:  # the last entry gives the final answer through its tool
            entries[-1] = lambda request: reply(call("final_answer", {"text": "the end"}))
        agent = Agent(ScriptedModel(entries), tools, max_turns=len(turns) + 1)
        run = agent.steps("go", output=output)
        steps.append([(s.results, s.stop) async for s in run][:-1])
    plain, structured = steps
    assert plain == structured


_VALUES = st.one_of(st.text(alphabet="ab-sk", max_size=12), st.integers(), st.none(),
                    st.lists(st.sampled_from(["sk-1", "a"]), max_size=3),
                    st.dictionaries(st.sampled_from(["k", "sk-2"]), st.integers(), max_size=2))


@settings(deadline=None)
@given(value=_VALUES, limit=st.sampled_from([3, 100]))
async def test_a_result_is_redacted_and_capped_as_the_general_rule_says(value: Any,
                                                                         limit: int) -> None:
    """A tool's value becomes its result text (`render_result`), cut to the limit
    (`cap_text`), then has its secrets taken out; a value of a kind that never holds media is
    not looked at for media, and a text left as it was is the result as it was made."""
    from toolwire.agent.calls import cap_text, render_result
    from toolwire.media import NEVER_MEDIA, media_content

    def give(x: int) -> Any:
        return value

    def redact(text: str) -> str:
        return text.replace("sk-", "[redacted]-")

    tool = Tool.from_function(give, name="give")
    dispatcher = Dispatcher([tool], redact=redact, max_output_chars=limit)
    [result] = await dispatcher.run([ToolCallPart(id="c1", name="give", arguments={"x": 1})])
    if type(value) in NEVER_MEDIA:
        assert media_content(value, render_result) is None
    expected = redact(cap_text(render_result(value), limit))
    assert result == ToolResultPart(call_id="c1", content=expected, name="give")


@settings(deadline=None)
@given(policy=_POLICY, name=st.sampled_from(["noop", "missing"]),
       args=st.sampled_from([{"x": 1}, {"x": "one"}, {}]), hooked=st.booleans())
async def test_a_single_call_is_dispatched_as_it_is_among_others(
        policy: str, name: str, args: dict[str, Any], hooked: bool) -> None:
    """`Dispatcher.run` runs a lone call by itself, with no list of calls to gather: its
    result and what the hooks hear of it are what the same call gets next to another."""
    other = Tool.from_function(_noop, name="other")

    async def dispatch(calls: list[ToolCallPart]) -> tuple[list[Any], list[Any]]:
        heard: list[Any] = []
        dispatcher = Dispatcher([TOOL, other], policy={"*": "allow", "noop": policy})  # type: ignore[dict-item]
        hooks: dict[str, Any] = {}
        if hooked:
            hooks = {"on_start": lambda c: heard.append(("start", c.id)),
                     "on_end": lambda c, r, s: heard.append(("end", c.id, r))}
        results = await dispatcher.run(calls, **hooks)
        return results, heard

    call = ToolCallPart(id="c1", name=name, arguments=args)
    alone, heard_alone = await dispatch([call])
    among, heard_among = await dispatch(
        [call, ToolCallPart(id="c2", name="other", arguments={"x": 2})])
    assert alone == among[:1]
    assert heard_alone == [h for h in heard_among if h[1] == "c1"]
