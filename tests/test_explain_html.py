"""The HTML run report, loaded in a real headless Chromium (Debian's, driven by Playwright)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from toolwire.cli.app import main
from toolwire.explain.build import explain_file
from toolwire.explain.html import render_html
from toolwire.records import runs_folder

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("demo")
    assert main(["demo", "recover", "--workdir", str(work)]) == 0
    return sorted(runs_folder(work).glob("*.jsonl"))[-1]


def test_report_is_self_contained(demo_log: Path) -> None:
    page = render_html(explain_file(demo_log))
    assert page.startswith("<!doctype html>")
    for external in ("http://", "https://", "<link", "src="):
        assert external not in page.split("<body>")[0]
    assert "<script src" not in page


def test_report_in_a_real_browser(demo_log: Path, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    expl = explain_file(demo_log)
    out = tmp_path / "report.html"
    assert main(["explain", str(demo_log), "--html", str(out)]) == 0
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(out.as_uri())
        # every entry of the run is on the page
        assert page.locator(".entry").count() == len(expl.entries)
        labels = page.locator(".entry .label").all_inner_texts()
        assert labels == [e.label for e in expl.entries]
        assert page.locator("#usage-chart rect").count() == 2 * len(expl.turn_usage)
        assert "answered" in page.locator("#stop").inner_text()
        # a click on a call reveals the result that answers it
        call = next(e for e in expl.entries if e.call_id and e.label.endswith("read_files"))
        result_id = "result-" + "".join(c if c.isalnum() else f"_{ord(c):x}"
                                        for c in call.call_id or "")
        result = page.locator(f"#{result_id}")
        assert not result.locator("details").first.evaluate("d => d.open")
        page.locator(f"a.call[data-target='{result_id}']").click()
        assert "highlight" in (result.get_attribute("class") or "")
        assert result.locator("details").first.evaluate("d => d.open")
        assert "Unknown tool" in result.inner_text()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=True)
        browser.close()
    assert errors == []
    assert (ARTIFACTS / "report.png").stat().st_size > 10_000
