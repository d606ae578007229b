"""The agent commands read their options once, into a typed `AgentOptions`, with each option a
command has no flag for given its value explicitly."""

from __future__ import annotations

import dataclasses

import pytest

from toolwire.cli.app import build_parser
from toolwire.cli.options import NOT_TAKEN, AgentOptions

ARGV = {
    "run": ["run", "fix it"],
    "resume": ["resume", "run.jsonl"],
    "chat": ["chat"],
    "demo": ["demo"],
}

LATER = {"protect", "mcp_access", "mcp_servers", "command", "model_source"}
"""Fields the command fills in as it goes, or that are not flags."""


@pytest.mark.parametrize("command", sorted(ARGV))
def test_every_option_is_a_flag_of_the_command_or_defaulted_for_it(command: str) -> None:
    args = build_parser().parse_args(ARGV[command])
    flags = set(vars(args))
    wanted = {f.name for f in dataclasses.fields(AgentOptions)} - LATER
    missing = wanted - flags
    assert missing == set(NOT_TAKEN[command]), (command, missing)
    assert not (flags & set(NOT_TAKEN[command])), "a default for an option the command has"


def test_options_read_from_flags_are_typed() -> None:
    args = build_parser().parse_args(
        ["run", "x", "--max-turns", "3", "--no-stream", "--mcp", "srv", "--max-seconds", "2.5",
         "--allow-network", "--json", "--pass-env", "HOME"])
    opts = AgentOptions.read(args)
    assert (opts.command, opts.max_turns, opts.stream, opts.mcp, opts.max_seconds) == (
        "run", 3, False, ["srv"], 2.5)
    assert opts.allow_network is True and opts.json is True and opts.pass_env == ["HOME"]
    assert opts.mcp_servers_given == ["srv"] and opts.protect == [] and opts.mcp_servers is None


def test_the_demo_has_its_missing_options_set() -> None:
    opts = AgentOptions.read(build_parser().parse_args(["demo", "recover"]))
    assert (opts.tools, opts.approve, opts.system, opts.json, opts.max_seconds) == (
        None, None, None, False, None)
    assert opts.max_turns == 20 and opts.mcp == [] and opts.mcp_header == []

