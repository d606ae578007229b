"""The wire and provider registries: every part of toolwire reads them, so one registry line
adds a wire (here the tests' own ``dialogue-chat``, in tests/dialogue_wire.py) everywhere."""

from __future__ import annotations

import ast
import dataclasses
import json
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx2
import pytest

import dialogue_wire
import toolwire
from toolwire.batch.apis import unsupported
from toolwire.cli.app import build_parser, main
from toolwire.codecs import WIRES, get_codec
from toolwire.codecs.record import ServerMemory
from toolwire.codecs.registry import (
    GEMINI_GENERATE,
    Wire,
    detect_body,
    get_wire,
    register_wire,
    unregister_wire,
    wire_at,
    wire_names,
)
from toolwire.conversion import convert, detect_wire
from toolwire.emulator import Emulator, Fault
from toolwire.errors import ConfigError
from toolwire.http.client import RetryPolicy
from toolwire.http.endpoints import parse_model_id
from toolwire.http.providers import (
    PROVIDERS,
    Provider,
    model_id_forms,
    provider_for,
    register_provider,
    unregister_provider,
)
from toolwire.protocol import native_compaction, native_fallbacks, native_search
from toolwire.rules import check_transcript
from toolwire.transcript import Message, Reply, Request, ToolCallPart, ToolResultPart

SRC = Path(__file__).resolve().parents[1] / "src" / "toolwire"
ANSWER = Reply(message=Message.assistant("Dialogue says hello."), stop="end_turn")
ANTHROPIC_BODY = {
    "model": "m", "max_tokens": 64, "system": "Be brief.",
    "messages": [{"role": "user", "content": "Hello?"}],
}


def _mark_body(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "via": "dialogue-provider"}


@pytest.fixture
def dialogue() -> Iterator[Wire]:
    """The tests' own wire and a provider for it, registered for one test only."""
    wire = register_wire(dialogue_wire.RECORD)
    register_provider(Provider(name="dialogue", wire=wire.name, base_url="https://dialogue.test",
                               key_vars=("DIALOGUE_KEY",), any_server=True,
                               transform=_mark_body))
    try:
        yield wire
    finally:
        unregister_provider("dialogue")
        unregister_wire(wire.name)


# --------------------------------------------------------------------------- the registries


def test_the_built_in_wires_are_the_registry_s_in_their_order() -> None:
    assert wire_names() == WIRES
    assert [get_wire(name).name for name in WIRES] == list(WIRES)


def test_an_unknown_wire_is_refused_naming_the_wires() -> None:
    with pytest.raises(ValueError, match="unknown wire 'nope'; choose one of: " + WIRES[0]):
        get_wire("nope")
    with pytest.raises(ValueError, match="unknown wire 'nope'"):
        get_codec("nope")


def test_a_wire_is_registered_once_unless_replaced(dialogue: Wire) -> None:
    with pytest.raises(ValueError, match="already registered"):
        register_wire(dialogue_wire.RECORD)
    assert register_wire(dialogue_wire.RECORD, replace=True) is dialogue_wire.RECORD


def test_paths_route_to_wires_with_the_model_and_stream_a_url_carries() -> None:
    route = wire_at("/v1beta/models/gemini-3-flash:streamGenerateContent?alt=sse")
    assert route is not None and route.wire is GEMINI_GENERATE
    assert (route.model, route.stream) == ("gemini-3-flash", True)
    route = wire_at("/v1/models/m:generateContent")
    assert route is not None and (route.model, route.stream) == ("m", False)
    for name in WIRES:  # every wire's own path, and behind a server's base path
        path = get_wire(name).path.replace("{model}", "m")
        assert [r.wire.name for r in (wire_at(path), wire_at("/proxy" + path)) if r] == [name] * 2
    assert wire_at("/v2/unknown") is None


def test_a_path_looked_up_before_a_wire_came_finds_it_after_and_not_once_it_left() -> None:
    """What a path serves is remembered per path; registering or removing a wire forgets it."""
    path = dialogue_wire.PATH
    assert wire_at(path) is None and wire_at(path) is None
    wire = register_wire(dialogue_wire.RECORD)
    try:
        route = wire_at(path)
        assert route is not None and route.wire is wire
    finally:
        unregister_wire(wire.name)
    assert wire_at(path) is None


