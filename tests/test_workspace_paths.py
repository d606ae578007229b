"""`Workspace` on its own, in this process: symlinks absolute and relative, inside and outside
the workspace, chains of them up to the limit, the checks on names and paths, and the errors
that name what was wrong."""

from __future__ import annotations

import errno
import fcntl
import gc
import os
import re
import stat
import sys
from pathlib import Path

import pytest

from toolwire.errors import ToolError
from toolwire.tools.paths import MAX_LINKS, MAX_NAME, MAX_PATH, PathError, Workspace


def read(ws: Workspace, path: str) -> tuple[bytes, str]:
    """What ``path`` holds, and where it led inside the workspace."""
    with ws.open(path) as opened:
        return os.read(opened.fd, 1000), opened.rel


def outside(path: str, how: str) -> str:
    return re.escape(f"{path!r} is {how} outside the workspace")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """wsX/ with data.txt, a/, b/f.txt and etc/hostname; outside/ and wsX2/ beside it (the X:
    a name that ends in a letter that is also a path's last character when stripped wrongly)."""
    ws = tmp_path / "wsX"
    for folder in ("a", "b", "etc"):
        (ws / folder).mkdir(parents=True)
    (ws / "data.txt").write_bytes(b"data")
    (ws / "b" / "f.txt").write_bytes(b"in b")
    (ws / "etc" / "hostname").write_bytes(b"the workspace's own hostname file")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_bytes(b"secret")
    (tmp_path / "wsX2").mkdir()  # a sibling whose path starts with the workspace's
    (tmp_path / "wsX2" / "f.txt").write_bytes(b"sibling")
    return ws


def test_relative_symlinks_inside_are_followed(tree: Path) -> None:
    (tree / "alias").symlink_to("data.txt")
    (tree / "a" / "up").symlink_to("../b")
    (tree / "a" / "file").symlink_to("../data.txt")
    (tree / "a" / "here").symlink_to(".")
    ws = Workspace(tree)
    assert read(ws, "alias") == (b"data", "data.txt")
    assert read(ws, "a/up/f.txt") == (b"in b", "b/f.txt")
    assert read(ws, "a/file") == (b"data", "data.txt")
    assert read(ws, "a/here/here/up/f.txt") == (b"in b", "b/f.txt")
    assert read(ws, "a/../b/./f.txt") == (b"in b", "b/f.txt")


def test_relative_symlinks_leading_outside_are_refused(tree: Path) -> None:
    (tree / "out").symlink_to("../outside")
    (tree / "leak").symlink_to("../outside/secret.txt")
    (tree / "a" / "deep").symlink_to("../../outside")
    ws = Workspace(tree)
    for path in ("out/secret.txt", "a/deep/secret.txt", "../outside/secret.txt", "a/../.."):
        with pytest.raises(ToolError, match=outside(path, "a path")):
            ws.open(path)
    with pytest.raises(ToolError, match=outside("leak", "a path")):
        ws.open("leak")  # the last name: its target is walked again, the refusal names "leak"


def test_absolute_symlinks_inside_are_followed_from_the_root(tree: Path) -> None:
    (tree / "abs").symlink_to(tree / "data.txt")
    (tree / "a" / "link").symlink_to(tree / "etc")
    (tree / "a" / "root").symlink_to(str(tree) + "/")
    (tree / "a" / "exact").symlink_to(str(tree))
    (tree / "a" / "b").mkdir()  # what a walk from a/ instead of the root would find
    (tree / "a" / "b" / "f.txt").write_bytes(b"wrong folder")
    (tree / "a" / "tob").symlink_to(tree / "b")
    ws = Workspace(tree)
    assert read(ws, "abs") == (b"data", "data.txt")
    # leads to <ws>/etc, never to the machine's /etc
    assert read(ws, "a/link/hostname") == (b"the workspace's own hostname file", "etc/hostname")
    assert read(ws, "a/root/data.txt") == (b"data", "data.txt")
    assert read(ws, "a/tob/f.txt") == (b"in b", "b/f.txt")
    for root in ("a/root", "a/exact"):
        with ws.open(root) as opened:
            assert opened.rel == "." and ws.is_dir(opened)
    assert read(ws, "a/exact/b/f.txt") == (b"in b", "b/f.txt")


