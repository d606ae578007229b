"""A command tries to get out of its sandbox, one way per test, in every sandbox this machine has.

Each test runs real commands through ``run_command`` in each confining mode that works here
(bubblewrap, Landlock; a mode that cannot run is skipped with the reason), and checks the
result from outside: the file that was not made, the terminal that got no input, the listener
that saw no connection, toolwire's own limits and priority as they were. Attempts that only
root could make on its own (device nodes, raw sockets, typing into a terminal, the host name)
are marked ``root`` and skipped for other users; each of them also reads the command's own
``/proc/self/status``: no effective capability, no_new_privs set, a seccomp filter loaded, as
for every user (`test_the_command_has_no_privilege_and_a_filter`).
"""

from __future__ import annotations

import os
import select
import shlex
import socket
import subprocess
import sys
import textwrap
import tty
from pathlib import Path

import pytest
from tests.test_sandbox import run as run_in
from tests.users import DROP, as_ordinary_user, shared_folder

from toolwire.tools import landlock
from toolwire.tools.bwrap import bubblewrap

BWRAP, NO_BWRAP = bubblewrap()
ABI, NO_LANDLOCK = landlock.abi()
MODES = [pytest.param("required", id="bubblewrap",
                      marks=pytest.mark.skipif(BWRAP is None, reason=f"no bubblewrap: {NO_BWRAP}")),
         pytest.param("landlock", id="landlock",
                      marks=pytest.mark.skipif(ABI is None, reason=f"no Landlock: {NO_LANDLOCK}"))]
root = pytest.mark.skipif(os.geteuid() != 0, reason="only root could do this without a sandbox; "
                          "run the tests as root to try it")
STATUS = "; grep -E '^(CapEff|CapPrm|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status"


def run(ws: Path, command: str, mode: str, **kw: object) -> str:
    return run_in(ws, command, sandbox=mode, **kw)


def python(code: str) -> str:
    """A shell word that runs ``code`` with the Python running the tests."""
    return f"{sys.executable} -c {shlex.quote(textwrap.dedent(code))}"


def assert_unprivileged(out: str) -> None:
    """The command's own status, as `STATUS` printed it: no capability, no way to gain one,
    and a seccomp filter."""
    status = dict(line.split(":\t") for line in out.splitlines() if ":\t" in line)
    status.pop("CapBnd", None)
    assert status == {"CapEff": "0000000000000000", "CapPrm": "0000000000000000",
                      "CapAmb": "0000000000000000", "NoNewPrivs": "1", "Seccomp": "2"}, out


@pytest.mark.parametrize("mode", MODES)
def test_the_command_has_no_privilege_and_a_filter(tmp_path: Path, mode: str) -> None:
    out = run(tmp_path, "grep -E '^CapBnd:' /proc/self/status" + STATUS, mode)
    assert_unprivileged(out)
    if os.geteuid() == 0:  # root may empty the bounding set too, and does
        assert "CapBnd:\t0000000000000000" in out


STATUS_AS_USER = DROP + textwrap.dedent("""
    import sys
    from pathlib import Path
    print(Sandbox(sys.argv[2]).run(Path(sys.argv[1]), sys.argv[3], 60).output)
""")