def test_every_provider_speaks_a_registered_wire_and_each_wire_has_a_provider() -> None:
    assert all(get_wire(p.wire) for p in PROVIDERS.values())
    for wire in WIRES:
        assert PROVIDERS[provider_for(wire)].wire == wire
        ep = parse_model_id(f"{provider_for(wire)}:m@http://127.0.0.1:9", {})
        assert ep.wire == wire and ep.url().startswith("http://127.0.0.1:9/")
    with pytest.raises(ValueError, match="no provider speaks"):
        provider_for("nope")


def test_a_provider_for_an_unknown_wire_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown wire 'nope'"):
        register_provider(Provider(name="x", wire="nope", base_url="http://127.0.0.1:1"))
    assert "x" not in PROVIDERS


# --------------------------------------------------------------------------- a new wire


def test_a_registered_wire_is_reached_through_get_codec(dialogue: Wire) -> None:
    codec = get_codec(dialogue.name)
    assert dialogue.name == codec.WIRE
    body = codec.encode_request(Request(model="m", messages=(Message.user("Hi"),)))
    assert "dialogue" in body and "messages" not in body
    assert codec.decode_request(body).messages[0].text == "Hi"


def test_a_registered_wire_is_reached_through_convert_and_detect(dialogue: Wire) -> None:
    there = toolwire.convert(ANTHROPIC_BODY, WIRES[0], dialogue.name)
    assert there.target == dialogue.name and there.body["dialogue"][-1]["content"] == "Hello?"
    assert detect_wire(there.body) == (dialogue.name, "request")
    back = convert(there.body, dialogue.name, WIRES[0])
    assert back.body["messages"] == ANTHROPIC_BODY["messages"]
    reply = get_codec(dialogue.name).encode_response(ANSWER)
    assert detect_wire(json.loads(json.dumps(reply))) == (dialogue.name, "response")
    assert detect_body({"messages": []}) == (WIRES[1], "request")  # other bodies as before


def test_a_registered_wire_has_its_own_transcript_rules(dialogue: Wire) -> None:
    messages = [
        Message.user("Go"),
        Message(role="assistant", parts=(ToolCallPart(id="c1", name="Lookup", arguments={}),)),
        Message(role="tool", parts=(ToolResultPart(call_id="c1", content="ok"),)),
    ]
    problems = check_transcript(messages, dialogue.name)
    assert [p.rule for p in problems] == ["bad_tool_name"]
    assert "dialogue-chat rejects the tool name 'Lookup'" in problems[0].message
    assert "lowercase letters and '_'" in problems[0].message
    assert check_transcript(messages, WIRES[0]) == []


def test_a_registered_wire_is_a_choice_of_the_command_line(
    dialogue: Wire, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = build_parser().parse_args(["check", "x.json", "--wire", dialogue.name])
    assert args.wire == dialogue.name
    src = tmp_path / "a.json"
    src.write_text(json.dumps(ANTHROPIC_BODY), encoding="utf-8")
    assert main(["convert", str(src), "--to", dialogue.name]) == 0
    assert json.loads(capsys.readouterr().out)["dialogue"][-1]["content"] == "Hello?"
    out = tmp_path / "d.json"
    out.write_text(json.dumps(convert(ANTHROPIC_BODY, WIRES[0], dialogue.name).body), "utf-8")
    assert main(["convert", str(out), "--to", WIRES[0]]) == 0  # --from detected
    assert json.loads(capsys.readouterr().out)["messages"] == ANTHROPIC_BODY["messages"]


def test_a_wire_no_longer_registered_is_no_choice() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["convert", "x.json", "--to", dialogue_wire.WIRE])
    with pytest.raises(ValueError, match="unknown wire 'dialogue-chat'"):
        get_codec(dialogue_wire.WIRE)