def test_absolute_symlinks_outside_are_refused(tree: Path) -> None:
    (tree / "etcdir").symlink_to("/etc")
    (tree / "host").symlink_to("/etc/hostname")
    (tree / "a" / "sibling").symlink_to(str(tree) + "2")
    (tree / "a" / "sibling_file").symlink_to(str(tree) + "2/f.txt")
    (tree / "a" / "spaced").symlink_to(str(tree) + " ")  # no more than a name beside it
    (tree / "a" / "lettered").symlink_to(str(tree) + "X")
    ws = Workspace(tree)
    for path in ("etcdir/hostname", "a/sibling/f.txt", "host", "a/sibling_file", "a/spaced",
                 "a/spaced/f.txt", "a/lettered", "a/lettered/f.txt"):
        with pytest.raises(ToolError, match=outside(path, "a symlink that leads")):
            ws.open(path)


def test_absolute_paths_inside_are_taken_and_others_refused(tree: Path) -> None:
    ws = Workspace(tree)
    assert read(ws, f"{tree}/data.txt") == (b"data", "data.txt")
    assert read(ws, f"{tree}/b//f.txt") == (b"in b", "b/f.txt")
    assert ws.parts(str(tree)) == [] and ws.parts(f"{tree}/") == []
    assert ws.parts("./a//b/") == ["a", "b"]
    for path in (f"{tree}2/f.txt", "/etc/hostname", str(tree.parent)):
        with pytest.raises(ToolError, match=outside(path, "a path")):
            ws.open(path)


def test_chains_of_symlinks_are_followed_up_to_the_limit(tree: Path) -> None:
    def chain(prefix: str, links: int, end: str) -> str:
        for i in range(links):
            target = end if i == links - 1 else f"{prefix}{i + 1}"
            (tree / f"{prefix}{i}").symlink_to(target)
        return f"{prefix}0"

    ws = Workspace(tree)
    assert read(ws, chain("f", MAX_LINKS, "data.txt")) == (b"data", "data.txt")
    assert read(ws, chain("d", MAX_LINKS, "b") + "/f.txt") == (b"in b", "b/f.txt")
    too_many = f"more than {MAX_LINKS} symlinks on the way: a loop of symlinks"
    with pytest.raises(PathError, match=re.escape(f"'g0': {too_many}")):
        ws.open(chain("g", MAX_LINKS + 1, "data.txt"))
    with pytest.raises(PathError, match=re.escape(f"'e0/f.txt': {too_many}")):
        ws.open(chain("e", MAX_LINKS + 1, "b") + "/f.txt")


