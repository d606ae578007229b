"""What a command creates on disk: the files and folders it made (`Outputs`, removed again when
its run fails to start), where a run's log goes by default (`runs_folder`, `default_log`: the
user's state directory, `toolwire.records`) and the records bubblewrap binds read-only
(`protected`), and the copy of a folder a replay works in (`copy_folder`). Imports only the
command line's `common`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import shutil
from collections.abc import Iterable
from pathlib import Path

from toolwire.cli.common import UserError


class Outputs:
    """Files and folders a command creates, removed again when its run fails to start: an
    empty file or folder it made goes; one that holds something stays (a run log that holds
    a run is never removed), unless it is a whole tree the command filled (`tree`)."""

    def __init__(self) -> None:
        self.made: list[Path] = []
        self.trees: list[Path] = []
        self.written: list[Path] = []  # small files the command wrote itself

    def tree(self, path: Path) -> Path:
        """A folder the command made and fills on its own: removed with what is in it."""
        self.trees.append(path)
        return path

    def folder(self, path: Path) -> Path:
        """Make ``path`` and the missing folders above it, remembering which were new."""
        missing = [p for p in (path, *path.parents) if not p.exists()]
        path.mkdir(parents=True, exist_ok=True)
        self.made.extend(missing)  # deepest first, so removing in order empties each first
        return path

    def file(self, path: Path) -> Path:
        if not path.exists():
            self.made.insert(0, path)
        return path

    def remove(self) -> None:
        for tree in self.trees:
            shutil.rmtree(tree, ignore_errors=True)
        for path in self.written:
            with contextlib.suppress(OSError):
                path.unlink()
        for path in self.made:
            with contextlib.suppress(OSError):  # gone already, or not empty: left alone
                if path.is_dir():
                    path.rmdir()
                elif path.stat().st_size == 0:
                    path.unlink()


def runs_folder(workdir: Path) -> Path:
    """Where a run in ``workdir`` writes its log when no --log is given: a folder of the
    user's state directory (`toolwire.records.runs_folder`)."""
    from toolwire import records

    return records.runs_folder(workdir)


def default_log(workdir: Path, outputs: Outputs) -> str:
    """A new run log for the project in ``workdir``, in the user's state directory (where the
    model's commands cannot write: `toolwire.records.runs_folder`)."""
    from toolwire.records import runs_folder

    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    try:
        folder = outputs.folder(runs_folder(workdir))
    except OSError as exc:
        outputs.remove()
        raise UserError(f"cannot write the run log in {runs_folder(workdir)} "
                        f"({exc.strerror or exc}); give --log FILE in a folder you can write "
                        "to") from None
    return str(outputs.file(folder / f"{stamp}.jsonl"))


def protected(paths: Iterable[Path], outputs: Outputs) -> None:
    """Make each record bubblewrap binds read-only (``paths``, from `trust.record_place`)
    before any command starts, so that every command finds it bound."""
    for kept in paths:
        if kept.name.endswith(".media"):
            outputs.folder(kept)
        else:
            outputs.file(kept).touch(mode=0o600)


COPY_LIMIT = 512 << 20
"""The most a replay copies of the recorded folder (bytes) before it asks for --workdir."""

_FICLONE = 0x40049409
"""Linux's ioctl that makes a file share another's blocks until either is written (a reflink,
on file systems such as Btrfs and XFS)."""


def clone_file(source: str, target: str) -> str:
    """Copy one file for a replay: a reflink where the file system makes them (no blocks
    copied, and a write to either file leaves the other as it was), else a plain copy. Never a
    hard link, which a command writing into the copy would write into the user's file too."""
    import fcntl
    import os

    try:
        with open(source, "rb") as src, open(target, "xb") as dst:
            fcntl.ioctl(dst.fileno(), _FICLONE, src.fileno())
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(target)
        return str(shutil.copy2(source, target))
    shutil.copystat(source, target)
    return target


def copy_folder(folder: Path, into: Path, limit: int = COPY_LIMIT) -> Path:
    """A copy of ``folder`` at ``into`` (reflinked where the file system can, `clone_file`),
    without its ``.toolwire`` folder (links copied as links, and what is neither a file, a
    folder nor a link, such as a FIFO or a device node, left out); refused, before anything
    is copied, when its files hold more than ``limit``."""
    import os
    import shutil
    import stat

    total = 0
    for top, dirs, files in os.walk(folder):
        if Path(top) == folder and ".toolwire" in dirs:
            dirs.remove(".toolwire")
        for name in files:
            try:
                total += os.lstat(os.path.join(top, name)).st_size
            except OSError:
                continue
        if total > limit:
            raise UserError(f"the recorded folder {folder} holds more than {limit >> 20} MB, "
                            "more than replay copies; give --workdir DIR (a copy you made), or "
                            "--in-place to replay in the folder itself")

    def kept(mode: int) -> bool:
        return stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)

    def skipped(top: str, names: list[str]) -> list[str]:
        left = [".toolwire"] if Path(top) == folder and ".toolwire" in names else []
        for name in names:
            with contextlib.suppress(OSError):
                if not kept(os.lstat(os.path.join(top, name)).st_mode):
                    left.append(name)
        return left

    try:
        shutil.copytree(folder, into, symlinks=True, ignore=skipped, copy_function=clone_file)
    except (OSError, shutil.Error) as exc:
        raise UserError(f"the recorded folder {folder} could not be copied to replay in "
                        f"({exc}); give --workdir DIR (a copy you made)") from None
    return into
