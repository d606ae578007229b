"""Media on the HTML run report: images as small inline thumbnails, documents and audio as links.

Owns `media_html` and `THUMB_SIDE`. An image becomes a thumbnail at most `THUMB_SIDE` pixels a
side, made with Pillow when it is installed (``pip install 'toolwire[images]'``; imported only
here, only when a page shows an image) and inlined as a ``data:`` URL, so the page stays one
small file. Without Pillow, an image of at most `ORIGINAL_MAX` bytes goes in as it is (shown
small); a larger one is a link to its file in the run log's media folder when there is one, else
a line saying what it is and how to get thumbnails. A document or audio of at most
`LINK_MAX` bytes is a download link holding its bytes; a larger one links to its file in the
media folder. An image whose header says it holds more than `MAX_PIXELS` pixels (a small file
can say 13000 by 13000) gets no thumbnail and is not inlined: its header is read, never its
pixels, and a placeholder says why; so each image costs at most the work of `MAX_PIXELS`
pixels. A URL is a link only when it is http(s). Nothing here reads the network. Imports
`toolwire.media`, `toolwire.mediafiles` and the explanation's `describe_media`; never the page
itself.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

from toolwire.explain.build import describe_media
from toolwire.media import image_size
from toolwire.mediafiles import media_name
from toolwire.transcript import MediaPart

THUMB_SIDE = 160
"""The longest side of a thumbnail, in pixels."""
ORIGINAL_MAX = 48_000
"""Without Pillow, images up to this many bytes are inlined as they are."""
LINK_MAX = 256_000
"""Documents and audio up to this many bytes are inlined as a download link."""
MAX_PIXELS = 25_000_000
"""Images with more pixels than this (by their header) get a placeholder, not a thumbnail:
well under Pillow's own decompression-bomb limit, and a thumbnail needs no more."""


def _too_many_pixels(size: tuple[int, int] | None) -> bool:
    return size is not None and size[0] * size[1] > MAX_PIXELS


def _thumbnail(data: bytes) -> tuple[str, bytes, int, int] | None:
    """A thumbnail of ``data`` as (media type, bytes, width, height); None without Pillow or
    for bytes Pillow cannot read."""
    try:
        from PIL import Image as PILImage
    except ImportError:
        return None
    try:
        with PILImage.open(io.BytesIO(data)) as image:  # reads the header only
            if _too_many_pixels(image.size):  # a format whose header toolwire does not read
                return None
            image.draft("RGB", (THUMB_SIDE, THUMB_SIDE))
            image.thumbnail((THUMB_SIDE, THUMB_SIDE))
            alpha = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
            small = image.convert("RGBA" if alpha else "RGB")
            out = io.BytesIO()
            small.save(out, format="PNG" if alpha else "JPEG", quality=80)
            return ("image/png" if alpha else "image/jpeg", out.getvalue(), *small.size)
    except Exception:  # a broken or hostile image: shown without a thumbnail
        return None


def _data_url(media_type: str, data: bytes) -> str:
    """A ``data:`` URL, escaped for an attribute (a media type read from a file may hold
    anything)."""
    return html.escape(f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}")


def _link(part: MediaPart, folder: Path | None, what: str) -> str:
    """A link to the part's file in ``folder``, or its URL; else ``what`` as plain text."""
    if part.data is not None and folder is not None:
        file = folder / media_name(part.data, part.media_type)
        if file.is_file():
            return (f'<a class="media-file" href="{html.escape(file.resolve().as_uri())}">'
                    f"{html.escape(what)}</a>")
    if part.url and part.url.startswith(("https://", "http://")):
        return f'<a class="media-url" href="{html.escape(part.url)}">{html.escape(what)}</a>'
    return f'<span class="media-text">{html.escape(what)}</span>'


def _image(part: MediaPart, folder: Path | None, what: str) -> str:
    if part.data is None:
        return _link(part, folder, what)
    if _too_many_pixels(image_size(part.data)):
        return _link(part, folder, what + f" (no thumbnail: over {MAX_PIXELS:,} pixels)")
    thumb = _thumbnail(part.data)
    if thumb is not None:
        media_type, data, width, height = thumb
    elif len(part.data) <= ORIGINAL_MAX and part.media_type.startswith("image/"):
        size = image_size(part.data) or (THUMB_SIDE, THUMB_SIDE)
        scale = min(1.0, THUMB_SIDE / max(size))
        media_type, data = part.media_type, part.data
        width, height = max(1, round(size[0] * scale)), max(1, round(size[1] * scale))
    else:
        return _link(part, folder, what + " (no thumbnail: pip install 'toolwire[images]')")
    return (f'<figure class="media"><img class="thumb" src="{_data_url(media_type, data)}" '
            f'width="{width}" height="{height}" alt="{html.escape(what)}">'
            f"<figcaption>{html.escape(what)}</figcaption></figure>")


def media_html(media: tuple[MediaPart, ...], folder: Path | None = None) -> str:
    """The media of one entry as HTML: thumbnails for images, links for the rest; ``folder`` is
    the run log's media folder, linked for what is not inlined."""
    out = []
    for part in media:
        what = describe_media(part)
        if part.kind == "image":
            out.append(_image(part, folder, what))
        elif part.data is not None and len(part.data) <= LINK_MAX:
            name = html.escape(part.name or f"{part.kind}.{part.media_type.split('/')[-1]}")
            out.append(f'<a class="media-data" download="{name}" '
                       f'href="{_data_url(part.media_type, part.data)}">{html.escape(what)}</a>')
        else:
            out.append(_link(part, folder, what))
    return f'<div class="media-list">{"".join(out)}</div>' if out else ""


__all__ = ["LINK_MAX", "MAX_PIXELS", "ORIGINAL_MAX", "THUMB_SIDE", "media_html"]
