"""The command line of ``toolwire mcp-serve`` (also ``python -m toolwire.mcp``).

Owns `add_serve_arguments` (the options, for any argparse parser), `serve_from_args` and
`main`. Parsing only: serving is `toolwire.mcp.server.serve_main`'s.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

from toolwire.errors import ConfigError, ToolwireError

__all__ = ["add_serve_arguments", "main", "serve_from_args"]


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port: give 0 to 65535 (0: any "
                                         "free port)")
    return value


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Add mcp-serve's options to ``parser``."""
    parser.add_argument("target", nargs="?", metavar="MODULE:ATTR",
                        help="the tools to serve: a list of tools (or a function returning "
                             "one) in a module or a .py file, like my_tools:TOOLS")
    parser.add_argument("--builtin", choices=["coding"],
                        help="serve a built-in tool set: coding (files, commands and tests, "
                             "confined to --workdir)")
    parser.add_argument("--workdir", metavar="DIR",
                        help="the folder the coding tools work in (default: the current one)")
    parser.add_argument("--test-command", metavar="CMD",
                        help="the project's test command for run_tests (default: pytest)")
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                        help="stdio (default), or streamable HTTP on 127.0.0.1")
    parser.add_argument("--host", default="127.0.0.1",
                        help="the address HTTP listens on (default: 127.0.0.1; any other needs "
                             "--token)")
    parser.add_argument("--token", metavar="TOKEN",
                        help="over HTTP, the bearer token every request must carry "
                             "(Authorization: Bearer TOKEN; default: $TOOLWIRE_MCP_TOKEN)")
    parser.add_argument("--authorization-server", metavar="URL",
                        help="over HTTP, take the OAuth tokens of this authorization server "
                             "(its issuer URL) instead of --token; with --introspection-url and "
                             "--resource-url")
    parser.add_argument("--introspection-url", metavar="URL",
                        help="where that server checks a token (RFC 7662); as client: "
                             "$TOOLWIRE_MCP_INTROSPECTION_ID and _SECRET")
    parser.add_argument("--resource-url", metavar="URL",
                        help="this server's address as clients reach it (its /mcp URL)")
    parser.add_argument("--scope", action="append", default=[], metavar="SCOPE",
                        help="a scope every request's token needs (repeatable)")
    parser.add_argument("--port", type=_port, default=0,
                        help="HTTP port (default: any free port; the URL is printed on stderr)")
    parser.add_argument("--name", help="the server name shown to clients")
    parser.add_argument("--ask-user", action="store_true",
                        help="also serve an ask_user tool whose questions go to the client's "
                             "user (as MCP elicitation); --builtin coding always has it")


def serve_from_args(args: argparse.Namespace) -> int:
    """Run the server the parsed options describe; returns the exit code."""
    from toolwire.mcp.server import serve_main

    token = args.token if args.token is not None else os.environ.get("TOOLWIRE_MCP_TOKEN")
    if token is not None and not _usable_token(token):
        raise ConfigError("the bearer token must be at least 16 visible characters (letters, "
                          "digits, -._~+/=), with no space; make one with: python3 -c "
                          "'import secrets; print(secrets.token_urlsafe(32))'")
    return serve_main(args.target, builtin=args.builtin, workdir=args.workdir,
                      transport=args.transport, port=args.port, host=args.host,
                      test_command=args.test_command, name=args.name,
                      ask_user=args.ask_user, token=token or None,
                      delegation=_delegation(args))


def _delegation(args: argparse.Namespace) -> Any:
    """The authorization server the options name, if they name one."""
    given = [args.authorization_server, args.introspection_url, args.resource_url]
    if not any(given) and not args.scope:
        return None
    if not all(given):
        raise ConfigError("an authorization server needs all three of --authorization-server, "
                          "--introspection-url and --resource-url")
    from toolwire.mcp._delegate import Delegation

    return Delegation(args.authorization_server, args.introspection_url, args.resource_url,
                      tuple(args.scope), os.environ.get("TOOLWIRE_MCP_INTROSPECTION_ID"),
                      os.environ.get("TOOLWIRE_MCP_INTROSPECTION_SECRET"))


def _usable_token(token: str) -> bool:
    """A bearer token (RFC 6750's characters) long enough not to be guessed."""
    return len(token) >= 16 and re.fullmatch(r"[A-Za-z0-9\-._~+/]+=*", token) is not None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m toolwire.mcp",
        description="Serve toolwire tools as an MCP server (the same as toolwire mcp-serve).")
    add_serve_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return serve_from_args(args)
    except ToolwireError as exc:
        print(f"toolwire mcp-serve: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
