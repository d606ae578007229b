"""The layout the package promises: layers that only import downwards, no import circles, no
submodule importing the package root, small modules, and the same modules in every wire.

The layer rules themselves are import-linter contracts in pyproject.toml; this file runs
`lint-imports` on the real package and on a copy with one forbidden import added, to show the
contracts can fail.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "toolwire"
LINT_IMPORTS = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))


def _lint_imports(src: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run([LINT_IMPORTS, "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_layer_contracts_hold() -> None:
    proc = _lint_imports(ROOT / "src", ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "BROKEN" not in proc.stdout
    assert "0 broken" in proc.stdout


@pytest.mark.parametrize(("module", "line", "contract"), [
    # a codec reaching up to the agent breaks the layers
    ("codecs/base.py", "import toolwire.agent.loop", "Layers: every module imports only downwards"),
    # the agent reaching down past the Model protocol to the client breaks its own contract
    ("agent/run.py", "import toolwire.http.client",
     "The agent reaches models only through toolwire.protocol"),
    # one wire borrowing from another wire's folder breaks the wires' independence
    ("codecs/openai_chat/parts.py", "import toolwire.codecs.anthropic_messages.parts",
     "Inside codecs: wires and the registry never import each other"),
    # the run log reaching up to the loop it listens to
    ("agent/runlog.py", "import toolwire.agent.loop",
     "Inside agent: the loop drives, a run's values know nothing of it"),
    # two modules of one folder importing each other make a circle
    ("schema/walk.py", "import toolwire.schema.text", "No import circle within any folder"),
])
def test_a_forbidden_import_breaks_a_contract(
    tmp_path: Path, module: str, line: str, contract: str
) -> None:
    copy = tmp_path / "src" / "toolwire"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / module
    target.write_text(target.read_text() + f"\n{line}  # added by the test\n")
    proc = _lint_imports(tmp_path / "src", tmp_path)
    assert proc.returncode != 0, proc.stdout
    broken = [ln for ln in proc.stdout.splitlines() if ln.endswith("BROKEN")]
    assert any(contract in ln for ln in broken), proc.stdout


def test_no_submodule_imports_the_package_root() -> None:
    graph = grimp.build_graph("toolwire", cache_dir=None)
    assert graph.find_modules_that_directly_import("toolwire") == set()


def test_no_module_is_over_500_lines() -> None:
    long = {str(path.relative_to(PACKAGE)): n for path in PACKAGE.rglob("*.py")
            if "demo" not in path.parts and (n := len(path.read_text().splitlines())) > 500}
    assert long == {}


def test_every_wire_folder_has_the_same_modules() -> None:
    folders = [p for p in (PACKAGE / "codecs").iterdir()
               if p.is_dir() and (p / "codec.py").exists()]
    assert len(folders) >= 5
    shapes = {p.name: sorted(f.name for f in p.glob("*.py")) for p in folders}
    wanted = ["__init__.py", "codec.py", "inbound.py", "parts.py", "reply.py", "request.py",
              "schema.py", "stream.py"]
    assert shapes == {name: sorted(wanted + WIRE_OWN.get(name, [])) for name in shapes}


WIRE_OWN = {"openai_chat": ["reasoning.py"]}
"""The modules a wire folder holds beside the eight every folder has, each a job of its own
(docs/architecture.md says what each holds)."""


def test_a_module_of_a_wires_own_is_imported_by_its_folder_and_imports_none_of_it() -> None:
    for folder, modules in WIRE_OWN.items():
        for module in modules:
            path = PACKAGE / "codecs" / folder / module
            own = f"toolwire.codecs.{folder}."
            tree = ast.parse(path.read_text(encoding="utf-8"))
            taken = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                     and (n.module or "").startswith(own)]
            assert taken == [], f"{folder}/{module} imports {taken}"
            users = [p.name for p in (PACKAGE / "codecs" / folder).glob("*.py")
                     if f"{own}{module[:-3]} import" in p.read_text(encoding="utf-8")]
            assert users, f"nothing in {folder} imports {module}"


def test_every_module_says_what_it_owns() -> None:
    bare = [str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
            if "demo" not in path.parts and path.name != "__main__.py"
            and not ast.get_docstring(ast.parse(path.read_text()))]
    assert bare == []


@pytest.mark.parametrize(("line", "kept"), [
    ("from toolwire.codecs.base import Note", True),
    ("from toolwire.codecs.openai_chat.parts import NAME_RULE", False),
])
def test_a_new_wire_folder_is_under_the_contracts_as_it_is(
    tmp_path: Path, line: str, kept: bool
) -> None:
    """A wire folder nobody named in pyproject.toml may use what codecs share, and may not
    borrow from another wire's folder."""
    copy = tmp_path / "src" / "toolwire"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    folder = copy / "codecs" / "later_wire"
    folder.mkdir()
    (folder / "__init__.py").write_text('"""A wire added later."""\n', encoding="utf-8")
    (folder / "parts.py").write_text(f'"""Its parts."""\n\n{line}\n', encoding="utf-8")
    proc = _lint_imports(tmp_path / "src", tmp_path)
    assert (proc.returncode == 0) is kept, proc.stdout
    said = " ".join(proc.stdout.split())
    assert kept or ("toolwire.codecs.later_wire is not allowed to import "
                    "toolwire.codecs.openai_chat") in said, proc.stdout
