"""The built-in coding tools, on real files and real subprocesses, confined to their workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolwire import ToolError
from toolwire.schema.tool import Tool
from toolwire.tools.coding import NEEDS_APPROVAL, coding_tools


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("x = 1\ny = 2\nx = 1\n")
    (root / "notes.md").write_text("hello\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    return root


def tools(ws: Path, **kw: object) -> dict[str, Tool]:
    return {t.name: t for t in coding_tools(ws, **kw)}  # type: ignore[arg-type]


def call(t: Tool, args: dict[str, object]) -> str:
    return str(t.call(t.validate(args)))


def test_the_set_and_what_needs_approval(ws: Path) -> None:
    assert set(tools(ws)) == {"read_file", "list_files", "edit_file", "write_file",
                              "run_command", "run_tests", "ask_user"}
    assert set(NEEDS_APPROVAL) == {"run_command", "write_file", "edit_file"}
    for t in tools(ws).values():
        assert len(t.description) > 60, t.name  # written for a model, not a stub
        for name, prop in t.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{t.name}.{name} has no description"


def test_read_file_numbers_lines_and_pages(ws: Path) -> None:
    t = tools(ws)["read_file"]
    assert call(t, {"path": "pkg/a.py"}) == "1\tx = 1\n2\ty = 2\n3\tx = 1"
    assert call(t, {"path": "pkg/a.py", "offset": 2, "limit": 1}) == (
        "2\ty = 2\n... 1 more line(s); read on with offset=3")
    with pytest.raises(ToolError, match="does not exist; use list_files"):
        call(t, {"path": "nope.py"})
    with pytest.raises(ToolError, match="is a folder; use list_files"):
        call(t, {"path": "pkg"})


def test_list_files(ws: Path) -> None:
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref")
    assert call(tools(ws)["list_files"], {}) == "notes.md\npkg/a.py"
    assert call(tools(ws)["list_files"], {"path": "pkg"}) == "pkg/a.py"


def test_edit_file_replaces_exactly_one_occurrence(ws: Path) -> None:
    t = tools(ws)["edit_file"]
    with pytest.raises(ToolError) as many:
        call(t, {"path": "pkg/a.py", "old": "x = 1", "new": "x = 3"})
    assert str(many.value) == ("old text was found 2 times in 'pkg/a.py', at lines 1, 3; "
                               "include more surrounding lines so that it occurs exactly once")
    with pytest.raises(ToolError, match=r"old text was found 0 times in 'pkg/a\.py'"):
        call(t, {"path": "pkg/a.py", "old": "z = 9", "new": "z = 0"})
    assert (ws / "pkg" / "a.py").read_text() == "x = 1\ny = 2\nx = 1\n"  # nothing changed
    assert call(t, {"path": "pkg/a.py", "old": "y = 2", "new": "y = 20"}) == (
        "replaced 1 occurrence in pkg/a.py at line 2")
    assert (ws / "pkg" / "a.py").read_text() == "x = 1\ny = 20\nx = 1\n"


def test_edit_file_names_a_bounded_number_of_places(ws: Path) -> None:
    """Old text found everywhere: the error names each line once, at most ten of them, so a
    common string in a large file gives a short answer, not every place it occurs."""
    (ws / "big.txt").write_text("aaaa aaaa\n" * 20_000)
    t = tools(ws)["edit_file"]
    with pytest.raises(ToolError) as many:
        call(t, {"path": "big.txt", "old": "aa", "new": "b"})
    assert str(many.value) == (
        "old text was found 80000 times in 'big.txt', at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 "
        "and more; include more surrounding lines so that it occurs exactly once")
    (ws / "one.txt").write_text("x\nab ab\n")
    with pytest.raises(ToolError, match=r"found 2 times in 'one\.txt', at line 2;"):
        call(t, {"path": "one.txt", "old": "ab", "new": "c"})


def test_a_lone_surrogate_in_new_text_is_a_tool_error(ws: Path) -> None:
    """A string that is no UTF-8 (a caller's own, such as an MCP client's) is refused by name,
    and the file is left as it was."""
    before = (ws / "pkg" / "a.py").read_text()
    with pytest.raises(ToolError, match=r"content holds a lone surrogate \('\\udcff' at "
                                        r"character 3\)"):
        call(tools(ws)["write_file"], {"path": "pkg/a.py", "content": "abc\udcff"})
    with pytest.raises(ToolError, match=r"new holds a lone surrogate"):
        call(tools(ws)["edit_file"], {"path": "pkg/a.py", "old": "y = 2", "new": "\ud800"})
    assert (ws / "pkg" / "a.py").read_text() == before
    assert not (ws / "new.txt").exists()
    with pytest.raises(ToolError, match="lone surrogate"):
        call(tools(ws)["write_file"], {"path": "new.txt", "content": "\udcff"})
    assert not (ws / "new.txt").exists()


def test_write_file_creates_folders(ws: Path) -> None:
    t = tools(ws)["write_file"]
    assert call(t, {"path": "new/dir/b.txt", "content": "hé"}) == (
        "created new/dir/b.txt (3 bytes)")
    assert (ws / "new" / "dir" / "b.txt").read_text() == "hé"
    assert call(t, {"path": "new/dir/b.txt", "content": ""}).startswith("overwrote")


@pytest.mark.parametrize("tool_name", ["read_file", "write_file", "edit_file", "list_files"])
@pytest.mark.parametrize("path", ["../secret.txt", "pkg/../../secret.txt", "/etc/passwd"])
def test_paths_outside_the_workspace_are_refused(ws: Path, tool_name: str, path: str) -> None:
    args: dict[str, object] = {"path": path}
    if tool_name == "write_file":
        args["content"] = "x"
    if tool_name == "edit_file":
        args.update(old="outside", new="inside")
    with pytest.raises(ToolError, match="outside the workspace"):
        call(tools(ws)[tool_name], args)
    assert (ws.parent / "secret.txt").read_text() == "outside\n"


def test_a_symlink_that_leads_out_is_refused(ws: Path) -> None:
    os.symlink(ws.parent / "secret.txt", ws / "link.txt")
    os.symlink(ws.parent, ws / "up")
    for path in ("link.txt", "up/secret.txt"):
        with pytest.raises(ToolError, match="a symlink that leads outside the workspace"):
            call(tools(ws)["read_file"], {"path": path})
    os.symlink(ws / "notes.md", ws / "inside.md")  # a link that stays inside is fine
    assert call(tools(ws)["read_file"], {"path": "inside.md"}) == "1\thello"


def test_run_command_reports_exit_code_and_output(ws: Path) -> None:
    t = tools(ws)["run_command"]
    assert call(t, {"command": "echo out; echo err >&2; exit 3"}) == "exit code 3\nout\nerr"
    assert call(t, {"command": "pwd"}) == f"exit code 0\n{ws.resolve()}"
    with pytest.raises(ToolError, match=r"timed out after 0\.5 s"):
        call(t, {"command": "sleep 5", "timeout": 0.5})


def test_run_command_caps_long_output(ws: Path) -> None:
    out = call(tools(ws)["run_command"], {"command": "python3 -c \"print('x' * 50000)\""})
    assert "bytes of output cut here" in out and len(out) < 21_000


def test_run_tests_uses_the_projects_command(ws: Path) -> None:
    t = tools(ws, test_command="echo tests ran; exit 1")["run_tests"]
    assert call(t, {}) == "exit code 1\ntests ran"


def test_ask_user_answers_and_no_user(ws: Path) -> None:
    asked: list[tuple[str, object]] = []

    def answer(question: str, choices: object) -> str:
        asked.append((question, choices))
        return "blue"

    import asyncio

    t = tools(ws, answer=answer)["ask_user"]
    got = asyncio.run(t.call(t.validate({"question": "Colour?", "choices": ["red", "blue"]})))
    assert got == "blue" and asked == [("Colour?", ("red", "blue"))]
    silent = tools(ws)["ask_user"]
    with pytest.raises(ToolError, match="No user is available"):
        asyncio.run(silent.call(silent.validate({"question": "Colour?"})))
