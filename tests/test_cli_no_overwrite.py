"""Nothing of the person's is overwritten and nothing is created before the checks pass:
``explain --html`` onto an existing file, ``batch --out`` naming the task file, an attached
file the model's wire cannot take. Real subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from pathlib import Path

from toolwire.emulator import Emulator

ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
RUNLOG = Path(__file__).parent / "fixtures" / "runlogs" / "format2_streamed.jsonl"


def toolwire(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolwire.cli", *args], capture_output=True,
                          text=True, env=ENV, timeout=120, cwd=cwd, input="")


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_explain_html_refuses_an_existing_file(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# mine\n")
    proc = toolwire("explain", str(RUNLOG), "--html", str(readme), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "--html" in proc.stderr and "already holds something" in proc.stderr
    assert readme.read_text() == "# mine\n"
    fresh = toolwire("explain", str(RUNLOG), "--html", str(tmp_path / "page.html"), cwd=tmp_path)
    assert fresh.returncode == 0 and (tmp_path / "page.html").read_text().startswith("<!")


def test_batch_out_naming_the_task_file_is_refused(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    line = '{"id": 1, "prompt": "hi"}\n'
    tasks.write_text(line)
    with Emulator([{"text": "Hello."}]) as emu:
        proc = toolwire("batch", str(tasks), "--model", f"anthropic:m@{emu.base_url}", "--out",
                        "tasks.jsonl", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "task file itself" in proc.stderr
    assert tasks.read_text() == line and files_under(tmp_path) == ["tasks.jsonl"]


def big_png(path: Path, size: int) -> None:
    """A PNG file of about ``size`` bytes (its first bytes say PNG)."""
    head = b"\x89PNG\r\n\x1a\n"
    ihdr = b"\x00\x00\x00\x10\x00\x00\x00\x10\x08\x02\x00\x00\x00"
    chunk = b"IHDR" + ihdr
    body = head + len(ihdr).to_bytes(4, "big") + chunk + zlib.crc32(chunk).to_bytes(4, "big")
    path.write_bytes(body + b"\x00" * (size - len(body)))


def test_an_oversized_attachment_creates_nothing_and_names_the_flag(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    big_png(work / "big.png", 19 * 1024 * 1024)
    proc = toolwire("run", "look", "--model", "anthropic:m@http://127.0.0.1:9", "--attach",
                    "big.png", cwd=work)
    assert proc.returncode == 2, proc.stderr
    assert "--attach big.png" in proc.stderr and "messages[" not in proc.stderr
    assert files_under(work) == ["big.png"]  # no run log, no copy of the image
