"""MCP on both sides, with real processes: SDK-built servers used by an `Agent`, and
``python -m toolwire.mcp`` (what ``toolwire mcp-serve`` runs) used by the SDK's own client."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from mcp_types import Tool as McpTool

import toolwire
from toolwire import Agent, RunStop, validate_call
from toolwire.emulator import Emulator
from toolwire.errors import ConfigError, ToolCallError, ToolError
from toolwire.mcp import (
    McpConnection,
    McpConnectionError,
    build_server,
    connect,
    load_tools,
    open_servers,
    result_text,
)
from toolwire.mcp._naming import plan_names, server_label
from toolwire.mcp.cli import main as serve_cli
from toolwire.testing import ScriptedModel, call, reply
from toolwire.tools.coding import coding_tools
from toolwire.transcript import ToolResultPart

FIXTURES = Path(__file__).parent / "fixtures"
WEATHER = [sys.executable, str(FIXTURES / "mcp_server_weather.py")]
TOOLWIRE_TOOLS = str(FIXTURES / "mcp_server_toolwire_tools.py")
SRC = str(Path(__file__).parent.parent / "src")


@pytest.fixture(scope="module")
def weather() -> Iterator[McpConnection]:
    """One weather server for the module: its connection serves every test's event loop."""
    with connect(WEATHER) as server:
        yield server


def results(run: Any) -> list[ToolResultPart]:
    return [p for m in run.messages if m.role == "tool" for p in m.parts
            if isinstance(p, ToolResultPart)]


def http_model(emu: Emulator) -> Any:
    return toolwire.model("anthropic:m@" + emu.base_url, env={})


# ---------------------------------------------------------------------- client side


def test_tools_have_the_servers_names_descriptions_and_schemas(weather: McpConnection) -> None:
    assert weather.name == "weather"
    assert weather.instructions == "Weather for any city."
    assert [t.name for t in weather.tools] == [t.name for t in weather.listing]
    assert "stats" in [t.name for t in weather.tools]
    for made, listed in zip(weather.tools, weather.listing, strict=True):
        assert made.description == listed.description
        assert made.input_schema["properties"] == listed.input_schema["properties"]
        assert made.input_schema.get("required") == listed.input_schema.get("required")
        assert made.is_async
        assert made.idempotent is (made.name == "weather")  # the only one marked read-only


async def test_agent_calls_mcp_tools_through_the_emulator(weather: McpConnection) -> None:
    script = [
        {"tool_calls": [
            {"name": "weather", "arguments": {"city": "Oslo"}},
            {"name": "forecast", "arguments": {"city": "Oslo", "days": 2}},
            {"name": "radar", "arguments": {"city": "Oslo"}},
            {"name": "stats", "arguments": {"city": "Oslo"}},
            {"name": "refuse", "arguments": {"reason": "no radar today"}},
            {"name": "weather", "arguments": {"town": "Oslo"}},
        ]},
        {"text": "Sunny in Oslo."},
    ]
    async with Emulator(script) as emu:
        model = http_model(emu)
        try:
            run = await Agent(model=model, tools=weather.tools).arun("Weather in Oslo?")
        finally:
            await model.aclose()
        emu.assert_done()
    assert run.stop is RunStop.ANSWERED and run.answer == "Sunny in Oslo."
    text, forecast, radar, stats, refused, invalid = results(run)
    assert (text.content, text.is_error) == ("Sunny in Oslo, 21 C", False)
    assert json.loads(forecast.content) == {"city": "Oslo", "days": 2, "highs": [20, 21]}
    [image] = radar.media  # an MCP image is a media part, as a tool's own image is
    assert (image.kind, image.media_type, len(image.data or b"")) == ("image", "image/png", 66)
    assert not radar.is_error
    assert json.loads(stats.content) == {"city": "Oslo", "rain_mm": 760}
    assert refused.is_error and refused.content.endswith("cannot do that: no radar today")
    # checked by toolwire before it could leave: the SDK server's own message would differ
    with pytest.raises(ToolCallError) as expected:
        validate_call(weather.tools, "weather", {"town": "Oslo"})
    assert invalid.is_error and invalid.content == str(expected.value)
    # the server's answer went back to the model over the wire
    assert "Sunny in Oslo, 21 C" in json.dumps(emu.received[1].body)


def test_a_sync_run_uses_a_connection_opened_outside_its_loop(weather: McpConnection) -> None:
    model = ScriptedModel([reply(call("whoami")), reply("done")])
    run = Agent(model=model, tools=weather.tools).run("who are you?")
    assert [r.content for r in results(run)] == ["weather"]


