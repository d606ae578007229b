"""The coding tool set: files, commands and tests in one workspace, described for a model.

Owns `coding_tools`, `NEEDS_APPROVAL` (the tools that change things, which the command line
asks about before running), `needs_approval` (those, and ``run_tests`` too when commands are
not confined: it runs whatever test code the workspace holds) and `describe_call` (exactly what
a call will run, for an approval prompt). Descriptions say what each tool does, when to use it
and when not, and what each parameter means: they are part of the prompt.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

from toolwire.escapes import visible
from toolwire.schema.tool import Tool
from toolwire.tools import files, shell
from toolwire.tools.ask_user import Answerer, ask_user
from toolwire.tools.journal import FileJournal
from toolwire.tools.sandbox import Sandbox, SandboxMode

NEEDS_APPROVAL = ("run_command", "write_file", "edit_file")
COMMAND_TOOLS = ("run_command", "run_tests")


def needs_approval(sandbox: Sandbox) -> tuple[str, ...]:
    """The coding tools to ask about: `NEEDS_APPROVAL`, and ``run_tests`` when unconfined."""
    return NEEDS_APPROVAL if sandbox.confined else (*NEEDS_APPROVAL, "run_tests")


def network_for(allow_network: bool | Iterable[str], name: str) -> bool:
    return allow_network if isinstance(allow_network, bool) else name in set(allow_network)


def describe_call(name: str, arguments: Mapping[str, Any], *, sandbox: Sandbox,
                  test_command: str | None = None,
                  allow_network: bool | Iterable[str] = False) -> str:
    """What a coding tool call will do, in full, for a person deciding whether to allow it."""
    if name in COMMAND_TOOLS:
        command = (str(arguments.get("command", "")) if name == "run_command"
                   else test_command or shell.DEFAULT_TEST_COMMAND)
        where = sandbox.describe(network_for(allow_network, name))
        # every control character escaped: a carriage return cannot hide part of the command
        return (f"{name} will run this shell command in the workspace:\n    {visible(command)}"
                f"\n({where})")
    if name == "write_file":
        content = str(arguments.get("content", ""))
        return (f"write_file will write {len(content.encode())} bytes to "
                f"{arguments.get('path')!r}:\n{content[:2000]}")
    if name == "edit_file":
        return (f"edit_file will replace, in {arguments.get('path')!r}:\n{arguments.get('old')}"
                f"\nwith:\n{arguments.get('new')}")
    shown = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
    return f"{name}({shown})"

_PATH = {"type": "string",
         "description": "A path relative to the workspace folder, like 'src/app.py'."}


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}


def coding_tools(
    workdir: str | os.PathLike[str],
    *,
    test_command: str | None = None,
    answer: Answerer | None = None,
    include_ask_user: bool = True,
    sandbox: Sandbox | SandboxMode = "auto",
    allow_network: bool | Iterable[str] = False,
    max_media_bytes: int = files.MAX_MEDIA_BYTES,
    journal: FileJournal | None = None,
) -> list[Tool]:
    """``read_file``, ``list_files``, ``edit_file``, ``write_file``, ``run_command``,
    ``run_tests`` and ``ask_user``, working in ``workdir``.

    The file tools never leave ``workdir``. ``run_command`` and ``run_tests`` run in
    ``sandbox`` (a `Sandbox`, or its mode: see `toolwire.tools.sandbox` for what it confines
    and where); ``allow_network`` lets them (True), or the named ones, reach the network.
    ``test_command`` is the project's test command (default: pytest with this Python).
    ``answer`` answers ``ask_user`` (none: the tool says no user is available).
    ``read_file`` returns an image or a PDF (known by its first bytes) as media, up to
    ``max_media_bytes``; a larger one is a tool error giving its size and the cap.
    ``journal`` (a `FileJournal` of the same folder; default: a new one) is told of every file
    the file tools are about to read or change: it reports each file's first hash to the run
    and keeps what a chat turn changed, to undo it.
    """
    journal = journal or FileJournal(files.Workspace(workdir))
    ws = journal.ws
    box = sandbox if isinstance(sandbox, Sandbox) else Sandbox(sandbox)

    def bind(fn: Callable[..., Any], changes: bool | None = None) -> Callable[..., Any]:
        if changes is None:
            return partial(fn, ws)

        def watched(path: str, *args: Any, **kwargs: Any) -> Any:
            journal.before(path, changes=changes)
            return fn(ws, path, *args, **kwargs)

        return watched

    tools = [
        Tool(
            name="read_file",
            description=(
                "Read a text file in the workspace. Lines come numbered (the numbers and the tab "
                "after them are not part of the file). Use it before editing a file; for long "
                "files read a window with offset and limit. An image (PNG, JPEG, GIF, WebP) or "
                "a PDF comes back whole, for you to look at. Not for folders: use list_files."),
            input_schema=_obj({
                "path": _PATH,
                "offset": {"type": "integer", "minimum": 1,
                           "description": "First line to read, counting from 1. Default 1."},
                "limit": {"type": "integer", "minimum": 1,
                          "description": "How many lines to read. Default 2000."},
            }, ["path"]),
            fn=partial(bind(files.read_file, changes=False), max_media_bytes=max_media_bytes),
            read_only=True, idempotent=True,
        ),
        Tool(
            name="list_files",
            description=(
                "List the files under a folder of the workspace, recursively, one path per "
                "line (caches and .git are skipped). Use it to find your way around a project."),
            input_schema=_obj({"path": {**_PATH, "description":
                                        "Folder to list, relative to the workspace. "
                                        "Default '.', the whole workspace."}}, []),
            fn=bind(files.list_files),
            read_only=True, idempotent=True,
        ),
        Tool(
            name="edit_file",
            description=(
                "Replace one piece of text in an existing file. `old` must occur exactly once in "
                "the file: copy it from read_file without the line numbers, with enough "
                "surrounding lines to be unique. If it occurs zero or several times nothing "
                "changes and the error says how many times and where. To create a file or "
                "rewrite a whole one, use write_file."),
            input_schema=_obj({
                "path": _PATH,
                "old": {"type": "string", "description": "The exact text to replace."},
                "new": {"type": "string", "description": "The text to put in its place."},
            }, ["path", "old", "new"]),
            fn=bind(files.edit_file, changes=True),
        ),
        Tool(
            name="write_file",
            description=(
                "Create a file, or replace a file's whole content, in the workspace. Folders are "
                "created as needed. For a small change to an existing file use edit_file."),
            input_schema=_obj({
                "path": _PATH,
                "content": {"type": "string", "description": "The complete new content."},
            }, ["path", "content"]),
            fn=bind(files.write_file, changes=True),
        ),
        Tool(
            name="run_command",
            description=(
                "Run a shell command with the workspace as its working folder and return its "
                "exit code and output (long output is cut in the middle). Use it to inspect or "
                "build; to run the project's tests prefer run_tests."),
            input_schema=_obj({
                "command": {"type": "string", "description": "The shell command line."},
                "timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 600,
                            "description": "Seconds before the command is stopped. Default 60."},
            }, ["command"]),
            fn=partial(shell.run_command, ws, box,
                       network=network_for(allow_network, "run_command")),
        ),
        Tool(
            name="run_tests",
            description=(
                "Run the project's tests and return the exit code and the test runner's "
                "output. Use it to see what fails and to check a fix. Takes no arguments."),
            input_schema=_obj({}, []),
            fn=partial(shell.run_tests, ws, box, test_command,
                       network=network_for(allow_network, "run_tests")),
        ),
    ]
    if include_ask_user:
        tools.append(ask_user(answer))
    return tools


__all__ = ["COMMAND_TOOLS", "NEEDS_APPROVAL", "coding_tools", "describe_call", "needs_approval",
           "network_for"]