@pytest.mark.parametrize("mode", MODES)
def test_an_ordinary_users_command_has_no_privilege_and_a_filter(shared_folder: Path,
                                                                 mode: str) -> None:
    argv = [sys.executable, "-c", STATUS_AS_USER, str(shared_folder), mode, "id -u" + STATUS]
    proc = subprocess.run(as_ordinary_user(argv), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    uid = proc.stdout.split()[0]
    assert uid != "0" or mode == "required", proc.stdout  # bubblewrap maps the user to itself
    assert_unprivileged(proc.stdout)


@root
@pytest.mark.parametrize("mode", MODES)
def test_no_device_node_can_be_made(tmp_path: Path, mode: str) -> None:
    made = python("""
        import os, stat
        for name, kind in (("blk2", stat.S_IFBLK), ("chr2", stat.S_IFCHR)):
            try:
                os.mknod(name, kind | 0o600, os.makedev(7, 0)); print("made", name)
            except OSError as exc:
                print("refused", name, exc.strerror)
    """)
    out = run(tmp_path, f"mknod ./blk b 7 0; mknod ./chr c 1 3; {made}; mkfifo fifo && "
                        "echo fifo-made" + STATUS, mode)
    assert "made" not in out.replace("fifo-made", "") and "refused blk2" in out, out
    assert not any((tmp_path / n).exists() for n in ("blk", "chr", "blk2", "chr2"))
    assert "fifo-made" in out  # FIFOs are still allowed
    assert_unprivileged(out)


@root
@pytest.mark.parametrize("mode", MODES)
def test_no_keystrokes_reach_another_terminal(tmp_path: Path, mode: str) -> None:
    main, other = os.openpty()
    try:
        tty.setraw(other)
        inject = python(f"""
            import fcntl, os, termios
            try:
                fd = os.open({os.ttyname(other)!r}, os.O_RDONLY | os.O_NOCTTY)
            except OSError as exc:
                raise SystemExit(f"no terminal: {{exc.strerror}}")
            for ch in b"pwned":
                try:
                    fcntl.ioctl(fd, termios.TIOCSTI, bytes([ch])); print("typed")
                except OSError as exc:
                    print("refused", exc.strerror)
            try:
                fcntl.ioctl(fd, 0x541C, bytes([12, 0]))  # TIOCLINUX
            except OSError as exc:
                print("TIOCLINUX", exc.strerror)
        """)
        out = run(tmp_path, inject + STATUS, mode)
        readable, _, _ = select.select([other], [], [], 0)
        assert readable == [], os.read(other, 100)  # nothing was typed into it
        assert "typed" not in out, out
        if mode == "landlock":
            assert "refused Operation not permitted" in out
            assert "TIOCLINUX Operation not permitted" in out
        assert_unprivileged(out)
    finally:
        os.close(main)
        os.close(other)


@pytest.mark.skipif(ABI is None or ABI < 5, reason=f"no Landlock device rules here (ABI {ABI})")
def test_under_landlock_devices_take_no_ioctl_but_the_usual_ones(tmp_path: Path) -> None:
    main, other = os.openpty()
    terminal = os.ttyname(other)
    try:
        probe = python(f"""
            import fcntl, os, termios
            for path in ({terminal!r}, "/dev/null"):
                fd = os.open(path, os.O_RDONLY | os.O_NOCTTY)
                try:
                    fcntl.ioctl(fd, termios.TIOCGWINSZ, bytes(8)); print(path, "answered")
                except OSError as exc:
                    print(path, exc.strerror)
        """)
        out = run(tmp_path, probe, "landlock")
    finally:
        os.close(main)
        os.close(other)
    assert f"{terminal} Permission denied" in out, out  # Landlock refused it
    assert "/dev/null Inappropriate ioctl for device" in out, out  # the device answered


@root
@pytest.mark.parametrize("mode", MODES)
def test_no_raw_or_packet_socket(tmp_path: Path, mode: str) -> None:
    probe = python("""
        import socket as s
        for family, kind, proto in ((s.AF_INET, s.SOCK_RAW, 1), (s.AF_INET6, s.SOCK_RAW, 58),
                                    (s.AF_PACKET, s.SOCK_RAW, 0), (s.AF_PACKET, s.SOCK_DGRAM, 0),
                                    (s.AF_INET, s.SOCK_RAW | s.SOCK_CLOEXEC, 255)):
            try:
                s.socket(family, kind, proto).close(); print("opened", family, kind)
            except OSError as exc:
                print("refused", exc.strerror)
        s.socket(s.AF_UNIX, s.SOCK_DGRAM).close(); print("unix ok")
    """)
    out = run(tmp_path, probe + STATUS, mode)
    assert "opened" not in out and out.count("refused") == 5 and "unix ok" in out, out
    assert_unprivileged(out)


@root
@pytest.mark.parametrize("mode", MODES)
def test_the_host_and_domain_name_cannot_be_changed(tmp_path: Path, mode: str) -> None:
    host = socket.gethostname()
    domain = Path("/proc/sys/kernel/domainname").read_text().strip()
    # set to what they are: a sandbox that failed would change nothing
    change = python(f"""
        import ctypes, socket
        try:
            socket.sethostname({host!r}); print("host changed")
        except OSError as exc:
            print("host refused", exc.strerror)
        libc = ctypes.CDLL(None, use_errno=True)
        name = {domain.encode()!r}
        print("domain", "changed" if libc.setdomainname(name, len(name)) == 0 else
              "refused " + str(ctypes.get_errno()))
    """)
    out = run(tmp_path, change + STATUS, mode)
    assert "host refused" in out and "domain refused" in out and "changed" not in out, out
    assert socket.gethostname() == host
    assert_unprivileged(out)


def _mptcp_works() -> bool:
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262).close()
        return True
    except OSError:
        return False


