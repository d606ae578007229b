"""The pages in docs/ cannot go stale: their Python examples run and print what the page shows."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
MARK = "<!-- examples run as tests -->"
PAGES = sorted(p for p in DOCS.glob("*.md") if MARK in p.read_text(encoding="utf-8"))


def test_pages_with_runnable_examples_are_marked() -> None:
    assert [p.name for p in PAGES] == ["agent.md", "cloud.md", "context.md", "observability.md",
                                       "servers.md", "tools.md", "wires.md"]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_examples_print_what_the_page_shows(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    pairs = re.findall(r"```python\n(.*?)```\s*```text\n(.*?)```", text, flags=re.DOTALL)
    assert len(pairs) == text.count("```python")
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    for code, expected in pairs:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(page), "exec"), namespace)
        assert out.getvalue() == expected


def test_the_architecture_picture_is_drawn_from_todays_code() -> None:
    """docs/architecture.md holds what scripts/architecture.py draws from the layer contract
    and the import graph now: an import or a layer change without a new picture fails here."""
    import importlib.util

    path = DOCS.parent / "scripts" / "architecture.py"
    spec = importlib.util.spec_from_file_location("architecture", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    assert module.current_block(text) == module.picture(), (
        "run: python scripts/architecture.py --write")
    for layer in module.layers():
        for name in layer:
            assert f"`{name}" in text, f"docs/architecture.md does not describe {name}"


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub makes for the headings of ``page`` (code blocks left out)."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+\s+(.*)$", text, flags=re.MULTILINE)}


LINKED = [DOCS.parent / "README.md", *sorted(DOCS.glob("*.md")),
          *sorted((DOCS.parent / "bench").glob("*.md"))]


@pytest.mark.parametrize("page", LINKED, ids=[p.name for p in LINKED])
def test_links_between_pages_lead_somewhere(page: Path) -> None:
    """Every relative link in the README, docs/ and bench/ names a file that exists and, with a
    ``#part``, a heading on that page."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    broken = []
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", link):
            continue
        path, _, part = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link} (no such file)")
        elif part and target.suffix == ".md" and part not in _anchors(target):
            broken.append(f"{link} (no such heading)")
    assert broken == []


def test_the_link_check_sees_links_and_headings() -> None:
    assert "hostile-input" in _anchors(DOCS / "wires.md")
    assert "](wires.md#hostile-input)" in (DOCS / "architecture.md").read_text(encoding="utf-8")
