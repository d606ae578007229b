"""File tools confined to a workspace folder: read, list, edit and write.

Owns `Workspace` (path confinement) and the file tool functions. Every path a model gives is
resolved inside the workspace: ``..`` that climbs out, an absolute path elsewhere, and a symlink
that leads out are refused with a `ToolError` whose message goes back to the model. Must not
import codecs or the loop.
"""

from __future__ import annotations

import os
from pathlib import Path

from toolwire.errors import ToolError

SKIP_DIRS = frozenset({".git", "__pycache__", ".toolwire", ".venv", "node_modules",
                       ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
MAX_READ_LINES = 2000
MAX_LIST = 500


class Workspace:
    """A folder the file tools may not leave."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise ToolError(f"workspace {self.root} is not a folder")

    def resolve(self, path: str) -> Path:
        """``path`` inside the workspace, symlinks followed; refuses anything outside it."""
        if not isinstance(path, str) or not path.strip():
            raise ToolError("path is empty: give a path relative to the workspace, like 'src/a.py'")
        candidate = Path(path)
        full = candidate if candidate.is_absolute() else self.root / candidate
        resolved = full.resolve()
        if resolved != self.root and self.root not in resolved.parents:
            how = "a symlink that leads" if full.is_symlink() or _has_link(full, self.root) \
                else "a path"
            raise ToolError(
                f"{path!r} is {how} outside the workspace; only paths inside it are allowed "
                "(use a path relative to the workspace, like 'src/a.py')"
            )
        return resolved

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() or "."


def _has_link(path: Path, root: Path) -> bool:
    """Whether any existing component of ``path`` below ``root`` is a symlink."""
    try:
        rel = path.absolute().relative_to(root)
    except ValueError:
        return False
    current = root
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            return True
    return False


def read_file(ws: Workspace, path: str, offset: int = 1, limit: int = MAX_READ_LINES) -> str:
    target = ws.resolve(path)
    if target.is_dir():
        raise ToolError(f"{path!r} is a folder; use list_files to see what it holds")
    if not target.exists():
        raise ToolError(f"{path!r} does not exist; use list_files to see which files do")
    try:
        text = target.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{path!r} is not a UTF-8 text file") from None
    lines = text.splitlines()
    if offset < 1:
        raise ToolError(f"offset must be 1 or more (the first line is 1), got {offset}")
    start = offset - 1
    chosen = lines[start:start + max(1, limit)]
    width = len(str(start + len(chosen)))
    body = "\n".join(f"{n:>{width}}\t{line}" for n, line in enumerate(chosen, start + 1))
    rest = len(lines) - (start + len(chosen))
    if rest > 0:
        body += f"\n... {rest} more line(s); read on with offset={start + len(chosen) + 1}"
    return body if lines else "(empty file)"


def list_files(ws: Workspace, path: str = ".") -> str:
    base = ws.resolve(path)
    if not base.is_dir():
        raise ToolError(f"{path!r} is not a folder")
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            found.append(ws.relative(Path(dirpath) / name))
            if len(found) >= MAX_LIST:
                return "\n".join(found) + f"\n... stopped at {MAX_LIST} files; list a subfolder"
    return "\n".join(found) if found else "(no files)"


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def edit_file(ws: Workspace, path: str, old: str, new: str) -> str:
    target = ws.resolve(path)
    if not target.is_file():
        raise ToolError(f"{path!r} does not exist; use write_file to create a file")
    text = target.read_text(encoding="utf-8")
    if not old:
        raise ToolError("old is empty: give the exact text to replace, copied from read_file")
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"old text was found 0 times in {path!r}; copy it exactly from read_file "
            "(without the line numbers), including spaces and indentation"
        )
    if count > 1:
        lines, start = [], 0
        for _ in range(count):
            start = text.index(old, start)
            lines.append(str(_line_of(text, start)))
            start += 1
        raise ToolError(
            f"old text was found {count} times in {path!r}, at lines {', '.join(lines)}; "
            "include more surrounding lines so that it occurs exactly once"
        )
    at = text.index(old)
    target.write_text(text.replace(old, new, 1), encoding="utf-8")
    return f"replaced 1 occurrence in {path} at line {_line_of(text, at)}"


def write_file(ws: Workspace, path: str, content: str) -> str:
    target = ws.resolve(path)
    if target.is_dir():
        raise ToolError(f"{path!r} is a folder")
    existed = target.exists()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    verb = "overwrote" if existed else "created"
    return f"{verb} {path} ({len(content.encode('utf-8'))} bytes)"
