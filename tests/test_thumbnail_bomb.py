"""A small PNG that says it is 13000 by 13000 pixels gets a placeholder on the HTML report, not
a thumbnail: its header is read, never its pixels, so ``explain --html`` stays small (peak
memory of the real subprocess asserted) whatever the file says."""

from __future__ import annotations

import os
import struct
import subprocess
import zlib
from pathlib import Path

from peak import run_measured
from toolwire.agent.loop import Agent
from toolwire.explain.thumbs import MAX_PIXELS
from toolwire.schema.tool import Tool
from toolwire.testing import ScriptedModel, call, reply

ENV = {k: v for k, v in os.environ.items()
       if not k.endswith("_API_KEY") and not k.startswith("TOOLWIRE_")}
SIDE = 13_000


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def bomb_png() -> bytes:
    """A black 13000x13000 one-bit PNG: a small file, 169 million pixels."""
    row = bytes(1 + SIDE // 8 + 1)
    packer = zlib.compressobj(9)
    data = b"".join(packer.compress(row) for _ in range(SIDE)) + packer.flush()
    header = struct.pack(">IIBBBBB", SIDE, SIDE, 1, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data)
            + chunk(b"IEND", b""))


def test_an_image_over_the_pixel_limit_gets_a_placeholder_quickly(tmp_path: Path) -> None:
    log, page = tmp_path / "run.jsonl", tmp_path / "page.html"
    assert SIDE * SIDE > MAX_PIXELS
    data = bomb_png()

    def look() -> object:
        """Look at the picture."""
        return (data, "image/png")

    agent = Agent(model=ScriptedModel([reply(call("look", {})), reply("A black square.")]),
                  tools=[Tool.from_function(look)])
    assert agent.run("what is this?", log=log).answer == "A black square."
    code, peak = run_measured(["explain", str(log), "--html", str(page)], env=ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              stdin=subprocess.DEVNULL)
    assert code == 0
    assert peak < 200 * (1 << 20)  # the pixels alone would take 169 MB
    html = page.read_text()
    assert f"no thumbnail: over {MAX_PIXELS:,} pixels" in html
    assert '<img class="thumb"' not in html
