"""The options of the commands that run the agent on the terminal (``run``, ``resume``,
``chat``, ``demo``): their flags, and `AgentOptions`, the typed values read once from a
command's parsed arguments.

A command settles its arguments first (`toolwire.cli.settings.apply` fills what the
environment and the config file give, `toolwire.cli.trust.from_record` what a resumed run's log
gives); `AgentOptions.read` then reads them in one place, with each option a command does not
take given its value here (`NOT_TAKEN`), so that the code that builds and runs the agent reads
typed attributes and never asks whether a command has an option.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolwire.cli import chains, checks, settings
from toolwire.cli.otel import add_otel_option

if TYPE_CHECKING:
    from toolwire.tools.sandbox import SandboxMode

NOT_TAKEN: dict[str, dict[str, Any]] = {
    "run": {},
    "chat": {},
    "resume": {"system": None, "temperature": None},
    "demo": {"tools": None, "approve": None, "reasoning": None, "system": None,
             "temperature": None, "json": False, "verbose": False, "mcp_header": [],
             "mcp_resources": False, "mcp_instructions": False, "max_seconds": None},
}
"""By command, the value of each option it has no flag for; an option no command lacks is
not listed (`AgentOptions.read` fails loudly on an option neither gives)."""


@dataclass(slots=True)
class AgentOptions:
    """What a command that runs the agent was asked for, read once by `read`.

    ``protect`` (the records bubblewrap binds read-only, `toolwire.cli.trust.record_place`),
    ``mcp_access`` (what the MCP servers given by URL are sent) and ``mcp_servers`` (the MCP
    servers the agent's tools come from, opened when the agent is built and closed by the
    command) are filled in as the command goes.
    """

    command: str
    model: str | None
    model_source: str | None
    """Where the model id came from, as messages name it (``--model``, the config file...)."""
    tools: str | None
    """``coding`` or ``none``; None until the command decides (``coding`` by default)."""
    approve: str | None
    """``ask``, ``auto``, ``never`` or ``defer``; None until the settings are applied."""
    sandbox: SandboxMode | None
    allow_network: bool
    pass_env: list[str]
    system: str | None
    temperature: float | None
    reasoning: str | None
    max_turns: int
    max_seconds: float | None
    """The run's time limit in seconds (``--max-seconds`` or its setting), None for none."""
    stream: bool | None
    """``--stream`` or ``--no-stream``; None when neither was given."""
    json: bool
    verbose: bool
    color: str | None
    no_color: bool
    mcp: list[str]
    mcp_deferred: list[str]
    mcp_header: list[str]
    mcp_resources: bool
    mcp_instructions: bool
    protect: list[Path] = field(default_factory=list)
    mcp_access: dict[str, Any] | None = None
    mcp_servers: Any = None

    @classmethod
    def read(cls, args: argparse.Namespace) -> AgentOptions:
        """The options of ``args``, parsed and settled, for its command (``args.command``)."""
        given = {"model_source": None, **NOT_TAKEN[args.command], **vars(args)}
        max_seconds = given["max_seconds"]
        return cls(
            command=args.command, model=given["model"], model_source=given["model_source"],
            tools=given["tools"], approve=given["approve"], sandbox=given["sandbox"],
            allow_network=bool(given["allow_network"]), pass_env=list(given["pass_env"]),
            system=given["system"], temperature=given["temperature"],
            reasoning=given["reasoning"], max_turns=given["max_turns"],
            max_seconds=None if max_seconds is None else settings.seconds(str(max_seconds)),
            stream=given["stream"], json=bool(given["json"]), verbose=bool(given["verbose"]),
            color=given["color"], no_color=bool(given["no_color"]), mcp=list(given["mcp"]),
            mcp_deferred=list(given["mcp_deferred"]), mcp_header=list(given["mcp_header"]),
            mcp_resources=bool(given["mcp_resources"]),
            mcp_instructions=bool(given["mcp_instructions"]),
        )

    @property
    def model_id(self) -> str:
        """The model id of a command whose settings are applied (`settings.apply` refuses a
        command that takes a model and has none)."""
        assert self.model, "the command's settings were not applied"
        return self.model

    @property
    def mcp_servers_given(self) -> list[str]:
        """Every MCP server given, ``--mcp`` then ``--mcp-deferred``."""
        return [*self.mcp, *self.mcp_deferred]


def sandbox_options(p: argparse.ArgumentParser) -> None:
    """The options that say where run_command and run_tests run."""
    from toolwire.tools.sandbox import SANDBOX_MODES

    p.add_argument("--sandbox", choices=SANDBOX_MODES,
                   help="where run_command and run_tests run (Linux): auto (default: a "
                        "bubblewrap sandbox where it works, else Landlock where the kernel has "
                        "it, else unconfined, said at start), required (bubblewrap or refuse "
                        "to start), landlock (Landlock or refuse to start) or off; default: "
                        "TOOLWIRE_SANDBOX, the config file, or auto")
    p.add_argument("--allow-network", action="store_true",
                   help="let sandboxed commands reach the network (default: no network)")
    p.add_argument("--pass-env", action="append", default=[], metavar="NAME",
                   help="give commands this variable of your environment (repeatable; "
                        "otherwise only PATH, LANG and a few others, never keys or tokens)")


