"""Shared test setup: makes tests/ importable (for strategies.py) and keeps tests on loopback;
gives the session its own toolwire state directory; registers the wires TOOLWIRE_TEST_WIRES
names; the ``outside`` fixture (a folder outside
any workspace) for the command sandbox tests; hypothesis's settings for the whole suite.

Every IPv4/IPv6 socket connect in the test process is checked: only loopback addresses
(127.0.0.0/8, ::1, localhost) may be reached, so no test can touch the network by mistake.
"""

from __future__ import annotations

import importlib
import ipaddress
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).parent))

# A property test is judged by what it finds, never by how fast its examples came: on a machine
# busy with other work, drawing from a pattern or running an example can take seconds, which
# hypothesis would otherwise call a failed test (too slow to generate, or over its deadline).
settings.register_profile("toolwire", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("toolwire")

# toolwire's state directory (default run logs, the record key) for this test session alone:
# the tests and every command they start share it (also those given an environment without
# TOOLWIRE_ variables: XDG_STATE_HOME leads to the same folder), and the user's own is never
# touched.
if "TOOLWIRE_STATE_DIR" not in os.environ:
    _state = tempfile.mkdtemp(prefix="toolwire-state-")
    os.environ["XDG_STATE_HOME"] = _state
    os.environ["TOOLWIRE_STATE_DIR"] = os.path.join(_state, "toolwire")

# Wires added for this session (TOOLWIRE_TEST_WIRES=module,...: each module's RECORD, and its
# PROVIDER if it has one), before the tests are collected, so that the tests looping over the
# registry run for them too (tests/wire_data, tests/test_wire_data.py).
for _module in filter(None, os.environ.get("TOOLWIRE_TEST_WIRES", "").split(",")):
    from toolwire.codecs.registry import register_wire
    from toolwire.http.providers import register_provider

    _added = importlib.import_module(_module.strip())
    register_wire(_added.RECORD)
    if getattr(_added, "PROVIDER", None) is not None:
        register_provider(_added.PROVIDER)

_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def _check(sock: socket.socket, address: Any) -> None:
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    host = str(address[0])
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ConnectionRefusedError(f"tests may only connect to loopback, not {address!r}")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(self, address)
    _connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(self, address)
    return _connect_ex(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]


@pytest.fixture
def outside() -> Iterator[Path]:
    """A real folder outside the workspace and outside /tmp (which a sandbox replaces)."""
    folder = Path(tempfile.mkdtemp(prefix="toolwire-outside-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def remembered_secrets_stay_in_their_test() -> Iterator[None]:
    """What a test gave `toolwire.secrets.remember` (an MCP token, a header) is forgotten when
    it ends: in a program it is kept for the life of the process, but one test's secrets must
    not show up in the next test's `known_secrets`."""
    from toolwire import secrets

    kept = dict(secrets._REMEMBERED)
    yield
    secrets._REMEMBERED.clear()
    secrets._REMEMBERED.update(kept)
