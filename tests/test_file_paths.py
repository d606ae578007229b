"""The file tools against hostile paths: races, hard links, the log folder, odd names, huge files.

Real files and a real second process that swaps a folder for a symlink to an outside folder as
fast as it can while the tools read and write through that folder.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from toolwire import ToolError
from toolwire.schema.tool import Tool
from toolwire.tools.coding import coding_tools
from toolwire.tools.files import MAX_READ_BYTES


def tools(ws: Path) -> dict[str, Tool]:
    return {t.name: t for t in coding_tools(ws, sandbox="off")}


def call(ws: Path, name: str, **args: Any) -> str:
    t = tools(ws)[name]
    return str(t.call(t.validate(args)))


def swap_forever(ws: str, outside: str, swaps: Any) -> None:
    """In its own process: swap ws/box between a real folder and a symlink to ``outside``."""
    box, real, link = (os.path.join(ws, n) for n in ("box", "box.real", "box.link"))
    os.symlink(outside, link)

    def move(src: str, dst: str) -> None:
        while True:
            try:
                return os.rename(src, dst)
            except OSError:  # write_file made a new ws/box in the gap: take it away
                shutil.rmtree(dst, ignore_errors=True)

    while True:
        move(box, real)
        move(link, box)
        swaps.value += 1
        move(box, link)
        move(real, box)
        swaps.value += 1


@contextmanager
def swapping(tmp_path: Path) -> Iterator[tuple[Path, Path, Any]]:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "box").mkdir(parents=True)
    outside.mkdir()
    (ws / "box" / "f.txt").write_text("inside\n")
    (outside / "f.txt").write_text("OUTSIDE\n")
    ctx = multiprocessing.get_context("spawn")
    swaps = ctx.Value("q", 0, lock=False)
    proc = ctx.Process(target=swap_forever, args=(str(ws), str(outside), swaps), daemon=True)
    proc.start()
    try:
        while swaps.value < 10:
            time.sleep(0.01)
        yield ws, outside, swaps
        assert proc.is_alive(), "the swapping process died"
    finally:
        proc.kill()
        proc.join()


def race(ws: Path, outside: Path, swaps: Any, read: Callable[[str], str],
         write: Callable[[str, str], object], calls: int,
         stop_at_escape: bool = False) -> tuple[int, int, int]:
    """(escapes, calls that saw a swap while they ran, refused calls) over ``calls`` calls."""
    escapes = observed = refused = 0
    for i in range(calls):
        before = swaps.value
        try:
            if i % 2:
                escapes += "OUTSIDE" in read("box/f.txt")
            else:
                write("box/w.txt", "written")
                if (outside / "w.txt").exists():
                    escapes += 1
                    (outside / "w.txt").unlink()
        except (ToolError, OSError):
            refused += 1
        observed += swaps.value != before
        if stop_at_escape and escapes:
            break
    return escapes, observed, refused


def test_a_folder_swapped_for_a_symlink_never_lets_a_read_or_write_out(tmp_path: Path) -> None:
    with swapping(tmp_path) as (ws, outside, swaps):
        t = tools(ws)
        read, write = t["read_file"], t["write_file"]
        escapes, observed, refused = race(
            ws, outside, swaps, lambda p: str(read.call({"path": p})),
            lambda p, c: write.call({"path": p, "content": c}), 20_000)
    assert escapes == 0
    # the race was really run: calls had the folder swapped while they were running
    print(f"{observed} of 20000 calls saw a swap while they ran; {refused} were refused")
    assert observed >= 20, observed
    assert 0 < refused < 20_000


def old_check_then_use(ws: Path) -> tuple[Callable[[str], str], Callable[[str, str], object]]:
    """Resolve, check, then open by name: how the file tools confined paths before."""
    root = ws.resolve()

    def resolve(path: str) -> Path:
        full = (root / path).resolve()
        if root not in full.parents:
            raise ToolError("outside")
        return full

    return (lambda p: resolve(p).read_text(),
            lambda p, c: resolve(p).write_text(c))


def test_the_race_harness_catches_a_check_then_use_resolution(tmp_path: Path) -> None:
    with swapping(tmp_path) as (ws, outside, swaps):
        read, write = old_check_then_use(ws)
        escapes, observed, _ = race(ws, outside, swaps, read, write, 200_000,
                                    stop_at_escape=True)
    assert escapes > 0 and observed > 0


def test_a_file_with_another_hard_link_is_never_written(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside.txt"
    ws.mkdir()
    outside.write_text("keep me\n")
    os.link(outside, ws / "linked.txt")
    for name, args in (("write_file", {"content": "x"}), ("edit_file", {"old": "keep",
                                                                       "new": "lost"})):
        with pytest.raises(ToolError, match=r"'linked.txt' has 2 hard links: writing it would "
                                            r"also change the same file under its other names"):
            call(ws, name, path="linked.txt", **args)
    assert outside.read_text() == "keep me\n"


def _read_while(path: Path, work: Callable[[], None]) -> list[str]:
    """What a reader in another process saw of ``path`` while ``work`` ran, one line per
    distinct content: its length and its distinct bytes after the first line (the process reads
    as fast as it can, with its own open and read)."""
    code = textwrap.dedent("""
        import os, sys
        seen = set()
        while not os.path.exists(sys.argv[2]):
            with open(sys.argv[1], "rb") as f:
                seen.add(f.read())
        for data in seen:
            body = data.partition(b"\\n")[2]
            print(len(data), bytes(sorted(set(body))).decode())
    """)
    stop = path.parent.parent / "stop"
    reader = subprocess.Popen([sys.executable, "-c", code, str(path), str(stop)],
                              stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.3)  # the reader is reading
        work()
    finally:
        stop.touch()
        out, _ = reader.communicate(timeout=60)
    return out.splitlines()


def test_a_file_being_overwritten_is_never_seen_cut_short(tmp_path: Path) -> None:
    """write_file and edit_file replace an existing file in one step: a process reading it
    all the while sees the old content or the new, never an empty or half-written file (the
    new content is written beside it and renamed over it); its permissions stay, a symlink
    to it stays a symlink, and no temporary file is left."""
    ws = tmp_path / "ws"
    ws.mkdir()
    size = 400_000
    target = ws / "data.txt"
    target.write_text("v0000\n" + "a" * size)
    target.chmod(0o640)
    (ws / "alias.txt").symlink_to("data.txt")

    def overwrite() -> None:
        for n in range(1, 61, 2):
            call(ws, "write_file", path="alias.txt" if n % 4 == 1 else "data.txt",
                 content=f"v{n:04d}\n" + "ab"[n % 4 == 1] * size)
            call(ws, "edit_file", path="data.txt", old=f"v{n:04d}\n", new=f"v{n + 1:04d}\n")

    seen = _read_while(target, overwrite)
    assert len(seen) > 1, seen  # the reader saw the file change
    for line in seen:
        length, _, letters = line.partition(" ")
        assert int(length) == size + 6 and letters in ("a", "b"), line
    assert (ws / "alias.txt").is_symlink() and os.readlink(ws / "alias.txt") == "data.txt"
    assert (target.stat().st_mode & 0o777) == 0o640
    assert sorted(p.name for p in ws.iterdir()) == ["alias.txt", "data.txt"]
    assert target.read_text().startswith("v0060\n")


def test_the_run_log_folder_is_refused_to_every_tool(tmp_path: Path) -> None:
    (tmp_path / ".toolwire" / "runs").mkdir(parents=True)
    (tmp_path / ".toolwire" / "runs" / "r.jsonl").write_text("log\n")
    os.symlink(".toolwire/runs", tmp_path / "logs")
    (tmp_path / "pkg").mkdir()
    attempts = [("read_file", {"path": ".toolwire/runs/r.jsonl"}),
                ("read_file", {"path": "logs/r.jsonl"}),
                ("read_file", {"path": f"{tmp_path}/.toolwire/runs/r.jsonl"}),
                ("list_files", {"path": ".toolwire"}),
                ("write_file", {"path": ".toolwire/runs/r.jsonl", "content": "x"}),
                ("write_file", {"path": "logs/new.jsonl", "content": "x"}),
                ("edit_file", {"path": "./pkg/../.toolwire/runs/r.jsonl", "old": "log",
                               "new": "x"})]
    for name, args in attempts:
        with pytest.raises(ToolError, match="holds toolwire's own run logs"):
            call(tmp_path, name, **args)
    assert (tmp_path / ".toolwire" / "runs" / "r.jsonl").read_text() == "log\n"
    assert sorted(os.listdir(tmp_path / ".toolwire" / "runs")) == ["r.jsonl"]
    assert ".toolwire" not in call(tmp_path, "list_files")


def test_odd_paths_are_tool_errors_naming_the_path_and_reason(tmp_path: Path) -> None:
    os.symlink("b", tmp_path / "a")
    os.symlink("a", tmp_path / "b")
    os.symlink("self/x", tmp_path / "self")
    (tmp_path / "f.txt").write_text("text\n")
    os.mkfifo(tmp_path / "pipe")
    cases = [
        ({"path": "a"}, r"'a': more than 40 symlinks on the way: a loop of symlinks"),
        ({"path": "self/x"}, r"'self/x': more than 40 symlinks on the way"),
        ({"path": "f\0.txt"}, r"'f\\x00.txt': the path holds a NUL character"),
        ({"path": "d/" * 2100}, r"the path is longer than 4096 bytes \('d/d/d/"),
        ({"path": "n" * 300}, r"'n{300}': a name in it is longer than 255 bytes"),
        ({"path": "f.txt/more"}, r"'f.txt/more': 'f.txt' is not a folder"),
        ({"path": "pipe"}, r"'pipe' is not a regular file"),
        ({"path": "../x"}, r"'../x' is a path outside the workspace"),
    ]
    for args, said in cases:
        for name in ("read_file", "write_file"):
            full = {**args, "content": "x"} if name == "write_file" else args
            with pytest.raises(ToolError, match=said):
                call(tmp_path, name, **full)


def test_binary_files_are_reported_as_such(tmp_path: Path) -> None:
    (tmp_path / "img.bin").write_bytes(b"\x1f\x8b\x08\0\0\0\0\0\0\x03")  # gzip, not media
    (tmp_path / "latin.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    for path in ("img.bin", "latin.txt"):
        with pytest.raises(ToolError, match=f"'{path}' is a binary file \\(\\d+ bytes\\)"):
            call(tmp_path, "read_file", path=path)
        with pytest.raises(ToolError, match="is a binary file"):
            call(tmp_path, "edit_file", path=path, old="a", new="b")


PEAK = textwrap.dedent("""
    import resource, sys
    from toolwire.tools.coding import coding_tools
    t = {x.name: x for x in coding_tools(sys.argv[1], sandbox="off")}["read_file"]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        out = t.call(t.validate({"path": sys.argv[2], "limit": 5}))
    except Exception as exc:
        out = f"{type(exc).__name__}: {exc}"
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(after - before)
    print(out)
