"""The command line's ``toolwire mcp login URL`` and ``toolwire mcp logout URL``.

Owns `add_command`. ``login`` signs in to an MCP server that asks for OAuth (the browser and
a loopback redirect, or ``--no-browser``: the address printed and the redirected address pasted
back) and keeps the tokens in the state directory, where later runs with ``--mcp URL`` find
them; the server's section of the config file gives its settings, the flags override them.
``logout`` deletes what is kept for the server. The OAuth itself is `toolwire.mcp.auth`'s.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import Any

from toolwire.cli import checks, settings
from toolwire.cli.common import UserError

__all__ = ["add_command"]


def _url(text: str) -> str:
    if not text.strip().startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"{text!r} is not an MCP server's URL; give one such as "
                                         "https://mcp.example.com/mcp")
    return text.strip()


def _port(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1 to 65535)")
    return int(text)


def _seconds(text: str) -> float:
    try:
        return settings.seconds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_login(args: argparse.Namespace) -> int:
    checks.need_extra("mcp", "mcp login")
    from toolwire.mcp import McpConnection
    from toolwire.mcp.access import access_map
    from toolwire.mcp.auth import OAuth, stored, token_path

    access: dict[str, Any] = access_map([args.url], settings.mcp_table())[args.url]
    oauth = access.pop("oauth", None) or OAuth()
    changes: dict[str, Any] = {}
    if args.scope:
        changes["scope"] = args.scope
    if args.client_id:
        changes["client_id"] = args.client_id
    if args.client_secret_env:
        secret = os.environ.get(args.client_secret_env)
        if not secret:
            raise UserError(f"--client-secret-env names {args.client_secret_env}, which is "
                            "not set; export it first")
        changes["client_secret"] = secret
    if args.no_browser:
        changes["browser"] = False
    if args.redirect_port:
        changes["redirect_port"] = args.redirect_port
    oauth = dataclasses.replace(oauth, **changes)
    connection = McpConnection(args.url, oauth=oauth, timeout=args.timeout,
                               headers=access.get("headers"))
    with connection:
        count = len(connection.tools)
    if not stored(args.url).get("tokens"):
        print(f"{args.url} did not ask for authorization: nothing to keep ({count} tools)")
        return 0
    print(f"signed in to {args.url} ({count} tools); its tokens are kept in "
          f"{token_path(args.url)}")
    return 0


def cmd_logout(args: argparse.Namespace) -> int:
    checks.need_extra("mcp", "mcp logout")
    from toolwire.mcp.auth import forget

    if forget(args.url):
        print(f"signed out of {args.url}: its tokens and registration are deleted")
    else:
        print(f"nothing was kept for {args.url}", file=sys.stderr)
    return 0


def add_command(sub: Any, epilog: str) -> None:
    """Add ``mcp`` (``login``, ``logout``) to the command line's subcommands."""
    p = sub.add_parser("mcp", epilog=epilog, help="sign in to MCP servers that ask for OAuth",
                       description="Sign in to an MCP server that asks for OAuth, keeping its "
                                   "tokens in the state directory for later --mcp URL runs, "
                                   "or sign out.")
    inner = p.add_subparsers(dest="mcp_command", metavar="{login,logout}", required=True)
    login = inner.add_parser("login", help="sign in to an MCP server (OAuth)",
                             description="Sign in to the MCP server at URL through its "
                                         "authorization server and keep the tokens (mode 0600).")
    login.add_argument("url", type=_url, metavar="URL")
    login.add_argument("--scope", help="the scopes to ask for (default: what the server names)")
    login.add_argument("--client-id", help="a client ID registered with the authorization "
                                           "server beforehand (default: toolwire registers)")
    login.add_argument("--client-secret-env", metavar="VAR",
                       help="the environment variable holding that client's secret")
    login.add_argument("--no-browser", action="store_true",
                       help="print the address instead of opening a browser, and read the "
                            "address the browser ends on from standard input")
    login.add_argument("--redirect-port", type=_port, metavar="PORT",
                       help="the loopback port the browser comes back to (default: any free)")
    login.add_argument("--timeout", type=_seconds, default=600.0, metavar="SECONDS",
                       help="how long signing in may take (default: 600)")
    login.set_defaults(func=cmd_login)
    logout = inner.add_parser("logout", help="forget an MCP server's tokens",
                              description="Delete the tokens and registration kept for the "
                                          "MCP server at URL.")
    logout.add_argument("url", type=_url, metavar="URL")
    logout.set_defaults(func=cmd_logout)
