"""An agent's settings come in four typed groups (`Limits`, `RequestSettings`, `ToolPolicy`,
`Output`); each field's old keyword is a shorthand that gives the same agent."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import toolwire
from toolwire import Limits, Output, RequestSettings, ToolPolicy
from toolwire.agent.settings import GROUPS, SHORTHAND, Shorthand
from toolwire.testing import ScriptedModel, call, reply


def _look() -> str:
    """Look around."""
    return "nothing"


VALUES: dict[str, st.SearchStrategy[Any]] = {
    "max_turns": st.integers(1, 99), "token_budget": st.none() | st.integers(1, 10**6),
    "cost_budget": st.none() | st.floats(0.01, 10), "time_limit": st.none() | st.floats(1, 60),
    "max_tokens": st.none() | st.integers(1, 4096), "temperature": st.none() | st.floats(0, 2),
    "reasoning": st.sampled_from([None, "low", "high", "off"]),
    "provider_options": st.none() | st.just({"openai-chat": {"seed": 1}}),
    "parallel_calls": st.sampled_from([None, True, False]), "cache": st.booleans(),
    "stream": st.booleans(), "approval": st.sampled_from(["allow", "ask", {"_look": "deny"}]),
    "approve": st.sampled_from([None, bool]), "tool_timeout": st.none() | st.floats(1, 600),
    "max_concurrency": st.integers(1, 16), "max_output_chars": st.integers(100, 10**5),
    "eager_tools": st.booleans(), "deferred": st.sampled_from([(), ("_look",)]),
    "defer_after": st.none() | st.integers(0, 3), "tool_sources": st.just(()),
    "output_tool": st.sampled_from(["final_answer", "answer"]),
    "output_retries": st.integers(0, 5), "can_force_tool": st.booleans(),
}


def test_every_shorthand_keyword_names_a_field_of_its_group() -> None:
    assert set(SHORTHAND) == set(Shorthand.__annotations__) == set(VALUES)
    for keyword, (group, field) in SHORTHAND.items():
        assert field in {f.name for f in dataclasses.fields(GROUPS[group])}, keyword
    named = [(g, f) for g, f in SHORTHAND.values()]
    assert len(named) == len(set(named))
    groups_fields = {(g, f.name) for g, kind in GROUPS.items() for f in dataclasses.fields(kind)}
    assert groups_fields - set(named) == {("output", "type")}


@settings(deadline=None, max_examples=60)
@given(st.fixed_dictionaries({}, optional=VALUES))
def test_shorthand_and_groups_give_the_same_agent(flat: dict[str, Any]) -> None:
    grouped: dict[str, dict[str, Any]] = {}
    for keyword, value in flat.items():
        group, field = SHORTHAND[keyword]
        grouped.setdefault(group, {})[field] = value
    one = toolwire.Agent(model=ScriptedModel([]), tools=[_look], **flat)
    two = toolwire.Agent(model=ScriptedModel([]), tools=[_look],
                         **{g: GROUPS[g](**fields) for g, fields in grouped.items()})
    assert (one.limits, one.request, one.tool_policy, one.output) == (
        two.limits, two.request, two.tool_policy, two.output)
    assert one.settings == two.settings and one.cache == two.cache
    assert [s.name for s in one.specs] == [s.name for s in two.specs]
    shown = ("approve", "max_concurrency", "timeout", "max_output_chars")
    assert [getattr(one.dispatcher, n) for n in shown] == [getattr(two.dispatcher, n)
                                                            for n in shown]
    assert one.dispatcher.policy("_look") == two.dispatcher.policy("_look")


def test_a_grouped_agent_runs_as_its_settings_say() -> None:
    model = ScriptedModel([reply(call("_look")), reply(call("_look"))])
    agent = toolwire.Agent(
        model, [_look], system="Be brief.", limits=Limits(max_turns=2),
        request=RequestSettings(max_tokens=99, temperature=0.5),
        tool_policy=ToolPolicy(approval="deny"))
    result = agent.run("go")
    assert result.stop == "turn_limit" and result.turns == 2
    assert [r.is_error for r in result.messages[2].tool_results] == [True]
    first = model.requests[0]
    assert (first.max_tokens, first.temperature, first.system) == (99, 0.5, "Be brief.")


class City(BaseModel):
    name: str


def test_the_agents_output_type_is_every_runs_unless_a_run_gives_one() -> None:
    model = ScriptedModel([reply(call("city", {"name": "Oslo"})), "plain"])
    agent = toolwire.Agent(model=model, output=Output(type=City, tool="city", retries=0))
    assert agent.run("Biggest city?").output == City(name="Oslo")
    asked = ScriptedModel(["plain"])
    other = toolwire.Agent(model=asked, output=Output(type=City, retries=0))
    assert other.run("Hi", output={"type": "object"}).stop == "output_invalid"
    assert [t.input_schema for t in asked.requests[0].tools] == [{"type": "object"}]


def test_settings_objects_are_frozen_and_keep_tuples() -> None:
    policy = ToolPolicy(deferred=["a", "b"])
    assert policy.deferred == ("a", "b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.eager = True  # type: ignore[misc]


def test_shorthand_with_its_groups_object_is_refused() -> None:
    with pytest.raises(TypeError, match=r"max_turns=.*limits=toolwire.Limits\(max_turns=...\)"):
        toolwire.Agent(model=ScriptedModel([]), limits=Limits(token_budget=5),
                       max_turns=3)


def test_unknown_keywords_and_wrong_objects_are_refused() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'max_turn'"):
        toolwire.Agent(model=ScriptedModel([]), max_turn=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"takes a toolwire.Limits, not int"):
        toolwire.Agent(model=ScriptedModel([]), limits=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"output=toolwire.Output\(type="):
        toolwire.Agent(model=ScriptedModel([]), output=City)  # type: ignore[arg-type]
