"""``toolwire mcp-serve`` serving the whole protocol, used by the official SDK's own client in
both protocol generations: resources (static, templated, text, binary, subscriptions), prompts
(arguments, embedded resources, images), completion, and the tool `Context` (progress, logs,
sampling, elicitation of every form, a resource of the tool's own URI)."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated
from mcp_types import (
    BlobResourceContents,
    CreateMessageResult,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    InputRequiredResult,
    LoggingMessageNotificationParams,
    PromptReference,
    ResourceTemplateReference,
    ResourceUpdatedNotification,
    TextContent,
    TextResourceContents,
)

import toolwire
from fixtures.tiny_png import PNG
from toolwire.errors import ToolError
from toolwire.mcp import (
    Context,
    aopen_servers,
    build_server,
    embedded_resource,
    load_offer,
    prompt,
    resource,
)
from toolwire.mcp._results import to_mcp_block
from toolwire.mcp.cli import main as serve_cli
from toolwire.mcp.offers import complete_value

FIXTURES = Path(__file__).parent / "fixtures"
SRC = str(Path(__file__).parent.parent / "src")
GENERATIONS = ["legacy", "2026-07-28"]  # the initialize handshake, and the newer protocol


def offer() -> tuple[list[Any], list[Any], list[Any]]:
    return load_offer(f"{FIXTURES / 'mcp_conformance.py'}:OFFER")


def served(**extra: Any) -> Any:
    tools, resources, prompts = offer()
    return build_server([*tools, *extra.get("tools", [])],
                        resources=[*resources, *extra.get("resources", [])], prompts=prompts)


@pytest.mark.parametrize("mode", GENERATIONS)
async def test_resources_static_and_templated_text_and_binary(mode: str) -> None:
    async with Client(served(), mode=mode) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        templates = (await client.list_resource_templates()).resource_templates
        text = (await client.read_resource("test://static-text")).contents[0]
        binary = (await client.read_resource("test://static-binary")).contents[0]
        made = (await client.read_resource("test://template/123/data")).contents[0]
        with pytest.raises(MCPError) as missing:
            await client.read_resource("test://nothing-here")
        with pytest.raises(MCPError) as climbing:
            await client.read_resource("test://template/%2E%2E/data")
    assert set(listed) == {"test://static-text", "test://static-binary", "test://watched-resource"}
    assert listed["test://static-binary"].mime_type == "image/png"
    assert [t.uri_template for t in templates] == ["test://template/{id}/data"]
    assert isinstance(text, TextResourceContents) and text.mime_type == "text/plain"
    assert text.text == "This is the content of the static text resource."
    assert isinstance(binary, BlobResourceContents) and base64.b64decode(binary.blob) == PNG
    assert isinstance(made, TextResourceContents) and made.mime_type == "application/json"
    assert json.loads(made.text) == {"id": "123", "templateTest": True, "data": "Data for ID: 123"}
    assert str(made.uri) == "test://template/123/data"
    assert missing.value.error.code == -32602 and "test://nothing-here" in str(missing.value)
    assert climbing.value.error.code == -32602  # a part may not climb out of a path


@pytest.mark.parametrize("mode", GENERATIONS)
async def test_prompts_with_arguments_embedded_resources_and_images(mode: str) -> None:
    async with Client(served(), mode=mode) as client:
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
        simple = await client.get_prompt("test_simple_prompt")
        argued = await client.get_prompt("test_prompt_with_arguments",
                                         {"arg1": "hello", "arg2": "world"})
        embedded = await client.get_prompt("test_prompt_with_embedded_resource",
                                           {"resourceUri": "test://example-resource"})
        pictured = await client.get_prompt("test_prompt_with_image")
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("test_prompt_with_arguments", {"arg1": "only"})
    assert [(a.name, a.required) for a in listed["test_prompt_with_arguments"].arguments or []] \
        == [("arg1", True), ("arg2", True)]
    assert listed["test_simple_prompt"].description == "A prompt without arguments."
    assert simple.messages[0].role == "user"
    assert simple.messages[0].content == TextContent(text="This is a simple prompt for testing.")
    assert isinstance(argued.messages[0].content, TextContent)
    assert argued.messages[0].content.text == "Prompt with arguments: arg1='hello', arg2='world'"
    block = embedded.messages[0].content
    assert isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents)
    assert str(block.resource.uri) == "test://example-resource"
    assert block.resource.text == "Embedded resource content for testing."
    image = pictured.messages[0].content
    assert isinstance(image, ImageContent) and base64.b64decode(image.data) == PNG
    assert "arg2" in str(missing.value)


@pytest.mark.parametrize("mode", GENERATIONS)
async def test_completion_of_prompt_arguments_and_template_parts(mode: str) -> None:
    async def cities(typed: str, others: Any) -> list[str]:
        return [c for c in ("Bergen", "Berlin", "Oslo") if c.lower().startswith(typed.lower())]

    @resource("weather://{city}/today", complete={"city": cities})
    def weather(city: str) -> str:
        return f"Rain in {city}"

    async with Client(served(resources=[weather]), mode=mode) as client:
        prompted = await client.complete(PromptReference(name="test_prompt_with_arguments"),
                                         {"name": "arg1", "value": "par"})
        templated = await client.complete(ResourceTemplateReference(uri="weather://{city}/today"),
                                          {"name": "city", "value": "be"})
        nothing = await client.complete(PromptReference(name="test_simple_prompt"),
                                        {"name": "x", "value": ""})
    assert prompted.completion.values == ["paris", "park", "party"]
    assert templated.completion.values == ["Bergen", "Berlin"]
    assert nothing.completion.values == []


@toolwire.tool
async def build(steps: int, ctx: Context) -> str:
    """Builds in steps, saying how far it got."""
    for step in range(1, steps + 1):
        await ctx.progress(step, steps, f"step {step} of {steps}")
        await ctx.log("debug", {"step": step})
    await ctx.log("warning", "built")
    return "built"


@pytest.mark.parametrize("mode", GENERATIONS)
async def test_a_tool_reports_progress_and_logs_at_the_level_asked(mode: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    logged: list[LoggingMessageNotificationParams] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async def log(params: LoggingMessageNotificationParams) -> None:
        logged.append(params)

    async with Client(served(tools=[build]), mode=mode, logging_callback=log,
                      log_level="info") as client:
        if mode == "legacy":
            await client.set_logging_level("info")
        result = await client.call_tool("build", {"steps": 2}, progress_callback=progress)
    assert result.content[0].text == "built"  # type: ignore[union-attr]
    assert seen == [(1, 2, "step 1 of 2"), (2, 2, "step 2 of 2")]
    assert [(m.level, m.data) for m in logged] == [("warning", "built")]  # debug is below info


def test_the_context_argument_is_not_part_of_the_schema() -> None:
    def maybe(n: int, ctx: Context | None = None) -> bool:
        return isinstance(ctx, Context) and not ctx.served

    optional = toolwire.Tool.from_function(maybe)
    assert build.input_schema["properties"].keys() == {"steps"}
    assert build.input_schema["required"] == ["steps"]
    assert optional.input_schema["properties"].keys() == {"n"}
    assert optional.call({"n": 1}) is True  # filled in, even where a default is given


@toolwire.tool
async def interview(ctx: Context) -> str:
    """Asks twice, then has the client's model sum it up."""
    first = await ctx.elicit("Your name?", {"type": "object", "properties": {
        "name": {"type": "string", "default": "Ann"}}})
    second = await ctx.elicit("Your plan?", {"type": "object", "properties": {
        "plan": {"type": "string", "enum": ["basic", "pro"], "default": "basic"},
        "extras": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"},
                                                        {"const": "b", "title": "B"}]}}}})
    summary = await ctx.sample(f"Sum up: {first.content} {second.content}", max_tokens=50)
    return f"{first.action}/{second.action}: {summary}"


