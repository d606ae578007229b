"""Media in ``explain``: listed by kind, type, pixels and size in text and JSON, never as base64;
on the HTML report, images as small inline thumbnails (checked in a real headless Chromium) and
documents as links, with Pillow and without it."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from media_files import pdf, png
from test_explain_html import CHROMIUM
from toolwire import Agent, Document, Image
from toolwire.cli.app import main
from toolwire.explain.build import explain_file
from toolwire.explain.html import render_html
from toolwire.schema.tool import Tool
from toolwire.testing import ScriptedModel, call, reply

SHOT = png(300, 200, seed=3)  # noise: about 180 KB, over what goes inline without Pillow
LOGO = png(40, 30)
REPORT = pdf("Quarterly")


@pytest.fixture(scope="module")
def media_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def screenshot() -> Any:
        """Take a screenshot and fetch the report."""
        return ["the screen and the report:", Image.from_bytes(SHOT, name="screen.png"),
                Document.from_bytes(REPORT, name="report.pdf")]

    log = tmp_path_factory.mktemp("explain") / "run.jsonl"
    model = ScriptedModel([reply(call("screenshot", {}, id="c1")), reply("A chart.")])
    agent = Agent(model=model, tools=[Tool.from_function(screenshot)])
    result = agent.run(["What is on the screen?", Image.from_bytes(LOGO, name="logo.png")],
                       log=log)
    assert result.answer == "A chart."
    return log


def no_base64(text: str) -> None:
    for data in (SHOT, LOGO, REPORT):
        assert base64.b64encode(data[:48]).decode() not in text


def test_explain_lists_media_in_text_and_json_without_their_bytes(
        media_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", str(media_log)]) == 0
    text = capsys.readouterr().out
    assert f"image logo.png (image/png 40x30, {len(LOGO)} bytes)" in text
    assert (f"[image screen.png (image/png 300x200, {len(SHOT)} bytes)] "
            f"[document report.pdf (application/pdf, {len(REPORT)} bytes)]") in text
    no_base64(text)
    assert len(text) < 3000
    assert main(["explain", str(media_log), "--json"]) == 0
    out = capsys.readouterr().out
    no_base64(out)
    media = [m for e in json.loads(out)["entries"] for m in e["media"]]
    assert media == [
        {"kind": "image", "media_type": "image/png", "size": len(LOGO), "name": "logo.png",
         "url": None},
        {"kind": "image", "media_type": "image/png", "size": len(SHOT), "name": "screen.png",
         "url": None},
        {"kind": "document", "media_type": "application/pdf", "size": len(REPORT),
         "name": "report.pdf", "url": None}]


def browse(pages: list[Path]) -> list[dict[str, Any]]:
    """What a headless Chromium finds on each page: its images' natural sizes, the links."""
    from playwright.sync_api import sync_playwright

    found = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"])
        for path in pages:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
            page.goto(path.as_uri())
            page.wait_for_load_state("load")
            found.append({
                "images": page.eval_on_selector_all(
                    "img.thumb", "els => els.map(e => [e.complete, e.naturalWidth, "
                    "e.naturalHeight, e.alt])"),
                "downloads": page.eval_on_selector_all(
                    "a.media-data", "els => els.map(e => e.getAttribute('download'))"),
                "files": page.eval_on_selector_all("a.media-file", "els => els.map(e => e.href)"),
                "raw": page.locator("details pre").all_text_contents(),
                "errors": errors})
        browser.close()
    return found


def test_the_html_report_shows_thumbnails_and_links_with_pillow_and_without(
        media_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with_pillow = tmp_path / "with.html"
    assert main(["explain", str(media_log), "--html", str(with_pillow)]) == 0
    monkeypatch.setitem(sys.modules, "PIL", None)  # as if Pillow were not installed
    without = tmp_path / "without.html"
    without.write_text(render_html(explain_file(media_log)), encoding="utf-8")
    monkeypatch.undo()
    for page in (with_pillow, without):
        assert page.stat().st_size < 60_000  # the page stays small: the 180 KB image is not in it
        assert base64.b64encode(SHOT[:48]).decode() not in page.read_text()
    thumbs, fallback = browse([with_pillow, without])
    # With Pillow: both images as thumbnails of at most 160 pixels (a small one is not grown).
    assert [i[:3] for i in thumbs["images"]] == [[True, 40, 30], [True, 160, 107]]
    assert thumbs["images"][1][3] == f"image screen.png (image/png 300x200, {len(SHOT)} bytes)"
    assert thumbs["downloads"] == ["report.pdf"] and thumbs["errors"] == []
    assert any("bytes of base64, left out" in raw for raw in thumbs["raw"])
    # Without: the small image as it is, the large one a link to its file next to the log.
    assert [i[:3] for i in fallback["images"]] == [[True, 40, 30]]
    (link,) = fallback["files"]
    assert link.startswith("file://") and Path(link[7:]).read_bytes() == SHOT
    assert Path(link[7:]).parent == Path(f"{media_log}.media").resolve()
    assert fallback["downloads"] == ["report.pdf"] and fallback["errors"] == []