def test_the_emulator_serves_a_registered_wire_at_its_path(dialogue: Wire) -> None:
    body = get_codec(dialogue.name).encode_request(
        Request(model="m", messages=(Message.user("Hi"),)))
    with Emulator([ANSWER, Fault(kind="overloaded")]) as emu:
        resp = httpx2.post(emu.base_url + dialogue_wire.PATH, json=body)
        refused = httpx2.post(emu.base_url + dialogue_wire.PATH, json={"dialogue": []})
        overloaded = httpx2.post(emu.base_url + "/proxy" + dialogue_wire.PATH, json=body)
    assert resp.status_code == 200 and resp.json()["object"] == "dialogue.turn"
    assert get_codec(dialogue.name).decode_response(resp.json()).text == ANSWER.text
    assert refused.status_code == 400  # checked as the wire checks a body
    assert overloaded.status_code == dialogue.overloaded_status == 503
    assert [r.wire for r in emu.received] == [dialogue.name] * 3


def test_the_emulator_keeps_conversations_for_a_wire_whose_record_names_a_memory() -> None:
    def continued(body: Mapping[str, Any], kept: Mapping[str, list[Any]]) -> dict[str, Any]:
        after = body.get("after")
        if after is not None and after not in kept:
            raise LookupError(f"nothing is kept under {after!r}")
        return {k: v for k, v in body.items() if k != "after"}

    def keep(kept: dict[str, list[Any]], body: Mapping[str, Any],
             reply: Mapping[str, Any]) -> None:
        kept[f"c{len(kept)}"] = [body, reply]

    wire = register_wire(dataclasses.replace(
        dialogue_wire.RECORD, memory=ServerMemory(continued=continued, keep=keep)))
    try:
        body = get_codec(wire.name).encode_request(
            Request(model="m", messages=(Message.user("Hi"),)))
        with Emulator([ANSWER, ANSWER]) as emu:
            first = httpx2.post(emu.base_url + dialogue_wire.PATH, json=body)
            again = httpx2.post(emu.base_url + dialogue_wire.PATH, json={**body, "after": "c0"})
            gone = httpx2.post(emu.base_url + dialogue_wire.PATH, json={**body, "after": "c9"})
    finally:
        unregister_wire(wire.name)
    assert first.status_code == again.status_code == 200
    assert gone.status_code == 404 and "c9" in gone.text
    assert list(emu.kept) == ["c0", "c1"] and emu.kept["c0"][0] == body


async def test_a_registered_provider_reaches_the_wire_through_a_model_id(dialogue: Wire) -> None:
    assert "dialogue:<model>" in model_id_forms()
    with pytest.raises(ConfigError, match="set DIALOGUE_KEY in the environment"):
        parse_model_id("dialogue:m", {})
    async with Emulator([ANSWER]) as emu:
        m = toolwire.model(f"dialogue:m@{emu.base_url}", env={"DIALOGUE_KEY": "k"},
                           retry=RetryPolicy(base=0.001))
        reply = await m.complete(Request(model="m", messages=(Message.user("Hi"),)))
        await m.aclose()
    assert reply.text == ANSWER.text
    (received,) = emu.received
    assert received.wire == dialogue.name and received.body["via"] == "dialogue-provider"
    assert received.headers.get("authorization") == "Bearer k"


# --------------------------------------------------------------------------- no wire literals


