"""The coding tool set: files, commands and tests in one workspace, described for a model.

Owns `coding_tools` and `NEEDS_APPROVAL` (the tools that change things, which the command line
asks about before running). Descriptions say what each tool does, when to use it and when not,
and what each parameter means: they are part of the prompt.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import Any

from toolwire.schema.tool import Tool
from toolwire.tools import files, shell
from toolwire.tools.ask_user import Answerer, ask_user

NEEDS_APPROVAL = ("run_command", "write_file", "edit_file")

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
) -> list[Tool]:
    """``read_file``, ``list_files``, ``edit_file``, ``write_file``, ``run_command``,
    ``run_tests`` and ``ask_user``, all confined to ``workdir``.

    ``test_command`` is the project's test command (default: pytest with this Python).
    ``answer`` answers ``ask_user`` (none: the tool says no user is available).
    """
    ws = files.Workspace(workdir)

    def bind(fn: Callable[..., str]) -> Callable[..., str]:
        return partial(fn, ws)

    tools = [
        Tool(
            name="read_file",
            description=(
                "Read a text file in the workspace. Lines come numbered (the numbers and the tab "
                "after them are not part of the file). Use it before editing a file; for long "
                "files read a window with offset and limit. Not for folders: use list_files."),
            input_schema=_obj({
                "path": _PATH,
                "offset": {"type": "integer", "minimum": 1,
                           "description": "First line to read, counting from 1. Default 1."},
                "limit": {"type": "integer", "minimum": 1,
                          "description": "How many lines to read. Default 2000."},
            }, ["path"]),
            fn=bind(files.read_file),
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
            fn=bind(files.edit_file),
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
            fn=bind(files.write_file),
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
            fn=bind(shell.run_command),
        ),
        Tool(
            name="run_tests",
            description=(
                "Run the project's tests and return the exit code and the test runner's "
                "output. Use it to see what fails and to check a fix. Takes no arguments."),
            input_schema=_obj({}, []),
            fn=lambda: shell.run_tests(ws, test_command),
        ),
    ]
    if include_ask_user:
        tools.append(ask_user(answer))
    return tools


__all__ = ["NEEDS_APPROVAL", "coding_tools"]
