"""Settings on the command line: a flag over the environment over the config file over the
default, `toolwire config show` naming where each value came from, and real runs that take
their model and approval policy from the environment or the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolwire.cli.app import main
from toolwire.cli.settings import config_path, resolve
from toolwire.emulator import Emulator

CLEAN = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")
         and k not in ("TOOLWIRE_MODEL", "TOOLWIRE_APPROVE", "TOOLWIRE_SANDBOX", "TOOLWIRE_COLOR",
                       "TOOLWIRE_CONFIG", "NO_COLOR", "XDG_CONFIG_HOME")}
CLOSED = "anthropic:m@http://127.0.0.1:9"  # nothing listens there


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """An environment whose config folder is empty, under tmp_path."""
    return {**CLEAN, "XDG_CONFIG_HOME": str(tmp_path / "config")}


def write_config(env: dict[str, str], text: str) -> Path:
    path = config_path(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_config_file_lives_under_xdg_config_home_or_home() -> None:
    assert config_path({"XDG_CONFIG_HOME": "/x"}) == Path("/x/toolwire/config.toml")
    assert config_path({"HOME": "/home/a"}) == Path("/home/a/.config/toolwire/config.toml")
    assert config_path({"TOOLWIRE_CONFIG": "/etc/tw.toml", "XDG_CONFIG_HOME": "/x"}) == Path(
        "/etc/tw.toml")


def test_flag_over_environment_over_file_over_default(home: dict[str, str]) -> None:
    path = write_config(home, 'model = "ollama:from-file"\napprove = "never"\n')
    found = resolve({}, home)
    assert (found["model"].value, found["model"].source) == (
        "ollama:from-file", f"the config file {path}")
    assert (found["color"].value, found["color"].source) == ("auto", "the default")
    env = {**home, "TOOLWIRE_MODEL": "ollama:from-env", "TOOLWIRE_APPROVE": "auto"}
    found = resolve({}, env)
    assert (found["model"].value, found["model"].source) == ("ollama:from-env", "TOOLWIRE_MODEL")
    assert (found["approve"].value, found["approve"].source) == ("auto", "TOOLWIRE_APPROVE")
    found = resolve({"model": "ollama:from-flag", "approve": None}, env)
    assert (found["model"].value, found["model"].source) == ("ollama:from-flag",
                                                             "the --model flag")
    assert found["approve"].value == "auto"


def test_no_color_turns_colour_off_unless_a_flag_says_otherwise(home: dict[str, str]) -> None:
    write_config(home, 'color = "always"\n')
    env = {**home, "NO_COLOR": "1", "TOOLWIRE_COLOR": "always"}
    assert (resolve({}, env)["color"].value, resolve({}, env)["color"].source) == (
        "never", "NO_COLOR")
    assert resolve({"color": "always"}, env)["color"].value == "always"


def test_config_show_names_each_value_and_its_source(
        home: dict[str, str], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(home, 'model = "ollama:from-file"\nsandbox = "off"\n')
    for key in [k for k in os.environ if k not in home]:
        monkeypatch.delenv(key)
    for key, value in {**home, "TOOLWIRE_APPROVE": "never"}.items():
        monkeypatch.setenv(key, value)
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"config file: {path}",
                   f"model = ollama:from-file  (from the config file {path})",
                   "approve = never  (from TOOLWIRE_APPROVE)",
                   f"sandbox = off  (from the config file {path})",
                   "color = auto  (from the default)",
                   "mcp_read_only = ask  (from the default)",
                   "max_seconds = -  (from the default)",
                   "idle_seconds = 300  (from the default)",
                   "max_body = 64MiB  (from the default)",
                   "max_decoded = 256MiB  (from the default)",
                   "max_line = 16MiB  (from the default)",
                   "max_error_body = 1MiB  (from the default)"]
    assert main(["config", "show", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["settings"]["approve"] == {"value": "never", "from": "TOOLWIRE_APPROVE"}
    assert data["config_file_exists"] is True


def toolwire(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire", *args], capture_output=True,
                          text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)


WRITE = [{"tool_calls": [{"id": "call_1", "name": "write_file",
                          "arguments": {"path": "a.txt", "content": "A"}}]},
         {"text": "Done."}]


def test_runs_take_the_model_and_approval_from_env_or_file(tmp_path: Path,
                                                           home: dict[str, str]) -> None:
    work = tmp_path / "w"
    work.mkdir()
    with Emulator(WRITE * 3) as emu:
        live = f"anthropic:m@{emu.base_url}"
        write_config(home, f'model = "{live}"\napprove = "auto"\n')
        from_file = toolwire("run", "go", "--workdir", str(work), "--json", env=home)
        assert from_file.returncode == 0, from_file.stderr
        assert (work / "a.txt").read_text() == "A"  # approve = "auto" from the file
        (work / "a.txt").unlink()
        # the environment wins over the file; a flag wins over the environment
        env = {**home, "TOOLWIRE_MODEL": CLOSED, "TOOLWIRE_APPROVE": "never"}
        flagged = toolwire("run", "go", "--workdir", str(work), "--model", live, "--json",
                           env=env)
        assert flagged.returncode == 0, flagged.stderr
        assert not (work / "a.txt").exists()  # approve never, from TOOLWIRE_APPROVE
        env_model = toolwire("run", "go", "--workdir", str(work), "--json", env=env)
    assert env_model.returncode == 1  # TOOLWIRE_MODEL names a closed port: the run fails
    assert json.loads(env_model.stdout)["stop"] == "provider_error"
    assert json.loads(from_file.stdout)["answer"] == "Done."


def test_no_model_anywhere_says_the_three_ways_to_give_one(tmp_path: Path,
                                                           home: dict[str, str]) -> None:
    proc = toolwire("run", "go", "--workdir", str(tmp_path), env=home)
    assert proc.returncode == 2
    assert "give --model ID, set TOOLWIRE_MODEL" in proc.stderr
    assert str(config_path(home)) in proc.stderr


def test_python_dash_m_toolwire_is_the_command() -> None:
    proc = toolwire("--help", env={**CLEAN, "COLUMNS": "80"})
    assert proc.returncode == 0 and proc.stdout.startswith("usage: toolwire ")


def test_the_sandbox_setting_reaches_the_run(tmp_path: Path, home: dict[str, str]) -> None:
    with Emulator([{"text": "Done."}, {"text": "Done."}]) as emu:
        model = f"anthropic:m@{emu.base_url}"
        write_config(home, 'sandbox = "off"\n')
        from_file = toolwire("run", "x", "--model", model, "--workdir", str(tmp_path), env=home)
        flagged = toolwire("run", "x", "--model", model, "--workdir", str(tmp_path),
                           "--sandbox", "auto", env={**home, "TOOLWIRE_SANDBOX": "off"})
    assert from_file.returncode == flagged.returncode == 0, from_file.stderr
    assert "with the whole environment" in from_file.stderr  # off: nothing cleaned
    assert "with the whole environment" not in flagged.stderr
