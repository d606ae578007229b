"""Where commands run: a bubblewrap sandbox, Landlock, or plainly where neither can be had.

Owns `Sandbox`, `SandboxError` and `SANDBOX_MODES`. A sandbox picks one of three strategies
with the same methods, once, when it is made: `toolwire.tools.bwrap.Bubblewrap` (Linux with a
working ``bwrap``), `toolwire.tools.strategy.Landlocked` (where bwrap cannot run but the kernel
has Landlock and takes toolwire's seccomp filter) or `toolwire.tools.strategy.Unconfined` (no
Linux, neither of those, or mode ``off``). Whichever it is, each command gets the same limits
(`toolwire.tools.strategy.Bounds`): a cgroup of its own where one can be made, else limits per
process, never above the hard limits already in force. `Sandbox.describe` says which a run has,
in words meant for the person running it. Mode ``required`` refuses to start without
bubblewrap, mode ``landlock`` without Landlock (or without the seccomp filter it comes with).

Must not import codecs, the transport or the loop.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal

from toolwire import records
from toolwire.errors import ConfigError
from toolwire.tools import landlock, seccomp
from toolwire.tools.bwrap import Bubblewrap, bubblewrap, find_bwrap, interpreter_binds
from toolwire.tools.process import Finished, Limits
from toolwire.tools.strategy import (
    ENV_ALLOW,
    Bounds,
    Kind,
    Landlocked,
    Strategy,
    Unconfined,
    clean_env,
)

SandboxMode = Literal["required", "auto", "landlock", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("required", "auto", "landlock", "off")


class SandboxError(ConfigError):
    """The sandbox was required and cannot run here."""


def _landlock(why_not_bwrap: str | None, passed: Mapping[str, str]) -> tuple[
        Landlocked | None, str | None]:
    """The Landlock strategy, or None and why it cannot be had here."""
    abi, why = landlock.abi()
    if abi is None:
        return None, why
    problem = seccomp.problem()
    if problem is not None:
        return None, f"Landlock is here but {problem}"
    return Landlocked(abi, passed, why_not_bwrap), None


class Sandbox:
    """How the command tools run their commands (see the module docstring).

    ``mode``: ``auto`` (the bubblewrap sandbox where it works, else Landlock where the kernel
    has it, else plainly, saying so), ``required`` (`SandboxError` where bubblewrap does not
    work), ``landlock`` (Landlock, or `SandboxError`) or ``off``. ``pass_env`` names variables
    to give commands as they are in toolwire's environment, or maps names to values. ``limits``
    bounds each command's CPU time, memory, file size, processes and kept output.
    """

    def __init__(self, mode: SandboxMode = "auto", *,
                 pass_env: Iterable[str] | Mapping[str, str] = (),
                 limits: Limits | None = None, protect: Iterable[Path] = ()) -> None:
        if mode not in SANDBOX_MODES:
            raise ConfigError(f"sandbox mode {mode!r} is not one of {', '.join(SANDBOX_MODES)}")
        self.mode: SandboxMode = mode
        self.limits = limits or Limits()
        self.passed = (dict(pass_env) if isinstance(pass_env, Mapping)
                       else {k: os.environ[k] for k in pass_env if k in os.environ})
        self.why_not: str | None = None
        self.strategy: Strategy = self._choose()
        if isinstance(self.strategy, Bubblewrap):  # a run's records inside the workspace
            self.strategy.protect = tuple(protect)
        self.bounds = Bounds(self.limits)

    def _choose(self) -> Strategy:
        mode = self.mode
        if mode == "off":
            self.why_not = "the sandbox was turned off"
            return Unconfined(self.passed, whole_env=True, why=self.why_not)
        if mode != "landlock":
            bwrap, self.why_not = bubblewrap()
            if bwrap is not None:
                return Bubblewrap(bwrap, self.passed)
            if mode == "required":
                raise SandboxError(f"a sandbox was required but {self.why_not}; run where user "
                                   "namespaces work, or choose sandbox 'landlock', 'auto' or "
                                   "'off'")
        locked, no_landlock = _landlock(self.why_not, self.passed)
        if locked is not None:
            return locked
        if mode == "landlock":
            self.why_not = no_landlock
            raise SandboxError(f"Landlock was required but {no_landlock}; choose sandbox "
                               "'auto', 'required' or 'off'")
        self.why_not = f"{self.why_not}; {no_landlock}"
        return Unconfined(self.passed, whole_env=False, why=self.why_not)

    @property
    def kind(self) -> Kind:
        """What confines commands: ``bubblewrap``, ``landlock`` or nothing (None)."""
        return self.strategy.kind

    @property
    def bwrap(self) -> str | None:
        """The ``bwrap`` commands run in (None: not bubblewrap)."""
        return self.strategy.bwrap if isinstance(self.strategy, Bubblewrap) else None

    @property
    def landlock(self) -> int | None:
        """The Landlock ABI version commands are confined with (None: not Landlock)."""
        return self.strategy.abi if isinstance(self.strategy, Landlocked) else None

    @property
    def confined(self) -> bool:
        return self.kind is not None

    def describe(self, network: bool = False) -> str:
        """What confines commands in this run, and how their limits hold."""
        return f"{self.strategy.describe(network)}; {self.bounds.describe()}"

    def note(self) -> str | None:
        """For a run's notes once a command ran: None when confined, else that it was not."""
        if self.confined:
            return None
        env = "the whole environment" if self.mode == "off" else "a cleaned environment"
        return (f"commands ran unconfined, without a sandbox ({self.why_not}): as you, able to "
                f"read and write anywhere you can and reach the network, with {env}")

    def run(self, root: Path, command: str, timeout: float, *, network: bool = False) -> Finished:
        if self.kind != "bubblewrap":  # the command can read the record key: say so for later
            records.mark_exposed(root)
        return self.strategy.run(root, command, timeout, network=network, bounds=self.bounds)


__all__ = ["ENV_ALLOW", "SANDBOX_MODES", "Sandbox", "SandboxError", "SandboxMode", "clean_env",
           "find_bwrap", "interpreter_binds"]