def _fast_open_client() -> bool:
    try:
        return int(Path("/proc/sys/net/ipv4/tcp_fastopen").read_text()) & 1 == 1
    except (OSError, ValueError):
        return False


TRY_TCP = """
    import socket
    try:
        c = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262); c.settimeout(5)
        c.connect(("127.0.0.1", {port})); print("mptcp connected")
    except OSError as exc:
        print("mptcp refused", exc.strerror)
    try:
        c = socket.socket()
        c.sendto(b"x", socket.MSG_FASTOPEN, ("127.0.0.1", {port})); print("fastopen connected")
    except OSError as exc:
        print("fastopen refused", exc.strerror)
"""


@pytest.mark.skipif(not _mptcp_works(), reason="this kernel offers no MPTCP sockets")
@pytest.mark.parametrize("mode", MODES)
def test_no_mptcp_or_fast_open_connection_without_network(tmp_path: Path, mode: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        probe = python(TRY_TCP.format(port=server.getsockname()[1]))
        out = run(tmp_path, probe, mode)
        assert "mptcp refused" in out and "fastopen refused" in out, out
        with pytest.raises(BlockingIOError):
            server.accept()  # nothing reached the listener
        allowed = run(tmp_path, probe, mode, allow_network=True)
        assert "mptcp connected" in allowed, allowed
        if _fast_open_client():
            assert "fastopen connected" in allowed, allowed


TOOLWIRE_ITSELF = textwrap.dedent("""
    import os, resource, shlex, sys
    from toolwire.tools.coding import coding_tools
    t = {x.name: x for x in coding_tools(sys.argv[1], sandbox=sys.argv[2])}["run_command"]
    me = os.getpid()
    def state():
        return (resource.getrlimit(resource.RLIMIT_NOFILE), os.getpriority(os.PRIO_PROCESS, 0),
                sorted(os.sched_getaffinity(0)))
    before = state()
    attack = "; ".join(f"{{ {act}; }} >/dev/null 2>&1 && echo {name} done || echo {name} refused"
                       for name, act in (
        ("prlimit", f"prlimit --pid {me} --nofile=64:64"),
        ("renice", f"renice -n 19 -p {me}"),
        # every process of the user: only tried as an ordinary user, never on all of root's
        ("renice-user", "renice -n 19 -u $(id -u)" if os.getuid() else "false"),
        ("affinity", f"taskset -p 1 {me}"),
        ("own-limit", "ulimit -n 99"),
        ("own-nice", "nice -n 5 true")))
    out = t.call(t.validate({"command": attack}))
    print(out)
    print("unchanged" if state() == before else f"changed {before} -> {state()}")
""")


@pytest.mark.parametrize("user", ["as is", "ordinary"])
@pytest.mark.parametrize("mode", MODES)
def test_the_command_cannot_change_toolwire_itself(shared_folder: Path, mode: str,
                                                   user: str) -> None:
    argv = [sys.executable, "-c", DROP + TOOLWIRE_ITSELF, str(shared_folder), mode]
    proc = subprocess.run(as_ordinary_user(argv) if user == "ordinary" else argv,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.rstrip().endswith("unchanged"), out
    for refused in ("prlimit", "renice", "renice-user", "affinity"):
        assert f"{refused} refused" in out, out
    assert "own-limit done" in out and "own-nice done" in out, out


UNDER_LIMITS = textwrap.dedent("""
    import sys
    from toolwire.tools.coding import coding_tools
    t = {x.name: x for x in coding_tools(sys.argv[1], sandbox=sys.argv[2])}["run_command"]
    print(t.call(t.validate({"command": "ulimit -v; ulimit -f; ulimit -t; echo ran"})))
""")


def _held_low() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))  # ulimit -v 4194304
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))
    resource.setrlimit(resource.RLIMIT_CPU, (300, 300))