@pytest.mark.parametrize("mode", GENERATIONS)
async def test_a_tool_asks_the_user_twice_and_samples_the_clients_model(mode: str) -> None:
    asked: list[Any] = []
    sampled: list[Any] = []

    async def elicit(context: Any, params: Any) -> ElicitResult:
        asked.append(params)
        if params.message == "Your name?":
            return ElicitResult(action="accept", content={"name": "Bo"})
        return ElicitResult(action="decline")

    async def sample(context: Any, params: Any) -> CreateMessageResult:
        sampled.append(params)
        return CreateMessageResult(role="assistant", model="m",
                                   content=TextContent(text="Bo wants nothing"))

    async with Client(served(tools=[interview]), mode=mode, elicitation_callback=elicit,
                      sampling_callback=sample) as client:
        result = await client.call_tool("interview", {})
    assert result.content[0].text == "accept/decline: Bo wants nothing"  # type: ignore[union-attr]
    assert [a.message for a in asked] == ["Your name?", "Your plan?"]
    plan = asked[1].requested_schema["properties"]["plan"]
    assert plan == {"type": "string", "enum": ["basic", "pro"], "default": "basic"}
    assert asked[0].requested_schema["properties"]["name"]["default"] == "Ann"
    assert len(sampled) == 1 and sampled[0].max_tokens == 50
    assert "{'name': 'Bo'}" in sampled[0].messages[0].content.text


