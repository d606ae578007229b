"""Apps built on agent frameworks, with tools of their own, through the proxy to an upstream
of another wire: an openai-agents app (the Responses API) to an Anthropic upstream and a
pydantic-ai app (Anthropic Messages) to a Responses upstream, the emulator playing the
upstream with its checks on. The emulator has each app call its two tools (read a note, then
save one), then answer; the note on disk, the tool results the app sent back and its final
answer show the run went through."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_clients import FAKE_KEY, TwoTools
from proxy_harness import recorded_losses, running_proxy
from toolwire.emulator import Emulator

agents = pytest.importorskip("agents")
pydantic_ai = pytest.importorskip("pydantic_ai")

TASK = "Save note a.txt in capitals as b.txt."


def notes_task(folder: Path) -> TwoTools:
    (folder / "a.txt").write_text("alpha beta\n")
    return TwoTools(calls=[("read_note", {"name": "a.txt"}),
                           ("save_note", {"name": "b.txt", "text": "ALPHA BETA\n"})],
                    answer="Saved b.txt.")


def check(script: TwoTools, folder: Path) -> None:
    assert (folder / "b.txt").read_text() == "ALPHA BETA\n"
    read, saved = script.result_texts()
    assert "alpha beta" in read  # the app's own tool ran on the note the emulator named
    assert "saved" in saved
    assert len(script.requests) == 3


def test_an_openai_agents_app_runs_its_tools_through_the_proxy_to_anthropic(
        tmp_path: Path) -> None:
    from agents import Agent, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)  # no traces sent to OpenAI's servers

    @function_tool
    def read_note(name: str) -> str:
        """Read the note called ``name``."""
        return (tmp_path / name).read_text()

    @function_tool
    def save_note(name: str, text: str) -> str:
        """Save ``text`` as the note called ``name``."""
        (tmp_path / name).write_text(text)
        return f"saved {name}"

    script = notes_task(tmp_path)
    records = tmp_path / "records"
    with Emulator(script) as emu, \
            running_proxy(f"anthropic:m@{emu.base_url}", record=str(records)) as url:
        client = AsyncOpenAI(base_url=url + "/v1", api_key=FAKE_KEY, max_retries=0)
        agent = Agent(name="notes", instructions="Use the tools for notes.",
                      tools=[read_note, save_note],
                      model=OpenAIResponsesModel(model="gpt-5", openai_client=client))
        result = Runner.run_sync(agent, TASK)
        wires = {r.wire for r in emu.received}
        assert len(emu.received) == script.answered  # the emulator's checks refused none
    assert result.final_output == script.answer
    check(script, tmp_path)
    assert wires == {"anthropic-messages"}
    assert "max_tokens_defaulted: max_tokens" in recorded_losses(records)


def test_a_pydantic_ai_app_runs_its_tools_through_the_proxy_to_responses(
        tmp_path: Path) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    script = notes_task(tmp_path)
    with Emulator(script) as emu, \
            running_proxy(f"openai-responses:m@{emu.base_url}") as url:
        model = AnthropicModel("claude-sonnet-4-5",
                               provider=AnthropicProvider(base_url=url, api_key=FAKE_KEY))
        agent = Agent(model, instructions="Use the tools for notes.")

        @agent.tool_plain
        def read_note(name: str) -> str:
            """Read the note called ``name``."""
            return (tmp_path / name).read_text()

        @agent.tool_plain
        def save_note(name: str, text: str) -> str:
            """Save ``text`` as the note called ``name``."""
            (tmp_path / name).write_text(text)
            return f"saved {name}"

        result = agent.run_sync(TASK)
        wires = {r.wire for r in emu.received}
        assert len(emu.received) == script.answered  # the emulator's checks refused none
    assert result.output == script.answer
    check(script, tmp_path)
    assert wires == {"openai-responses"}