""")


def peak(ws: Path, path: str) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-c", PEAK, str(ws), path], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    growth, out = proc.stdout.split("\n", 1)
    return int(growth), out


def test_a_1_gib_sparse_file_gives_a_bounded_answer(tmp_path: Path) -> None:
    with open(tmp_path / "huge.txt", "wb") as f:
        f.write(b"first line\n")
        f.truncate(1 << 30)
    growth, out = peak(tmp_path, "huge.txt")
    assert growth < 100 * 1024
    assert out.startswith("ToolError: 'huge.txt' is a binary file (1073741824 bytes)")
    assert len(out) < 300


def test_one_endless_line_is_cut_and_the_window_bounded(tmp_path: Path) -> None:
    with open(tmp_path / "long.txt", "wb") as f:
        for _ in range(40):
            f.write(b"x" * (1 << 20))
        f.write(b"\nsecond\n")
    growth, out = peak(tmp_path, "long.txt")
    assert growth < 100 * 1024
    assert out.startswith("1\txxxx") and "[... line cut: 41939040 more bytes ...]" in out
    assert "2\tsecond" in out and len(out) < 5_000
    # many ordinary lines stop at the byte limit, saying where to read on
    (tmp_path / "many.txt").write_text("".join(f"{'y' * 99}\n" for _ in range(3000)))
    out = call(tmp_path, "read_file", path="many.txt")
    assert "this window stopped at 100000 bytes; read on with offset=1012" in out
    assert len(out) < MAX_READ_BYTES + 10_000


def test_memory_is_measured_in_kib_here() -> None:
    """ru_maxrss is in KiB on Linux, which the limits above assume."""
    assert sys.platform.startswith("linux")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 1024
