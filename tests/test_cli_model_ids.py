"""Model ids on the command line: cloud ids checked against the real environment (only what
is really missing is refused, and named), and an id without its provider answered with the
full id and where the value came from. Real subprocesses; the Azure run goes to the emulator
on loopback through ``AZURE_OPENAI_ENDPOINT``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolwire.emulator import Emulator

CLOUD_VARS = ("AWS_", "GOOGLE_", "AZURE_", "TOOLWIRE_")
BASE = {k: v for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith(CLOUD_VARS)}


def toolwire(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], capture_output=True,
                          text=True, env={**BASE, "HOME": str(cwd),
                                          "AWS_SHARED_CREDENTIALS_FILE": str(cwd / "none"),
                                          "AWS_CONFIG_FILE": str(cwd / "none"), **env},
                          timeout=120, cwd=cwd, input="")


@pytest.mark.parametrize("command", [["run", "hi"], ["chat"], ["demo"]])
def test_an_azure_id_runs_with_its_endpoint_from_the_environment(tmp_path: Path,
                                                                command: list[str]) -> None:
    if command[0] != "demo":
        (tmp_path / "w").mkdir()
    with Emulator([{"text": "Hello from Azure."}] * 3) as emu:
        env = {"AZURE_OPENAI_ENDPOINT": emu.base_url, "AZURE_OPENAI_API_KEY": "k"}
        proc = toolwire(*command, "--model", "azure:dep", "--workdir", str(tmp_path / "w"),
                        env=env, cwd=tmp_path)
    assert "needs its resource" not in proc.stderr, proc.stderr
    if command[0] == "run":
        assert proc.returncode == 0, proc.stderr
        assert "Hello from Azure." in proc.stdout
        assert emu.received and emu.received[0].headers["api-key"] == "k"


@pytest.mark.parametrize(("model", "env", "named", "not_named"), [
    ("bedrock:anthropic.claude", {"AWS_REGION": "us-east-1"}, "needs credentials",
     "needs a region"),
    ("bedrock-anthropic:anthropic.claude", {"AWS_DEFAULT_REGION": "eu-west-3"},
     "needs credentials", "needs a region"),
    ("vertex:gemini", {"GOOGLE_CLOUD_PROJECT": "p"}, "needs GOOGLE_CLOUD_LOCATION:",
     "GOOGLE_CLOUD_PROJECT and"),
    ("vertex-anthropic:claude", {"GOOGLE_CLOUD_LOCATION": "global"},
     "needs GOOGLE_CLOUD_PROJECT:", "and GOOGLE_CLOUD_LOCATION:"),
    ("azure:dep", {"AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com"}, "needs a key",
     "needs its resource"),
    ("azure-responses:dep", {"AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com"},
     "needs a key", "needs its resource"),
])
@pytest.mark.parametrize("how", ["flag", "TOOLWIRE_MODEL"])
def test_a_cloud_id_is_refused_only_for_what_is_really_missing(
        tmp_path: Path, model: str, env: dict[str, str], named: str, not_named: str,
        how: str) -> None:
    args = ["run", "hi", "--workdir", str(tmp_path)]
    if how == "flag":
        proc = toolwire(*args, "--model", model, env=env, cwd=tmp_path)
    else:
        proc = toolwire(*args, env={**env, "TOOLWIRE_MODEL": model}, cwd=tmp_path)
    assert proc.returncode == 2
    assert named in proc.stderr and not_named not in proc.stderr, proc.stderr
    assert ("--model:" if how == "flag" else "TOOLWIRE_MODEL:") in proc.stderr
    assert list(tmp_path.iterdir()) == []  # nothing created


def test_resume_checks_the_logs_cloud_id_against_the_environment(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    with Emulator([{"text": "Hello."}, {"text": "Again."}]) as emu:
        env = {"AZURE_OPENAI_ENDPOINT": emu.base_url, "AZURE_OPENAI_API_KEY": "k"}
        log = tmp_path / "run.jsonl"
        first = toolwire("run", "hi", "--model", "azure:dep", "--workdir", str(work),
                         "--log", str(log), env=env, cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        again = toolwire("resume", str(log), env=env, cwd=tmp_path)
    assert "needs its resource" not in again.stderr, again.stderr
    assert again.returncode in (0, 1), again.stderr


@pytest.mark.parametrize(("value", "full"), [("gpt-5", "openai:gpt-5"),
                                             ("claude-sonnet", "anthropic:claude-sonnet"),
                                             ("gemini-2.5-pro", "gemini:gemini-2.5-pro")])
def test_an_id_without_its_provider_names_the_full_id_and_where_it_came_from(
        tmp_path: Path, value: str, full: str) -> None:
    from_env = toolwire("run", "hi", "--workdir", str(tmp_path),
                        env={"TOOLWIRE_MODEL": value}, cwd=tmp_path)
    assert from_env.returncode == 2
    assert f"TOOLWIRE_MODEL: {value!r}" in from_env.stderr and full in from_env.stderr
    config = tmp_path / "config.toml"
    config.write_text(f'model = "{value}"\n')
    from_file = toolwire("run", "hi", "--workdir", str(tmp_path),
                         env={"TOOLWIRE_CONFIG": str(config)}, cwd=tmp_path)
    assert from_file.returncode == 2
    assert f"config file {config}" in from_file.stderr and full in from_file.stderr
    shown = toolwire("config", "show", env={"TOOLWIRE_MODEL": value}, cwd=tmp_path)
    assert shown.returncode == 1 and full in shown.stdout + shown.stderr
