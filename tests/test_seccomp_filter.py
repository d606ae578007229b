"""The seccomp filter's program, run by a small classic-BPF interpreter against what it should
decide, for both machines it is written for (the kernel runs it in tests/test_sandbox_escapes.py
on this machine's own).

Every system call the filter looks at, with arguments drawn from the values that matter and
from anywhere, and calls it does not look at, from the right ABI, another ABI and x32.
"""

from __future__ import annotations

import errno
import struct

from hypothesis import given
from hypothesis import strategies as st

from toolwire.tools import seccomp

ALLOW = 0x7FFF_0000
EPERM = 0x0005_0000 | errno.EPERM
ENOSYS = 0x0005_0000 | errno.ENOSYS


def evaluate(code: bytes, nr: int, arch: int, args: list[int]) -> int:
    """What the program returns for one call (only the instructions the filter uses)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args)
    program = [struct.unpack_from("<HBBI", code, at) for at in range(0, len(code), 8)]
    pc = a = 0
    for _ in range(len(program)):  # no loops in classic BPF: every jump is forward
        op, jt, jf, k = program[pc]
        if op == 0x20:
            a = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif op == 0x54:
            a &= k
            pc += 1
        elif op in (0x15, 0x35, 0x45):
            taken = a == k if op == 0x15 else a >= k if op == 0x35 else bool(a & k)
            pc += 1 + (jt if taken else jf)
        elif op == 0x06:
            return int(k)
        else:
            raise AssertionError(f"an instruction the interpreter does not know: {op:#x}")
    raise AssertionError("the program ran off its end")


def expected(name: str | None, args: list[int], *, network: bool) -> int:
    """What the filter should decide, written from its description, not its code."""
    a = [x & 0xFFFF_FFFF for x in args]
    deny = False
    if name is None:
        return ALLOW
    if name.startswith("io_uring"):
        return ENOSYS
    if name == "ioctl":
        deny = a[1] in (0x5412, 0x541C)
    elif name == "socket":
        deny = (a[0] == 17 or (a[0] in (2, 10) and a[1] & 0xF in (3, 10))
                or (not network and a[2] == 262))
    elif name in ("sethostname", "setdomainname"):
        deny = True
    elif name in ("prlimit64", "sched_setparam", "sched_setscheduler", "sched_setaffinity",
                  "sched_setattr"):
        deny = a[0] != 0
    elif name in ("setpriority", "ioprio_set"):
        deny = a[0] == (2 if name == "setpriority" else 3) or a[1] != 0
    elif name in ("mknod", "mknodat"):
        deny = a[1 if name == "mknod" else 2] & 0o170000 in (0o020000, 0o060000)
    elif name in ("sendto", "sendmsg", "sendmmsg"):
        deny = not network and bool(a[2 if name == "sendmsg" else 3] & 0x2000_0000)
    return EPERM if deny else ALLOW


VALUES = [0, 1, 2, 3, 10, 17, 262, 0x5412, 0x541C, 0o020644, 0o060600, 0o010644, 0o100644,
          0x2000_0000, 0x2000_0040, 3 | 0x80000, 10 | 0x800, 1 << 32, (1 << 32) | 262,
          0xFFFF_FFFF, 4242]
"""Argument values the filter tells apart (and a few it must not), in every position."""
ARG = st.one_of(st.sampled_from(VALUES), st.integers(0, (1 << 64) - 1))


@given(machine=st.sampled_from(["x86_64", "aarch64"]), network=st.booleans(),
       call=st.data(), args=st.lists(ARG, min_size=6, max_size=6))
def test_the_filter_decides_each_call_as_described(machine: str, network: bool,
                                                   call: st.DataObject, args: list[int]) -> None:
    arch = seccomp.ARCHES[machine]
    code = seccomp.program(network=network, machine=machine)
    watched = {nr: name for name, nr in arch.calls.items()}
    nr = call.draw(st.one_of(st.sampled_from(sorted(watched)), st.integers(0, 1023)))
    assert evaluate(code, nr, arch.audit, args) == expected(watched.get(nr), args,
                                                           network=network)


@given(machine=st.sampled_from(["x86_64", "aarch64"]), nr=st.integers(0, 1023),
       args=st.lists(ARG, min_size=6, max_size=6))
def test_every_call_of_another_abi_is_refused(machine: str, nr: int, args: list[int]) -> None:
    arch = seccomp.ARCHES[machine]
    code = seccomp.program(network=True, machine=machine)
    for other in (0x4000_0003, 0x4000_0028, 0xC000_003E, 0xC000_00B7):  # i386, arm, natives
        if other != arch.audit:
            assert evaluate(code, nr, other, args) == ENOSYS
    if arch.x32:
        assert evaluate(code, nr | 0x4000_0000, arch.audit, args) == ENOSYS



def test_each_value_that_matters_in_each_argument_of_each_call() -> None:
    for machine, arch in (("x86_64", seccomp.ARCHES["x86_64"]),
                          ("aarch64", seccomp.ARCHES["aarch64"])):
        for network in (False, True):
            code = seccomp.program(network=network, machine=machine)
            for name, nr in arch.calls.items():
                for position in range(6):
                    for value in VALUES:
                        for base in (0, 2, 10):
                            args = [base] * 6
                            args[position] = value
                            assert evaluate(code, nr, arch.audit, args) == expected(
                                name, args, network=network), (machine, name, args, network)
