"""The public surface: one sorted, complete ``__all__``, and an import that only defines things."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import toolwire

INIT = Path(toolwire.__file__)


def names_bound_in_init() -> set[str]:
    """Every name the package's __init__.py binds at module level (imports, assignments, defs)."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names.update(a.asname or a.name for a in node.names if a.name != "*")
        elif isinstance(node, ast.Import):
            names.update(a.asname or a.name.partition(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def test_all_is_sorted_without_duplicates() -> None:
    assert list(toolwire.__all__) == sorted(toolwire.__all__)
    assert len(set(toolwire.__all__)) == len(toolwire.__all__)


def test_every_name_in_all_exists() -> None:
    missing = [name for name in toolwire.__all__ if not hasattr(toolwire, name)]
    assert missing == []


def test_every_public_name_defined_in_init_is_exported() -> None:
    public = {
        name for name in names_bound_in_init()
        if not name.startswith("_") and not isinstance(getattr(toolwire, name, None), ModuleType)
    }
    assert public, "the AST walk found no names at all"
    assert sorted(public - set(toolwire.__all__)) == []


def test_the_walk_sees_imports_assignments_and_defs() -> None:
    # guards the completeness test above against an AST walk that silently finds nothing
    names = names_bound_in_init()
    assert {"Message", "ToolCallPart", "__version__", "__all__"} <= names
    assert "annotations" not in names


# --------------------------------------------------------------------------- a quiet import

_PROBE = textwrap.dedent(
    """
    import json, os, sys

    opened = []
    events = []

    def hook(event, args):
        if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(args[0])
            if not path.endswith((".py", ".pyc", ".so", ".pth")):
                opened.append(path)
        elif event in ("socket.connect", "subprocess.Popen", "os.system", "os.remove",
                       "os.rename", "os.mkdir", "shutil.rmtree"):
            events.append(event)

    fds_before = set(os.listdir("/proc/self/fd"))
    modules_before = set(sys.modules)
    sys.addaudithook(hook)
    import toolwire
    fds_after = set(os.listdir("/proc/self/fd"))
    sys.stdout.write(json.dumps({
        "modules": sorted(set(sys.modules) - modules_before),
        "opened": opened,
        "events": events,
        "new_fds": sorted(fds_after - fds_before),
    }))
    """
)

HEAVY = (
    "httpx", "httpx2", "httpcore", "h11", "h2", "anyio", "ssl",
    "pydantic", "pydantic_core", "jsonschema_rs", "jsonschema",
    "asyncio", "concurrent.futures",
    "anthropic", "openai", "ollama", "google.genai", "litellm", "agents", "pydantic_ai",
    "opentelemetry",
)


def test_import_prints_nothing(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-I", "-c", "import toolwire"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert list(tmp_path.iterdir()) == []


def test_import_is_light_and_does_no_io(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-I", "-c", _PROBE],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert "toolwire" in report["modules"]
    heavy = sorted(
        m for m in report["modules"] if any(m == h or m.startswith(h + ".") for h in HEAVY)
    )
    assert heavy == []
    assert report["opened"] == []
    assert report["events"] == []
    assert report["new_fds"] == []
    assert list(tmp_path.iterdir()) == []


def test_top_level_functions_are_not_shadowed_by_submodules() -> None:
    """``toolwire.model(...)`` and ``toolwire.convert(...)`` stay functions after every module
    of the package has been imported (a submodule of the same name would replace them)."""
    import importlib
    import pkgutil

    import toolwire

    for info in pkgutil.walk_packages(toolwire.__path__, "toolwire."):
        if info.name.endswith(".__main__") or info.name.startswith(
                ("toolwire.demo.", "toolwire.mcp", "toolwire.batch.on_ray")):
            continue
        importlib.import_module(info.name)
    for name in toolwire.__all__:
        value = getattr(toolwire, name)
        assert type(value).__name__ != "module", f"toolwire.{name} is a module"
    assert callable(toolwire.model) and callable(toolwire.convert)


def test_users_get_the_types_of_the_lazy_names(tmp_path: Path) -> None:
    """mypy --strict on code using the top-level names: lazy imports keep their types."""
    user = tmp_path / "user.py"
    user.write_text(textwrap.dedent('''
        import toolwire
        from toolwire.testing import ScriptedModel


        @toolwire.tool
        def add(a: int, b: int) -> int:
            """Add."""
            return a + b


        model: toolwire.HttpModel = toolwire.model("anthropic:m@http://127.0.0.1:1")
        agent = toolwire.Agent(model=ScriptedModel(["hi"]), tools=[add])
        result: toolwire.RunResult[None] = agent.run("x")
        stop: toolwire.RunStop = result.stop
        checked: dict[str, object] = toolwire.validate_call([add], "add", "{}")
        wrong: int = toolwire.convert({}, "openai-chat", "anthropic-messages")
    '''))
    proc = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                           str(user)], capture_output=True, text=True)
    # exactly one error: the deliberate one, which shows convert's real return type is known
    assert proc.stdout.count("error:") == 1, proc.stdout
    assert 'incompatible type "Conversion"' in proc.stdout or "Conversion" in proc.stdout