def _wire_literals(path: Path, root: Path = SRC) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [f"{path.relative_to(root)}:{node.lineno}: {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in WIRES]


NAMED_BY_WIRE: set[str] = set()
"""Modules outside codecs that still name wires: none. What the proxy needs of a wire (its live
stream writer, where its clients keep carried reasoning, its longest call id, its clients' key
headers) is a field of the wire's record. The set may only shrink: a module listed that no
longer names a wire fails the test below too."""


def test_no_module_outside_codecs_names_a_wire_in_a_string_literal() -> None:
    files = [p for p in SRC.rglob("*.py") if "codecs" not in p.relative_to(SRC).parts]
    assert len(files) > 20
    hits = {str(p.relative_to(SRC)): _wire_literals(p) for p in files}
    assert [hit for name, found in hits.items() if name not in NAMED_BY_WIRE
            for hit in found] == []
    assert {name for name in NAMED_BY_WIRE if hits.get(name)} == NAMED_BY_WIRE


def test_the_literal_check_finds_a_wire_name(tmp_path: Path) -> None:
    planted = tmp_path / "x.py"
    planted.write_text(f"if wire == {WIRES[3]!r}:\n    pass\n", encoding="utf-8")
    assert _wire_literals(planted, tmp_path) == [f"x.py:1: {WIRES[3]!r}"]


# --------------------------------------------------------------------------- provider facts


def _provider_comparisons(path: Path, root: Path = SRC) -> list[str]:
    """Comparisons of something named like a provider with a provider's name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        names = [e.value for side in sides
                 for e in (side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set)
                           else [side])
                 if isinstance(e, ast.Constant) and e.value in PROVIDERS]
        if names and any("provider" in ast.unparse(side) for side in sides):
            found.append(f"{path.relative_to(root)}:{node.lineno}: {names[0]!r}")
    return found


def test_no_module_outside_the_provider_registry_compares_provider_names() -> None:
    files = [p for p in SRC.rglob("*.py") if p.relative_to(SRC).as_posix() != "http/providers.py"]
    assert [hit for p in files for hit in _provider_comparisons(p)] == []


def test_the_provider_comparison_check_finds_one(tmp_path: Path) -> None:
    planted = tmp_path / "x.py"
    planted.write_text('if endpoint.provider == "ollama":\n    pass\n', encoding="utf-8")
    assert _provider_comparisons(planted, tmp_path) == ["x.py:1: 'ollama'"]


@pytest.mark.parametrize("first_party", [True, False])
def test_server_side_features_follow_the_provider_record(first_party: bool) -> None:
    register_provider(Provider(name="own-api", wire=WIRES[0], base_url="http://127.0.0.1:9",
                               first_party=first_party))
    try:
        m = toolwire.model("own-api:m")
    finally:
        unregister_provider("own-api")
    assert native_search(m) is native_compaction(m) is native_fallbacks(m) is first_party
    m.native_tool_search = not first_party  # the model's own setting beats the record
    assert native_search(m) is not first_party


def test_a_provider_with_a_context_size_field_is_sent_the_model_s_window() -> None:
    ollama = get_wire("ollama-chat").name
    register_provider(Provider(name="sized", wire=ollama, base_url="http://127.0.0.1:9",
                               context_size=("options", "num_ctx"), default_context=2048))
    register_provider(Provider(name="unsized", wire=ollama, base_url="http://127.0.0.1:9"))
    try:
        sized = toolwire.model("sized:m", context_window=8192)
        default = toolwire.model("sized:m", options={"options": {"seed": 1}})
        unsized = toolwire.model("unsized:m", context_window=8192)
    finally:
        unregister_provider("sized")
        unregister_provider("unsized")
    assert sized.options == {"options": {"num_ctx": 8192}}
    assert default.options == {"options": {"seed": 1}} and default._num_ctx == 2048
    assert unsized.options == {} and unsized._num_ctx is None


def test_a_provider_says_itself_why_it_has_no_batch_api() -> None:
    register_provider(Provider(name="nobatch", wire=WIRES[1], base_url="http://127.0.0.1:9",
                               no_batch="it answers one request at a time"))
    try:
        assert "it answers one request at a time" in (unsupported("nobatch") or "")
    finally:
        unregister_provider("nobatch")
    assert unsupported(provider_for(WIRES[1])) is None


# --------------------------------------------------------------------------- what a wire takes

FOLDER_INIT = '''"""A wire in a folder of its own: its record, and nothing else to add anywhere."""
from dialogue_wire import recognise
from toolwire.codecs.record import Wire

RECORD = Wire(name="folder-chat", module="folder_wire.codec", path="/folder/v1/turns",
              detect=recognise, detect_rank=6)
'''
FOLDER_CODEC = '''"""Its codec: the dialogue wire's functions, under its own name."""
from dialogue_wire import (STOP_REASONS, StreamDecoder, check_body, decode_error,
                           decode_request, decode_response, encode, encode_error,
                           encode_response, encode_stream)

WIRE = "folder-chat"
'''


def test_a_wire_is_one_folder_and_one_registry_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "folder_wire"
    folder.mkdir()
    (folder / "__init__.py").write_text(FOLDER_INIT, encoding="utf-8")
    (folder / "codec.py").write_text(FOLDER_CODEC, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import folder_wire  # type: ignore[import-not-found]

    register_wire(folder_wire.RECORD)  # the one registry line; no provider, no other edit
    try:
        assert not [p for p in PROVIDERS.values() if p.wire == "folder-chat"]
        body = get_codec("folder-chat").encode_request(
            Request(model="m", messages=(Message.user("Hi"),)))
        assert detect_wire(body) == ("folder-chat", "request")
        assert convert(ANTHROPIC_BODY, WIRES[0], "folder-chat").body["dialogue"][-1] == {
            "role": "user", "content": "Hello?"}
        assert check_transcript([Message.user("Go")], "folder-chat") == []
        with Emulator([ANSWER]) as emu:
            resp = httpx2.post(emu.base_url + "/folder/v1/turns", json=body)
        assert resp.status_code == 200 and resp.json()["object"] == "dialogue.turn"
        src = tmp_path / "a.json"
        src.write_text(json.dumps(ANTHROPIC_BODY), encoding="utf-8")
        assert main(["convert", str(src), "--to", "folder-chat"]) == 0
        assert json.loads(capsys.readouterr().out)["dialogue"][-1]["content"] == "Hello?"
    finally:
        unregister_wire("folder-chat")
        for name in ("folder_wire", "folder_wire.codec"):
            sys.modules.pop(name, None)


def _provider_asked_at_import(path: Path, root: Path = SRC) -> list[str]:
    """Calls of `provider_for` outside any function: a module that needs a provider for every
    wire as it is imported."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    inside = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef
                                                          | ast.Lambda)
              for n in ast.walk(f)}
    return [f"{path.relative_to(root)}:{node.lineno}" for node in ast.walk(tree)
            if isinstance(node, ast.Call) and id(node) not in inside
            and isinstance(node.func, ast.Name | ast.Attribute)
            and (getattr(node.func, "id", None) or getattr(node.func, "attr", None))
            == "provider_for"]


def test_no_module_asks_for_a_wire_s_provider_as_it_is_imported(tmp_path: Path) -> None:
    assert [hit for p in SRC.rglob("*.py") for hit in _provider_asked_at_import(p)] == []
    planted = tmp_path / "x.py"
    planted.write_text("WIRES = {w: provider_for(w) for w in ()}\n", encoding="utf-8")
    assert _provider_asked_at_import(planted, tmp_path) == ["x.py:1"]


def test_the_proxy_serves_a_registered_wire_by_its_record_alone(dialogue: Wire) -> None:
    """A wire added later, with its record's proxy fields (its live writer, its longest call
    id, its clients' key header), is served by the proxy with no edit in the proxy."""
    pytest.importorskip("uvicorn")
    from dialogue_live import MARK
    from proxy_harness import running_proxy

    wire = register_wire(dataclasses.replace(
        dialogue, rules=dataclasses.replace(dialogue.rules, id_max_length=12),
        client_headers=("x-dialogue-key",), live_writer=dialogue_wire.LIVE_WRITER),
        replace=True)
    call = Reply(message=Message(role="assistant", parts=(
        ToolCallPart(id="toolu_01Rk3vXb9LmT2aWc4YdE8q", name="lookup", arguments={"q": "x"}),)),
        stop="tool_calls")
    body = get_codec(wire.name).encode_request(
        Request(model="m", messages=(Message.user("Hi"),), stream=True))
    with Emulator([call]) as emu, running_proxy(f"anthropic:m@{emu.base_url}") as url:
        streamed = httpx2.post(url + dialogue_wire.PATH, json=body, timeout=60)
        lost = httpx2.post(url + "/nowhere", json={}, headers={"x-dialogue-key": "k"})
    assert streamed.status_code == 200 and streamed.content.startswith(MARK)
    (event,) = [e for e in get_codec(wire.name).decode_stream(
        [streamed.content], request=Request(model="m")) if hasattr(e, "reply")]
    (got,) = event.reply.tool_calls
    assert got.arguments == {"q": "x"} and 0 < len(got.id) <= 12
    assert lost.status_code == 404 and lost.json()["object"] == "dialogue.error"
