"""The command line's settings (default model, approval policy, sandbox, colour): each from its
flag, else the environment, else the config file, else a built-in default; and where it came
from.

Owns `SETTINGS`, `config_path`, `read_config`, `resolve`, `apply` and `Setting`. The config
file is TOML at ``$XDG_CONFIG_HOME/toolwire/config.toml`` (``~/.config/toolwire/config.toml``
when that variable is unset), with top-level keys named as in `SETTINGS`; ``TOOLWIRE_CONFIG`` names
another file. A file that cannot be read, an unknown key or a value of the wrong kind is a
`UserError` naming the file and the key. Imports only the command line's `common`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolwire.cli.common import UserError


@dataclass(frozen=True, slots=True)
class Spec:
    """One setting: its environment variable, the values it takes (None: any text), default."""

    env: str
    choices: tuple[str, ...] | None
    default: str | None
    help: str


SETTINGS: dict[str, Spec] = {
    "model": Spec("TOOLWIRE_MODEL", None, None, "the model id run and batch use without --model"),
    "approve": Spec("TOOLWIRE_APPROVE", ("ask", "auto", "never", "defer"), "ask",
                    "what run and resume do before a tool that changes things"),
    "sandbox": Spec("TOOLWIRE_SANDBOX", ("auto", "required", "landlock", "off"), "auto",
                    "where run and resume run commands (--sandbox)"),
    "color": Spec("TOOLWIRE_COLOR", ("auto", "always", "never"), "auto",
                  "colour on a terminal (NO_COLOR set: never)"),
}


@dataclass(frozen=True, slots=True)
class Setting:
    """A setting's value in effect and where it came from (a flag, a variable, a file)."""

    name: str
    value: str | None
    source: str


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the config file is looked for."""
    env = os.environ if env is None else env
    if env.get("TOOLWIRE_CONFIG"):
        return Path(env["TOOLWIRE_CONFIG"])
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "toolwire" / "config.toml"


def read_config(path: Path) -> dict[str, str]:
    """The settings in a config file ({} when there is none)."""
    import tomllib

    if not path.exists():
        return {}
    if path.is_dir():
        raise UserError(f"the config file {path} is a folder; make it a TOML file")
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise UserError(f"the config file {path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"the config file {path} is not valid TOML ({exc})") from None
    except OSError as exc:
        raise UserError(f"cannot read the config file {path}: {exc.strerror or exc}") from None
    found: dict[str, str] = {}
    for key, value in data.items():
        if key not in SETTINGS:
            raise UserError(f"the config file {path} has an unknown key {key!r}; the keys are "
                            + ", ".join(SETTINGS))
        found[key] = _checked(key, value, f"the config file {path}")
    return found


def _checked(key: str, value: object, where: str) -> str:
    spec = SETTINGS[key]
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"{where}: {key} must be a non-empty string, got {value!r}")
    if spec.choices is not None and value not in spec.choices:
        raise UserError(f"{where}: {key} must be one of {', '.join(spec.choices)}, got "
                        f"{value!r}")
    return value


def resolve(flags: Mapping[str, str | None], env: Mapping[str, str] | None = None
            ) -> dict[str, Setting]:
    """Every setting in effect: ``flags`` (a flag's value, None when not given) over the
    environment over the config file over the default."""
    env = os.environ if env is None else env
    path = config_path(env)
    config = read_config(path)
    found: dict[str, Setting] = {}
    for name, spec in SETTINGS.items():
        flag = flags.get(name)
        if flag is not None:
            found[name] = Setting(name, flag, f"the --{name} flag")
        elif name == "color" and env.get("NO_COLOR"):
            found[name] = Setting(name, "never", "NO_COLOR")
        elif env.get(spec.env):
            found[name] = Setting(name, _checked(name, env[spec.env], spec.env), spec.env)
        elif name in config:
            found[name] = Setting(name, config[name], f"the config file {path}")
        else:
            found[name] = Setting(name, spec.default, "the default")
    return found


def apply(args: Any) -> dict[str, Setting]:
    """Fill a command's settings not given as flags (its attributes named as in `SETTINGS`
    that are None) from the environment or the config file; refuse a command that takes a
    model and has none. Returns every setting in effect."""
    found = resolve({name: getattr(args, name, None) for name in SETTINGS})
    for name, setting in found.items():
        if hasattr(args, name):
            setattr(args, name, setting.value)
    if hasattr(args, "model") and not getattr(args, "model_source", None):
        args.model_source = found["model"].source.removeprefix("the ").replace(
            "--model flag", "--model")
    if hasattr(args, "model") and not args.model:
        raise UserError("no model: give --model ID, set TOOLWIRE_MODEL, or write model = "
                        f'"ID" in {config_path()}')
    return found