@pytest.mark.parametrize("mode", GENERATIONS)
async def test_asking_a_client_that_cannot_answer_is_an_error_result(mode: str) -> None:
    async with Client(served(tools=[interview]), mode=mode) as client:
        result = await client.call_tool("interview", {})
    assert result.is_error


async def test_a_tool_outside_a_server_gets_a_context_that_cannot_ask() -> None:
    assert await build.acall({"steps": 1}) == "built"  # progress and logs go nowhere
    with pytest.raises(ToolError, match="not running under an MCP server"):
        await interview.acall({})


@toolwire.tool
def notes() -> Any:
    """A tool answering with resources of its own URIs."""
    return ["two notes:", embedded_resource("notes://today", "Buy milk"),
            embedded_resource("notes://data.bin", b"\x00\x01", "application/octet-stream")]


@pytest.mark.parametrize("mode", GENERATIONS)
async def test_a_tool_returns_text_and_binary_resources_of_its_own_uri(mode: str) -> None:
    async with Client(served(tools=[notes]), mode=mode) as client:
        result = await client.call_tool("notes", {})
    _, text, binary = result.content
    assert isinstance(text, EmbeddedResource) and isinstance(text.resource, TextResourceContents)
    assert (str(text.resource.uri), text.resource.text) == ("notes://today", "Buy milk")
    assert text.resource.mime_type == "text/plain"
    assert isinstance(binary, EmbeddedResource)
    assert isinstance(binary.resource, BlobResourceContents)
    assert str(binary.resource.uri) == "notes://data.bin"
    assert base64.b64decode(binary.resource.blob) == b"\x00\x01"


@toolwire.tool
async def touch(uri: str, ctx: Context) -> str:
    """Says a resource changed."""
    await ctx.resource_updated(uri)
    return "touched"


async def test_subscribers_hear_of_updates_until_they_unsubscribe_handshake() -> None:
    updated: list[str] = []

    async def messages(message: Any) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            updated.append(str(message.params.uri))

    async with Client(served(tools=[touch]), mode="legacy", message_handler=messages) as client:
        await client.subscribe_resource("test://watched-resource")
        await client.call_tool("touch", {"uri": "test://watched-resource"})
        await client.call_tool("touch", {"uri": "test://static-text"})  # not subscribed
        await client.unsubscribe_resource("test://watched-resource")
        await client.call_tool("touch", {"uri": "test://watched-resource"})
        await anyio.sleep(0.1)
    assert updated == ["test://watched-resource"]


async def test_listeners_hear_of_updates_on_subscriptions_listen() -> None:
    async with (Client(served(tools=[touch]), mode="2026-07-28") as client,
                client.listen(resource_subscriptions=["test://watched-resource"]) as events):
        await client.call_tool("touch", {"uri": "test://static-text"})
        await client.call_tool("touch", {"uri": "test://watched-resource"})
        with anyio.fail_after(10):
            event = await events.__anext__()
    assert event == ResourceUpdated(uri="test://watched-resource")


async def test_capabilities_follow_what_is_served() -> None:
    async with Client(served(), mode="legacy") as client:
        full = client.server_capabilities
    async with Client(build_server([build]), mode="legacy") as client:
        tools_only = client.server_capabilities
    assert full.resources is not None and full.resources.subscribe
    assert full.prompts is not None and full.completions is not None
    assert full.logging is not None and tools_only.logging is not None
    assert tools_only.resources is None and tools_only.prompts is None
    async with Client(served()) as client:  # discovers, and takes the newest protocol
        assert client.protocol_version == "2026-07-28"
        modern = client.server_capabilities
    async with Client(build_server([build])) as client:
        modern_tools_only = client.server_capabilities
    assert modern.resources is not None and modern.resources.subscribe  # subscriptions/listen
    assert modern_tools_only.tools is not None and not modern_tools_only.tools.list_changed


def test_declarations_that_cannot_work_are_explained() -> None:
    def part(x: str) -> str:
        return x

    with pytest.raises(toolwire.errors.ConfigError, match="not parts of its URI"):
        resource("a://{x}", complete={"y": ["1"]})(part)
    with pytest.raises(toolwire.errors.ConfigError, match="not its arguments"):
        prompt(complete={"nope": []})(part)
    with pytest.raises(toolwire.errors.ConfigError, match="name for lambda"):
        resource("a://{x}")(lambda x: x)
    with pytest.raises(toolwire.errors.ConfigError, match="needs a function"):
        resource("a://{x}", "text")
    with pytest.raises(toolwire.errors.ConfigError, match="URIs must be unique"):
        build_server([build], resources=[resource("a://x", "1"), resource("a://x", "2")])