def test_names_and_paths_are_checked_before_any_walk(tree: Path) -> None:
    ws = Workspace(tree)
    for empty in ("", "   ", None):
        with pytest.raises(ToolError, match="path is empty: give a path relative"):
            ws.parts(empty)  # type: ignore[arg-type]
    with pytest.raises(PathError, match="holds a NUL character"):
        ws.open("a\0b")
    (tree / ("n" * MAX_NAME)).write_bytes(b"longest name")
    assert read(ws, "n" * MAX_NAME) == (b"longest name", "n" * MAX_NAME)
    with pytest.raises(PathError, match=f"a name in it is longer than {MAX_NAME} bytes"):
        ws.open("n" * (MAX_NAME + 1))
    with pytest.raises(PathError, match=f"a name in it is longer than {MAX_NAME} bytes"):
        ws.open("é" * 128)  # 256 bytes in UTF-8
    longest = ("d" * 254 + "/") * 16 + "e" * 16
    assert len(longest) == MAX_PATH and len(ws.parts(longest)) == 17
    with pytest.raises(ToolError, match=f"the path is longer than {MAX_PATH} bytes"):
        ws.parts(longest + "x")
    with pytest.raises(ToolError, match=f"the path is longer than {MAX_PATH} bytes"):
        ws.parts("é" * (MAX_PATH // 2) + "x")
    for hidden in (".toolwire", ".toolwire/runs/x", "a/../.toolwire"):
        with pytest.raises(PathError) as caught:
            ws.open(hidden)
        assert str(caught.value) == (
            f"{hidden!r}: .toolwire/ holds toolwire's own run logs; no tool may read or "
            "change it")
    with pytest.raises(ToolError, match="is not a folder"):
        Workspace(tree / "data.txt")


def test_errors_name_the_path_the_place_and_the_system_s_reason(tree: Path) -> None:
    ws = Workspace(tree)
    os.mkfifo(tree / "pipe")
    cases = [
        ("nothing/x", os.O_RDONLY, errno.ENOENT,
         "'nothing/x': 'nothing' does not exist; use list_files to see what does"),
        ("a/none.txt", os.O_RDONLY, errno.ENOENT,
         "'a/none.txt': 'a/none.txt' does not exist; use list_files to see what does"),
        ("data.txt/x", os.O_RDONLY, errno.ENOTDIR, "'data.txt/x': 'data.txt' is not a folder"),
        ("b", os.O_WRONLY, errno.EISDIR, "'b': 'b' is a folder"),
        ("b/f.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL, errno.EEXIST,
         "'b/f.txt': 'b/f.txt' already exists"),
        ("pipe", os.O_WRONLY | os.O_NONBLOCK, errno.ENXIO,
         "'pipe': 'pipe' is not a regular file (a device, pipe or socket)"),
    ]
    for path, flags, code, message in cases:
        with pytest.raises(PathError) as caught:
            ws.open(path, flags)
        assert (str(caught.value), caught.value.errno) == (message, code)


def test_folders_are_made_only_when_asked(tree: Path) -> None:
    ws = Workspace(tree)
    flags = os.O_WRONLY | os.O_CREAT
    with pytest.raises(PathError, match="'new' does not exist"):
        ws.open("new/deeper/f.txt", flags)
    old = os.umask(0o022)
    try:
        with ws.open("new/deeper/f.txt", flags, create_dirs=True, mode=0o600) as opened:
            os.write(opened.fd, b"made")
            assert opened.rel == "new/deeper/f.txt" and not ws.is_dir(opened)
    finally:
        os.umask(old)
    for folder in ("new", "new/deeper"):
        assert stat.S_IMODE((tree / folder).stat().st_mode) == 0o755
    # exactly the folders on the way, each where the path puts it
    assert sorted(p.name for p in tree.iterdir()) == ["a", "b", "data.txt", "etc", "new"]
    assert [p.name for p in (tree / "new").iterdir()] == ["deeper"]
    assert (tree / "new" / "deeper" / "f.txt").read_bytes() == b"made"
    assert stat.S_IMODE((tree / "new" / "deeper" / "f.txt").stat().st_mode) & 0o077 == 0
    with pytest.raises(PathError, match=re.escape("'data.txt' is not a folder")):
        ws.open("data.txt/sub/f.txt", flags, create_dirs=True)


def test_replace_puts_new_content_in_one_step_and_leaves_nothing_beside(tree: Path) -> None:
    ws = Workspace(tree)
    ws.replace("b/f.txt", b"new content", 0o640)
    assert (tree / "b" / "f.txt").read_bytes() == b"new content"
    assert stat.S_IMODE((tree / "b" / "f.txt").stat().st_mode) == 0o640
    assert sorted(p.name for p in (tree / "b").iterdir()) == ["f.txt"]
    with pytest.raises(PathError, match=re.escape("'gone/f.txt': 'gone' does not exist")):
        ws.replace("gone/f.txt", b"x", 0o644)
    with pytest.raises(PathError, match=re.escape("'b/f.txt/x': 'b/f.txt' is not a folder")):
        ws.replace("b/f.txt/x", b"x", 0o644)
    (tree / "b" / "sub").mkdir()
    with pytest.raises(PathError) as caught:
        ws.replace("b/sub", b"x", 0o644)
    assert str(caught.value) == "'b/sub': 'b/sub' is a folder"


def test_an_opened_file_closes_its_descriptor(tree: Path) -> None:
    ws = Workspace(tree)
    with ws.open("data.txt") as opened:
        fd = opened.fd
        assert opened.info.st_size == 4
    with pytest.raises(OSError):
        os.fstat(fd)


def test_a_workspace_of_the_whole_file_system_takes_every_absolute_symlink() -> None:
    ws = Workspace("/")
    with ws.open("proc/self/cwd") as opened:  # a symlink to this process's folder
        assert "/" + opened.rel == os.getcwd() and ws.is_dir(opened)


def test_the_outside_message_says_what_to_give_instead(tree: Path) -> None:
    with pytest.raises(ToolError) as caught:
        Workspace(tree).open("../outside/secret.txt")
    assert str(caught.value) == (
        "'../outside/secret.txt' is a path outside the workspace; only paths inside it are "
        "allowed (use a path relative to the workspace, like 'src/a.py')")


def test_odd_but_harmless_symlink_targets_lead_where_they_say(tree: Path) -> None:
    (tree / "a" / "dotted").symlink_to(f"{tree}/./etc")
    (tree / "a" / "doubled").symlink_to("..//b")
    ws = Workspace(tree)
    assert read(ws, "a/dotted/hostname")[1] == "etc/hostname"
    assert read(ws, "a/doubled/f.txt") == (b"in b", "b/f.txt")


def test_following_symlinks_leaves_no_descriptor_open(tree: Path) -> None:
    (tree / "a" / "link").symlink_to(tree / "etc")
    (tree / "a" / "up").symlink_to("../b")
    ws = Workspace(tree)
    gc.collect()  # what earlier tests left goes first
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        read(ws, "a/link/hostname")
        read(ws, "a/up/f.txt")
        with pytest.raises(PathError):
            ws.open("a/link/none")
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_replace_that_fails_says_why_and_leaves_nothing_beside(tree: Path) -> None:
    ws = Workspace(tree)
    with pytest.raises(PathError) as caught:
        ws.replace("a", b"x", 0o644)  # a folder: the rename cannot put a file in its place
    assert (str(caught.value), caught.value.errno) == ("'a': 'a' is a folder", errno.EISDIR)
    assert sorted(p.name for p in tree.iterdir()) == ["a", "b", "data.txt", "etc"]


def test_a_workspace_of_the_whole_file_system_walks_absolute_symlinks_too() -> None:
    ws = Workspace("/")
    entry = sorted(os.listdir("."))[0]
    with ws.open(f"proc/self/cwd/{entry}") as opened:  # the symlink is walked through
        assert "/" + opened.rel == os.path.join(os.getcwd(), entry)


def test_a_path_that_ends_going_back_up_opens_the_folder_it_reaches(tree: Path) -> None:
    (tree / "a" / "b").mkdir()
    ws = Workspace(tree)
    for path, rel in (("a/b/..", "a"), ("a/..", "."), ("a/b/../..", ".")):
        with ws.open(path) as opened:
            assert opened.rel == rel and ws.is_dir(opened)


def test_files_made_take_the_mode_given_less_the_umask(tree: Path) -> None:
    ws = Workspace(tree)
    old = os.umask(0o022)
    try:
        ws.open("made.txt", os.O_WRONLY | os.O_CREAT).close()
        ws.open("mine.txt", os.O_WRONLY | os.O_CREAT, mode=0o600).close()
    finally:
        os.umask(old)
    assert stat.S_IMODE((tree / "made.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE((tree / "mine.txt").stat().st_mode) == 0o600


def test_an_error_without_a_wording_of_its_own_gives_the_system_s(tmp_path: Path) -> None:
    running = Path(os.path.realpath(sys.executable))  # a program running now cannot be written
    ws = Workspace(running.parent)
    with pytest.raises(PathError) as caught:
        ws.open(running.name, os.O_WRONLY)
    name = running.name
    assert (str(caught.value), caught.value.errno) == (
        f"{name!r}: {os.strerror(errno.ETXTBSY)} at {name!r}", errno.ETXTBSY)


def test_a_workspace_closes_its_folder_when_it_goes(tree: Path) -> None:
    unraisable: list[object] = []
    kept, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        gc.collect()  # what earlier tests left goes first
        before = len(os.listdir("/proc/self/fd"))
        for _ in range(5):
            Workspace(tree)
            with pytest.raises(ToolError):
                Workspace(tree / "data.txt")  # never opened: nothing to close
        gc.collect()
        assert len(os.listdir("/proc/self/fd")) == before
    finally:
        sys.unraisablehook = kept
    assert unraisable == []


def test_the_workspace_folder_is_not_passed_on_to_commands(tree: Path) -> None:
    ws = Workspace(tree)
    assert fcntl.fcntl(ws.fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC


def test_path_messages_say_what_to_give(tree: Path) -> None:
    ws = Workspace(tree)
    with pytest.raises(ToolError) as caught:
        ws.parts(" ")
    assert str(caught.value) == (
        "path is empty: give a path relative to the workspace, like 'src/a.py'")
    long = "a/" * MAX_PATH
    with pytest.raises(ToolError) as caught:
        ws.parts(long)
    assert str(caught.value) == (
        f"the path is longer than {MAX_PATH} bytes ({long[:60]!r}...); give a shorter one")
    with pytest.raises(ToolError, match=outside(f"{tree} ", "a path")):
        ws.parts(f"{tree} ")  # a name beside the workspace, not the workspace


def test_a_folder_the_system_will_not_make_is_named() -> None:
    ws = Workspace("/proc/self")  # no folder can be made here
    with pytest.raises(PathError) as caught:
        ws.open("newdir/f.txt", os.O_WRONLY | os.O_CREAT, create_dirs=True)
    assert str(caught.value) == (
        "'newdir/f.txt': 'newdir' does not exist; use list_files to see what does")
    with pytest.raises(PathError) as caught:
        ws.open("task/newdir/f.txt", os.O_WRONLY | os.O_CREAT, create_dirs=True)
    assert (str(caught.value), caught.value.errno) == (
        "'task/newdir/f.txt': 'task/newdir' does not exist; use list_files to see what does",
        errno.ENOENT)