def stream_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stream", action=argparse.BooleanOptionalAction,
                   help="show the model's text as it arrives (default: on when the output "
                        "is a terminal; --no-stream waits for each whole reply)")


def color_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--color", choices=("auto", "always", "never"),
                   help="colour: auto (on a terminal; the default), always or never; default: "
                        "TOOLWIRE_COLOR or the config file (NO_COLOR set: never)")
    p.add_argument("--no-color", action="store_true", help="no colour (--color never)")


def agent_options(p: argparse.ArgumentParser) -> None:
    """The options of every command that runs the agent on the terminal."""
    p.add_argument("--workdir", metavar="DIR",
                   help="the folder the tools work in (default: the current folder; "
                        "resume: the run's own)")
    p.add_argument("--tools", choices=("coding", "none"),
                   help="built-in tools: coding (files, commands, tests, ask_user; the "
                        "default) or none; resume: the run's own")
    p.add_argument("--approve", choices=("ask", "auto", "never", "defer"),
                   help="run_command, write_file, edit_file and MCP tools: ask first "
                        "(default), allow "
                        "(auto), refuse (never), or stop the run to wait for decisions "
                        "given to resume (defer); default: TOOLWIRE_APPROVE, the config "
                        "file, or ask")
    p.add_argument("--max-turns", type=checks.count, default=50, metavar="N",
                   help="stop after N model calls, at least 1 (default 50)")
    p.add_argument("--reasoning", choices=("low", "medium", "high", "off"),
                   help="how much the model reasons before it answers, as each provider takes "
                        "it (thinking budget, reasoning effort, think); not with --temperature "
                        "(default: the provider's). GPT-5 models that refuse a reasoning "
                        "effort with tools on Chat Completions stop before sending: give the "
                        "model as openai-responses:MODEL instead")
    chains.fallback_options(p)
    sandbox_options(p)
    stream_option(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print every note of the run, not a one-line summary")
    color_options(p)
    p.add_argument("--mcp", action="append", metavar="SERVER", default=[],
                   help="also use the tools of an MCP server: a command line such as "
                        "'python -m some_server', or a URL such as "
                        "http://127.0.0.1:PORT/mcp (repeatable; needs toolwire[mcp])")
    p.add_argument("--mcp-deferred", action="append", metavar="SERVER", default=[],
                   help="an MCP server as --mcp gives one, with all its tools deferred: "
                        "the model finds them with search_tools (repeatable)")
    p.add_argument("--mcp-header", action="append", metavar="'NAME: VALUE'", default=[],
                   help="a header sent to every MCP server given by URL, such as "
                        "'Authorization: Bearer TOKEN' (repeatable; per server: the config "
                        "file's [mcp.servers.\"URL\"] section, see docs/mcp.md)")
    p.add_argument("--mcp-resources", action="store_true",
                   help="add a read_resource tool for the resources the MCP servers offer")
    p.add_argument("--mcp-instructions", action="store_true",
                   help="add what the MCP servers say about using them to the system prompt")
    limit_options(p)
    add_otel_option(p)


def limit_options(p: argparse.ArgumentParser) -> None:
    """The run's time limit and the bounds on what model servers send (`settings.limits`)."""
    p.add_argument("--max-seconds", type=settings.flag_type("max_seconds"), metavar="S",
                   help="end the run after S seconds, a model call or tool still running "
                        "included (stop time_limit; default: TOOLWIRE_MAX_SECONDS, the config "
                        "file, or none)")
    p.add_argument("--idle-seconds", type=settings.flag_type("idle_seconds"), metavar="S",
                   help="end a streamed reply that sends no event for S seconds, keep-alives "
                        "not counted (default 300)")
    for name, what, default in (("max-body", "the most a model server may send for one reply",
                                 "64MiB"),
                                ("max-decoded", "the most one reply may inflate to", "256MiB"),
                                ("max-line", "the longest line of a streamed reply", "16MiB"),
                                ("max-error-body", "the most a model server may send with an "
                                 "error status", "1MiB")):
        p.add_argument(f"--{name}", type=settings.flag_type(name.replace("-", "_")),
                       metavar="SIZE", help=f"{what}: bytes, or a number with KiB, MiB or GiB "
                       f"(stop too_large beyond it; default {default})")


__all__ = ["NOT_TAKEN", "AgentOptions", "agent_options", "color_options", "limit_options",
           "sandbox_options", "stream_option"]