@pytest.mark.parametrize("mode", [*MODES, "off", "auto"])
def test_a_command_starts_under_lower_hard_limits_already_in_force(tmp_path: Path,
                                                                   mode: str) -> None:
    argv = [sys.executable, "-c", UNDER_LIMITS, str(tmp_path), mode]
    if os.geteuid() == 0:  # root could raise a hard limit again: take that right away
        argv = ["setpriv", "--bounding-set", "-sys_resource", "--inh-caps", "-sys_resource",
                "--", *argv]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          preexec_fn=_held_low)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["exit", "code", "0", str(4 << 20), str(2 << 20), "300",
                                   "ran"], proc.stdout


@pytest.mark.skipif(BWRAP is None, reason=f"no bubblewrap: {NO_BWRAP}")
@pytest.mark.parametrize("network", [False, True])
def test_bubblewrap_reaches_no_unix_socket_outside_the_workspace(
        tmp_path: Path, outside: Path, network: bool) -> None:
    far, near = socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX)
    far.bind(str(outside / "daemon.sock"))
    near.bind(str(tmp_path / "own.sock"))
    for listener in (far, near):
        listener.listen(1)
        listener.setblocking(False)
    probe = python(f"""
        import socket
        for path in ({str(outside / "daemon.sock")!r}, "own.sock"):
            try:
                socket.socket(socket.AF_UNIX).connect(path); print("reached", path)
            except OSError as exc:
                print("refused", path, exc.strerror)
    """)
    try:
        out = run(tmp_path, probe, "required", allow_network=network)
        assert f"refused {outside}/daemon.sock" in out and "reached own.sock" in out, out
        with pytest.raises(BlockingIOError):
            far.accept()
    finally:
        far.close()
        near.close()


def test_the_seccomp_filter_turned_off_means_no_landlock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolwire.tools.sandbox import Sandbox, SandboxError

    monkeypatch.setenv("TOOLWIRE_SECCOMP", "off")
    with pytest.raises(SandboxError, match=r"Landlock was required but .*TOOLWIRE_SECCOMP=off"):
        Sandbox("landlock")
    monkeypatch.setenv("TOOLWIRE_BWRAP", str(tmp_path / "no-bwrap"))
    weak = Sandbox("auto")  # never Landlock without its filter: the next mode, saying why
    assert weak.kind is None and "TOOLWIRE_SECCOMP=off" in (weak.note() or "")
    assert "NOT confined" in weak.describe()


@pytest.mark.skipif(BWRAP is None, reason=f"no bubblewrap: {NO_BWRAP}")
def test_bubblewrap_without_the_filter_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolwire.tools.sandbox import Sandbox

    monkeypatch.setenv("TOOLWIRE_SECCOMP", "off")
    assert "without a seccomp filter: the seccomp filter was turned off" in Sandbox().describe()


__all__ = ["shared_folder"]  # a fixture, used by name