async def test_parallel_and_cancelled_calls(weather: McpConnection) -> None:
    slow = {t.name: t for t in weather.tools}["slow"]
    started = time.perf_counter()
    both = await asyncio.gather(slow.acall({"seconds": 0.6}), slow.acall({"seconds": 0.6}))
    assert both == ["waited 0.6 s", "waited 0.6 s"]
    assert time.perf_counter() - started < 1.15  # the two calls ran at the same time
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(slow.acall({"seconds": 5}), 0.2)
    model = ScriptedModel([reply(call("slow", {"seconds": 5})), reply("gave up")])
    run = await Agent(model=model, tools=weather.tools, tool_timeout=0.3).arun("wait")
    [late] = results(run)
    assert late.is_error and "did not finish within 0.3 seconds" in late.content
    assert await weather.call("weather", {"city": "Rome"}) == "Sunny in Rome, 21 C"
    assert weather.alive


async def test_a_server_that_dies_mid_run_gives_error_results() -> None:
    script = [{"tool_calls": [{"name": "crash"}]},
              {"tool_calls": [{"name": "weather", "arguments": {"city": "Oslo"}}]},
              {"text": "The weather server is gone."}]
    async with connect(WEATHER) as server, Emulator(script) as emu:
        model = http_model(emu)
        try:
            run = await Agent(model=model, tools=server.tools).arun("Weather?")
        finally:
            await model.aclose()
        assert not server.alive
    assert run.stop is RunStop.ANSWERED
    crashed, after = results(run)
    for result in (crashed, after):
        assert result.is_error
        assert "the MCP server 'weather'" in result.content
        assert "not reachable any more" in result.content
        assert "weather server: crashing on purpose" in result.content  # its stderr
    assert "while the call was running" in crashed.content
    assert "before the call" in after.content


def test_clashing_names_across_servers_get_prefixes_and_notes() -> None:
    with open_servers([[*WEATHER, "alpha"], [*WEATHER, "beta"]]) as group:
        names = [t.name for t in group.tools]
        assert group.labels == ("alpha", "beta")
        assert "alpha_weather" in names and "beta_weather" in names
        assert "weather" not in names and len(names) == len(set(names)) == 16
        assert group.read_only == {"alpha_weather", "beta_weather"}
        note = next(n for n in group.notes if "'whoami'" in n)
        assert "'alpha_whoami' (server 'alpha')" in note and "'beta_whoami'" in note
        tools = {t.name: t for t in group.tools}
        assert asyncio.run(tools["beta_whoami"].acall({})) == "beta"
        assert asyncio.run(tools["alpha_whoami"].acall({})) == "alpha"
    assert not any(server.alive for server in group.servers)


def test_servers_that_cannot_start_are_explained() -> None:
    with pytest.raises(McpConnectionError, match="no-such-mcp-server-command"):
        connect("no-such-mcp-server-command --flag").open()
    failing = [sys.executable, "-c", "import sys; sys.exit('no config file found')"]
    with pytest.raises(McpConnectionError) as error:
        open_servers([failing])
    assert "Connection closed" in str(error.value)
    assert "no config file found" in str(error.value)
    with pytest.raises(McpConnectionError, match="empty command"):
        connect("   ")


async def test_a_server_that_never_answers_times_out() -> None:
    silent = [sys.executable, "-c", "import time; print('starting', flush=True); time.sleep(30)"]
    started = time.perf_counter()
    with pytest.raises(McpConnectionError, match=r"no answer within 0\.5 s"):
        async with connect(silent, timeout=0.5):
            pass
    assert time.perf_counter() - started < 6  # its process was stopped, not waited for


def test_tools_toolwire_cannot_use_are_left_out_with_a_note() -> None:
    server = connect("python -m some_server")
    assert server.name == "some_server" and not server.alive
    good = McpTool(name="ok", input_schema={"type": "object"},
                   annotations=ToolAnnotations(read_only_hint=True))
    bad = McpTool(name="bad", input_schema={"type": "object",
                                            "properties": {"a": {"type": "nonsense"}}})
    server._session.listing = (good, bad, good)
    [made] = server.make_tools({"ok": "renamed"})
    assert made.name == "renamed" and made.idempotent
    assert server.notes[0].startswith("MCP server 'some_server': the tool 'bad' was left out: ")
    assert server.notes[1] == ("MCP server 'some_server' lists the tool 'ok' twice; only the "
                               "first is used")
    assert connect("http://127.0.0.1:8123/mcp").name == "127.0.0.1_8123"
    with pytest.raises(McpConnectionError, match="is not open"):
        asyncio.run(server.call_raw("ok"))


