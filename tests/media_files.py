"""Real media files for tests, made without an image library: PNGs (zlib and CRCs by hand,
readable by any viewer) and a one-page PDF with a correct cross-reference table."""

from __future__ import annotations

import random
import struct
import zlib


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(
        ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width: int, height: int, *, seed: int | None = None,
        rgb: tuple[int, int, int] = (30, 120, 200)) -> bytes:
    """An RGB PNG of ``width`` x ``height``: noise when ``seed`` is given (it does not compress,
    so the file is about ``3 * width * height`` bytes), else one colour."""
    if seed is None:
        row = b"\0" + bytes(rgb) * width
        raw = row * height
    else:
        noise = random.Random(seed).randbytes(3 * width * height)
        raw = b"".join(b"\0" + noise[y * 3 * width:(y + 1) * 3 * width] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(raw, 1)) + _chunk(b"IEND", b""))


def screenshot(seed: int, size: int = 1 << 20) -> bytes:
    """A PNG of noise of about ``size`` bytes (a little more), different for each seed."""
    side = int((size / 3) ** 0.5) + 1
    return png(side, side, seed=seed)


def pdf(text: str = "Hello") -> bytes:
    """A one-page PDF showing ``text``."""
    stream = f"BT /F1 24 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream
        + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
            .encode())
    return bytes(out)