@given(text=st.text(), data=st.binary(), path=st.from_regex(r"[a-z0-9/._-]{1,20}", fullmatch=True))
def test_embedded_resources_keep_their_uri_and_content(text: str, data: bytes, path: str) -> None:
    uri = f"notes://{path}"
    texted = to_mcp_block(embedded_resource(uri, text))
    binary = to_mcp_block(embedded_resource(uri, data))
    assert isinstance(texted, EmbeddedResource) and isinstance(binary, EmbeddedResource)
    assert isinstance(texted.resource, TextResourceContents)
    assert (str(texted.resource.uri), texted.resource.text) == (uri, text)
    assert isinstance(binary.resource, BlobResourceContents)
    assert base64.b64decode(binary.resource.blob) == data


@given(values=st.lists(st.text(max_size=5), max_size=150), typed=st.text(max_size=2))
def test_completion_from_a_list_offers_what_starts_with_the_typed_text(values: list[str],
                                                                       typed: str) -> None:
    offered = anyio.run(complete_value, values, typed, {})
    assert offered == [v for v in values if v.startswith(typed)][:100]


async def test_a_retry_must_answer_what_was_asked_with_the_state_it_was_given() -> None:
    """2026-07-28: an answer of the wrong kind is asked for again; forged state is refused."""
    async def elicit(context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": "Bo"})

    sampled = CreateMessageResult(role="assistant", model="m", content=TextContent(text="hi"))
    async with Client(served(tools=[interview]), mode="2026-07-28",
                      elicitation_callback=elicit) as client:
        session = client.session
        first = await session.call_tool("interview", {}, allow_input_required=True)
        assert isinstance(first, InputRequiredResult)
        [key] = first.input_requests
        wrong = await session.call_tool("interview", {}, input_responses={key: sampled},
                                        request_state=first.request_state,
                                        allow_input_required=True)
        answered = await session.call_tool(
            "interview", {}, input_responses={key: ElicitResult(action="accept",
                                                                content={"name": "Bo"})},
            request_state=first.request_state, allow_input_required=True)
        with pytest.raises(MCPError) as forged:
            await session.call_tool("interview", {}, input_responses={key: sampled},
                                    request_state=(first.request_state or "") + "x",
                                    allow_input_required=True)
    assert isinstance(wrong, InputRequiredResult) and list(wrong.input_requests) == [key]
    assert isinstance(answered, InputRequiredResult)  # the second question, under a new key
    assert list(answered.input_requests) != [key] and answered.request_state
    assert forged.value.error.code == -32602


async def test_mcp_serve_serves_a_modules_resources_and_prompts_over_stdio() -> None:
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "toolwire.mcp", f"{FIXTURES / 'mcp_conformance.py'}:OFFER"],
        env={"PYTHONPATH": SRC})
    async with Client(stdio_client(params, errlog=sys.__stderr__), mode="legacy") as client:
        templates = (await client.list_resource_templates()).resource_templates
        made = (await client.read_resource("test://template/7/data")).contents[0]
        prompts = [p.name for p in (await client.list_prompts()).prompts]
    assert [t.uri_template for t in templates] == ["test://template/{id}/data"]
    assert isinstance(made, TextResourceContents) and '"id": "7"' in made.text
    assert "test_prompt_with_image" in prompts


def test_a_module_whose_resources_clash_is_explained(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "clash.py"
    module.write_text("from toolwire.mcp import resource\n"
                      "OFFER = [resource('a://x', 'one'), resource('a://x', 'two')]\n")
    assert serve_cli([f"{module}:OFFER"]) == 2
    assert "two resources have the URI 'a://x'" in capsys.readouterr().err


async def test_toolwires_own_client_reads_what_mcp_serve_offers() -> None:
    """Both sides of toolwire: the read_resource tool of an MCP client over mcp-serve."""
    command = f"{sys.executable} -m toolwire.mcp {FIXTURES / 'mcp_conformance.py'}:OFFER"
    servers = await aopen_servers([command], resources=True, env={"PYTHONPATH": SRC})
    try:
        [reader] = [t for t in servers.tools if t.name == "read_resource"]
        text = await reader.acall({"uri": "test://static-text"})
        made = await reader.acall({"uri": "test://template/5/data"})
    finally:
        servers.close()
    assert "test://template/{id}/data" in reader.description
    assert text == "This is the content of the static text resource."
    assert json.loads(made)["data"] == "Data for ID: 5"