def test_names_are_planned_with_prefixes_only_where_they_clash() -> None:
    plans, notes = plan_names(
        [("a", ["x", "y", "read_file"]), ("b", ["x", "z"]), ("c", ["x"])], {"read_file", "a_x"})
    assert plans == [{"x": "a_x_2", "y": "y", "read_file": "a_read_file"},
                     {"x": "b_x", "z": "z"}, {"x": "c_x"}]
    assert len(notes) == 2
    assert notes[0] == ("the tool name 'x' is offered by MCP servers 'a', 'b' and 'c'; it is "
                        "called 'a_x_2' (server 'a'), 'b_x' (server 'b'), 'c_x' (server 'c')")
    assert notes[1] == ("the tool name 'read_file' is offered by MCP server 'a' and by another "
                        "tool; it is called 'a_read_file' (server 'a')")
    long = plan_names([("s" * 24, ["t" * 60]), ("u", ["t" * 60])])[0]
    assert all(len(new) <= 64 for plan in long for new in plan.values())
    assert server_label("My Server!", "mcp1") == "My_Server" and server_label("", "mcp2") == "mcp2"


def test_result_blocks_become_text() -> None:
    blob = BlobResourceContents(uri="file:///a.bin", blob="AAAA", mime_type="application/zip")
    result = CallToolResult(content=[
        TextContent(text="first"),
        ImageContent(data="iVBORw0KGgo=", mime_type="image/png"),
        AudioContent(data="AAAAAA==", mime_type="audio/wav"),
        ResourceLink(uri="file:///notes.md", name="notes", description="the notes"),
        EmbeddedResource(resource=TextResourceContents(uri="file:///b.txt", text="inline")),
        EmbeddedResource(resource=blob),
    ], structured_content={"ignored": True})
    assert result_text(result).splitlines() == [
        "first", "[image: image/png, 8 bytes]", "[audio: audio/wav, 4 bytes]",
        "[resource link: notes <file:///notes.md> (the notes)]", "inline",
        "[resource file:///a.bin: application/zip, 3 bytes]",
    ]
    assert result_text(CallToolResult(content=[], structured_content=[1, "b"])) == '[1,"b"]'


# ---------------------------------------------------------------------- server side


def expected_validation(tools: list[Any], name: str, arguments: Any) -> str:
    with pytest.raises(ToolCallError) as error:
        validate_call(tools, name, arguments)
    return str(error.value)


async def check_coding_server(client: Client, workdir: Path) -> None:
    tools = coding_tools(workdir)  # ask_user served too: it asks the client's user
    listed = (await client.list_tools()).tools
    assert sorted(t.name for t in listed) == sorted(t.name for t in tools)
    schemas = {t.name: dict(t.input_schema) for t in tools}
    assert all(t.input_schema == schemas[t.name] for t in listed)
    read = await client.call_tool("read_file", {"path": "notes.txt"})
    assert not read.is_error and read.content[0].text == "1\tsunny\n2\twindy"
    bad = await client.call_tool("read_file", {"pth": "notes.txt"})
    assert bad.is_error
    assert bad.content[0].text == expected_validation(tools, "read_file", {"pth": "notes.txt"})
    for path in ("../outside.txt", "/etc/hostname"):
        refused = await client.call_tool("read_file", {"path": path})
        assert refused.is_error and "outside the workspace" in refused.content[0].text
    ran = await client.call_tool("run_command", {"command": "echo hi && ls"})
    assert not ran.is_error and ran.content[0].text == "exit code 0\nhi\nnotes.txt"
    unknown = await client.call_tool("fly", {})
    assert unknown.is_error and unknown.content[0].text.startswith('Unknown tool "fly".')


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "outside.txt").write_text("secret")
    inside = tmp_path / "project"
    inside.mkdir()
    (inside / "notes.txt").write_text("sunny\nwindy\n")
    return inside


async def test_mcp_serve_over_stdio_with_the_sdk_client(workdir: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, env={"PYTHONPATH": SRC},
        args=["-m", "toolwire.mcp", "--builtin", "coding", "--workdir", str(workdir)])
    async with Client(params, mode="legacy") as client:  # the handshake-era protocol
        assert client.server_info is not None
        assert client.server_info.name == "toolwire-coding"
        await check_coding_server(client, workdir)


