"""One name per job in every wire folder: a function that does the same work in each wire has
the same name in each, and a helper they share is written once in the shared modules."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "toolwire"
FOLDERS = sorted(p for p in (PACKAGE / "codecs").iterdir() if (p / "codec.py").exists())

ONE_NAME = {
    "request.py": {"encode"},
    "inbound.py": {"decode_request", "check_body"},
    "reply.py": {"decode_response", "encode_response", "decode_error", "decode_stop"},
    "stream.py": {"StreamDecoder", "encode_stream"},
    "parts.py": {"name_map"},
}
"""The jobs every wire's module does, by the name it does them under."""

FORMER = {"stop_for", "decide_stop", "_stop", "stop_of", "usage_from", "_usage", "_int",
          "count", "_pieces"}
"""The names the same jobs went by, each wire its own (the stop reason, a token count, a text
cut into stream deltas); none comes back. `toolwire.codecs.base.token_count` and
`toolwire.codecs.assembly.text_pieces` are the shared ones."""


def _defined(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in tree.body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}


def _shared(path: Path) -> set[str]:
    """The names a module takes from a shared module of codecs (one directly in the folder):
    a job the wires do alike is written there once and named the same in each wire."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    shared = {p.stem for p in (PACKAGE / "codecs").glob("*.py")}
    return {alias.asname or alias.name for n in tree.body if isinstance(n, ast.ImportFrom)
            and (n.module or "").removeprefix("toolwire.codecs.") in shared
            for alias in n.names}


def test_every_wire_does_each_job_under_one_name() -> None:
    assert len(FOLDERS) >= 6
    missing = {f"{folder.name}/{module}": sorted(
                   names - _defined(folder / module) - _shared(folder / module))
               for folder in FOLDERS for module, names in ONE_NAME.items()}
    assert {where: names for where, names in missing.items() if names} == {}


def test_no_wire_keeps_a_name_of_its_own_for_a_shared_job() -> None:
    found = {f"{folder.name}/{path.name}": sorted(_defined(path) & FORMER)
             for folder in FOLDERS for path in folder.glob("*.py")}
    assert {where: names for where, names in found.items() if names} == {}


def test_the_name_check_finds_a_name_of_its_own(tmp_path: Path) -> None:
    planted = tmp_path / "reply.py"
    planted.write_text("def stop_for(raw):\n    return raw\n", encoding="utf-8")
    assert _defined(planted) & FORMER == {"stop_for"}
    assert "decode_stop" not in _defined(planted)


FLAGS = {"MEDIA_TOKENS", "INPUT_EXAMPLES", "ALLOWED_CALLERS", "CONTEXT_MANAGEMENT",
         "NATIVE_TOOL_SEARCH", "SERVER_FALLBACKS"}
"""What a wire can do is a field of its registry record (`toolwire.codecs.record.Wire`); a
module constant of these names would be read by nothing."""


def _constants(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {t.id for n in tree.body if isinstance(n, ast.Assign | ast.AnnAssign)
            for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
            if isinstance(t, ast.Name)}


def test_no_wire_says_what_it_can_do_in_a_module_constant(tmp_path: Path) -> None:
    found = {f"{folder.name}/{path.name}": sorted(_constants(path) & FLAGS)
             for folder in FOLDERS for path in folder.glob("*.py")}
    assert {where: names for where, names in found.items() if names} == {}
    planted = tmp_path / "codec.py"
    planted.write_text('MEDIA_TOKENS: str = "area"\n', encoding="utf-8")
    assert _constants(planted) & FLAGS == {"MEDIA_TOKENS"}


def test_a_wire_writes_the_usual_request_in_one_pass_exactly_when_its_record_says_so() -> None:
    """What a wire's module can do is declared in its record, never found by looking: a module
    with ``encode_usual`` whose record does not say ``usual_pass`` would never be used."""
    import importlib

    from toolwire.codecs.registry import WIRES, get_wire

    said = {name: get_wire(name).usual_pass for name in WIRES}
    has = {name: hasattr(importlib.import_module(get_wire(name).module), "encode_usual")
           for name in WIRES}
    assert said == has
    assert said["ollama-chat"] and said["gemini-generate"]
