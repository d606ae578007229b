"""Chat Completions bodies of every shape read the same by the usual paths and the general one.

The usual paths of `decode_request` tell a message, a call and a tool by the size of the
object and the types of the values they look up; the general path reads every key. Bodies
drawn here have keys left out, keys added and values of the wrong type, in the places the
usual paths look at; each body is read as it is and again with every object a read-only
mapping that is not a ``dict`` (which only the general path takes), and the two readings must
agree: the same request, or the same error.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from test_codec_usual_paths import frozen
from toolwire.codecs import get_codec
from toolwire.conversion import convert
from toolwire.errors import ToolwireError

_ARGS = ['{"q": 1}', "", "{", "[1]", "null", '{"a": {"b": [2]}}']
_ODD = st.sampled_from([None, 3, "", "null", "x", [], [1]])


@st.composite
def _near(draw: st.DrawFn, usual: st.SearchStrategy[dict[str, Any]],
          extra: tuple[str, ...]) -> dict[str, Any]:
    """An object of the usual shape, or one a step or two from it: a key left out, a key
    added (one of ``extra``) or a value of another type."""
    value = dict(draw(usual))
    for step in draw(st.lists(st.sampled_from(["drop", "add", "odd"]), max_size=2)):
        if step == "drop" and value:
            del value[draw(st.sampled_from(sorted(value)))]
        elif step == "add":
            value[draw(st.sampled_from(extra))] = draw(_ODD)
        elif step == "odd" and value:
            value[draw(st.sampled_from(sorted(value)))] = draw(_ODD)
    return value


_functions = _near(st.fixed_dictionaries({"name": st.sampled_from(["f", "g.h"]),
                                          "arguments": st.sampled_from(_ARGS)}),
                   ("description", "strict"))
_calls = _near(st.fixed_dictionaries({"id": st.sampled_from(["c1", "c2"]),
                                      "type": st.just("function"), "function": _functions}),
               ("index", "custom", "extra"))
_contents = st.sampled_from(["", "hi", "Error: no", "(no output)", None,
                             [{"type": "text", "text": "a"}]])
_messages = st.one_of(
    _near(st.fixed_dictionaries({"role": st.sampled_from(["user", "system", "assistant",
                                                          "developer"]),
                                 "content": _contents}), ("name", "tool_calls", "role")),
    _near(st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": st.sampled_from(
        ["c1", "c2", "", "null"]), "content": _contents}), ("name", "tool_calls")),
    _near(st.fixed_dictionaries({"role": st.just("assistant"), "content": _contents,
                                 "tool_calls": st.lists(_calls, max_size=2)}),
          ("name", "tool_call_id", "refusal")))
_tools = _near(st.fixed_dictionaries({"type": st.just("function"), "function": _near(
    st.fixed_dictionaries({"name": st.sampled_from(["f", "g"]), "description": st.just("d"),
                           "parameters": st.just({"type": "object", "properties": {}})}),
    ("strict", "extra"))}), ("extra", "custom"))
_bodies = st.fixed_dictionaries(
    {"model": st.just("m"), "messages": st.lists(_messages, max_size=6)},
    optional={"tools": st.lists(_tools, max_size=3)})


def _read(body: Any) -> Any:
    try:
        return get_codec("openai-chat").decode_request(body)
    except ToolwireError as exc:
        return type(exc), str(exc)


def _converted(body: Any) -> Any:
    try:
        out = convert(body, "openai-chat", "anthropic-messages")
    except ToolwireError as exc:
        return type(exc), str(exc)
    return out.body, out.losses, out.request


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_bodies)
@example({"model": "m", "messages": [  # three keys, not the usual three
    {"role": "assistant", "tool_calls": [], "name": None},
    {"role": "tool", "tool_call_id": "c1", "name": "x"},
    {"role": "user", "content": "hi", "name": "x"}]})
def test_every_shape_reads_the_same_either_way(body: dict[str, Any]) -> None:
    assert _read(body) == _read(frozen(body))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_bodies)
def test_every_shape_converts_the_same_either_way(body: dict[str, Any]) -> None:
    assert _converted(body) == _converted(frozen(body))