def start_http_server(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolwire.mcp", *args, "--transport", "http", "--port", "0"],
        stderr=subprocess.PIPE, text=True, env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"})
    assert proc.stderr is not None
    for _ in range(50):
        line = proc.stderr.readline()
        found = re.search(r"serving MCP at (http://\S+)", line)
        if found:
            return proc, found.group(1)
        if not line:
            break
    proc.kill()
    raise AssertionError(f"the server did not start: {proc.stderr.read()}")


async def test_mcp_serve_over_http_with_the_sdk_client_and_ours(workdir: Path) -> None:
    proc, url = start_http_server("--builtin", "coding", "--workdir", str(workdir))
    try:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url)
        async with Client(url) as client:  # the per-request protocol of 2026
            await check_coding_server(client, workdir)
        async with connect(url) as ours:
            tools = {t.name: t for t in ours.tools}
            assert tools["read_file"].input_schema == coding_tools(workdir)[0].input_schema
            assert await tools["read_file"].acall({"path": "notes.txt"}) == "1\tsunny\n2\twindy"
            proc.kill()
            proc.wait(timeout=5)
            with pytest.raises(ToolError, match="not reachable any more"):
                await ours.call("read_file", {"path": "notes.txt"})
    finally:
        proc.kill()
        proc.wait(timeout=5)
        assert proc.stderr is not None
        proc.stderr.close()


async def test_tools_from_a_module_served_in_process() -> None:
    tools = load_tools(TOOLWIRE_TOOLS + ":TOOLS")
    async with Client(build_server(tools, name="airports")) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert listed["convert"].input_schema == dict(tools[0].input_schema)
        assert listed["lookup"].annotations is not None
        assert listed["lookup"].annotations.idempotent_hint is True
        converted = await client.call_tool("convert", {"amount": 10, "unit": "km"})
        assert json.loads(converted.content[0].text) == {"amount": 6.214, "unit": "mi"}
        missing = await client.call_tool("lookup", {"code": "XXX"})
        assert missing.is_error
        assert missing.content[0].text == "no airport has the code 'XXX'; try one of OSL, BGO"
        wrong = await client.call_tool("convert", {"amount": 1, "unit": "ly"})
        assert wrong.is_error
        assert wrong.content[0].text == expected_validation(tools, "convert",
                                                            {"amount": 1, "unit": "ly"})
        broken = await client.call_tool("explode", {})
        assert broken.is_error
        assert broken.content[0].text == "Tool 'explode' failed: ValueError: the gauge is broken"


def test_bad_targets_and_options_are_explained(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigError, match="no attribute 'NOPE'"):
        load_tools(TOOLWIRE_TOOLS + ":NOPE")
    with pytest.raises(ConfigError, match="cannot import 'no_such_module_xyz'"):
        load_tools("no_such_module_xyz:TOOLS")
    with pytest.raises(ConfigError, match="not MODULE:ATTR"):
        load_tools("a:b:c")
    assert [t.name for t in load_tools(TOOLWIRE_TOOLS)] == ["convert", "lookup", "explode"]
    assert serve_cli([]) == 2
    assert "nothing to serve" in capsys.readouterr().err
    assert serve_cli(["--workdir", "/nowhere-at-all", "--builtin", "coding"]) == 2
    assert "is not a folder" in capsys.readouterr().err


def test_the_docs_name_only_what_exists() -> None:
    import argparse

    import toolwire.mcp
    from toolwire.mcp.cli import add_serve_arguments

    text = (Path(__file__).parent.parent / "docs" / "mcp.md").read_text(encoding="utf-8")
    named = re.findall(r"^\| `([A-Za-z_][\w.]*)", text, flags=re.MULTILINE)
    assert len(named) >= 12
    unopened = McpConnection(WEATHER)
    for dotted in named:
        head, _, attribute = dotted.partition(".")
        assert head in toolwire.mcp.__all__, dotted
        owner = unopened if head == "McpConnection" else getattr(toolwire.mcp, head)
        assert not attribute or hasattr(owner, attribute), dotted
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    known = {o for action in parser._actions for o in action.option_strings}
    for line in re.findall(r"^toolwire mcp-serve .*$", text, flags=re.MULTILINE):
        for option in re.findall(r"--[\w-]+", line):
            assert option in known, line
