"""The engine's contract with cgc (cgc_contract), and the package's shape around it.

Every reach into cgc's private names, frames, source and classes lives in cgc_contract, which checks at load that
the installed cgc is the one it was written against. So: no other module of the package imports codegraphcontext or
uses those means; the package's modules import each other without a cycle at import time; load passes on the cgc
the project installs; and a cgc that breaks the contract is refused (the engine answers `refused` and exits 3, and
pi-cgc falls back to full rebuilds) instead of served wrongly.
"""

from __future__ import annotations

import ast
import io
import json
import os
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Any, Dict, List, Set

import pytest

from pi_cgc_engine import cgc_contract
from pi_cgc_engine.context import RUN, NarrowingFailed
from pi_cgc_engine.protocol import REFUSED_EXIT

ENGINE_DIR = Path(__file__).resolve().parent.parent
PACKAGE = ENGINE_DIR / "pi_cgc_engine"
ENTRY = ENGINE_DIR / "pi-cgc-engine.py"
CONTRACT = "cgc_contract.py"
# Names only cgc_contract may use: frames, code objects, the C API, source, cgc's private modules.
FORBIDDEN_NAMES = {"f_locals", "f_code", "f_lineno", "_getframe", "__code__", "__closure__", "pythonapi", "getsource"}
# Module globals of cgc_contract that hold cgc's private modules or functions (`cgc.` is how modules name it).
PRIVATE_HOLDERS = {"_calls", "_writer"}


def modules() -> List[Path]:
    return sorted(PACKAGE.glob("*.py"))


def reaches(source: str) -> List[str]:
    """What in this module's code (not its strings or comments) only cgc_contract may do."""
    found: List[str] = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(f"line {node.lineno}: imports {a.name}" for a in node.names
                         if a.name.split(".")[0] == "codegraphcontext")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "codegraphcontext":
            found.append(f"line {node.lineno}: imports from {node.module}")
        elif isinstance(node, ast.ImportFrom) and node.level == 1 and node.module == CONTRACT[:-3]:
            found.extend(f"line {node.lineno}: imports cgc_contract's private {a.name}" for a in node.names
                         if a.name.startswith("_") and a.name in PRIVATE_HOLDERS)
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
              if t.type in (tokenize.NAME, tokenize.OP)]
    for at, token in enumerate(tokens):
        after = tokens[at + 1] if at + 1 < len(tokens) else None
        second = tokens[at + 2] if at + 2 < len(tokens) else None
        where = f"line {token.start[0]}"
        if token.type == tokenize.NAME and token.string in FORBIDDEN_NAMES:
            found.append(f"{where}: {token.string}")
        elif (token.type == tokenize.NAME and token.string == "cgc" and after is not None and after.string == "."
              and second is not None and second.string.startswith("_")):
            found.append(f"{where}: cgc.{second.string}")
        elif token.type == tokenize.NAME and token.string in PRIVATE_HOLDERS and after is not None and after.string == ".":
            found.append(f"{where}: {token.string}.")
        elif (token.string == "." and after is not None and after.string == "__class__" and second is not None
              and second.string == "="):
            found.append(f"{where}: .__class__ =")
    return found


def test_the_check_finds_each_kind_of_reach() -> None:
    planted = (
        "import codegraphcontext\n"
        "from codegraphcontext.tools import x\n"
        "import sys\n"
        "frame = sys._getframe(1)\n"
        "frame.f_locals, frame.f_code, frame.f_lineno\n"
        "obj.__class__ = dict\n"
        "f.__code__, f.__closure__\n"
        "ctypes.pythonapi\n"
        "inspect.getsource(f)\n"
        "cgc._calls._resolved_posix(p)\n"
        "_writer.anything\n"
        "'f_locals in a string, and cgc._calls'  # or a comment: f_code\n"
    )
    found = reaches(planted)
    # Every line but the plain import and the string finds its reach (cgc._calls twice: cgc._ and _calls.).
    assert sorted({int(line.split(":")[0].split()[1]) for line in found}) == [1, 2, 4, 5, 6, 7, 8, 9, 10, 11], found
    assert len(found) == 14, found
    assert reaches("old_calls.get(name)\nx.__class__ == y\n'''codegraphcontext'''\n") == []


@pytest.mark.parametrize("module", [*(p.name for p in modules() if p.name != CONTRACT), "../discover.py"])
def test_only_cgc_contract_reaches_into_cgc(module: str) -> None:
    # engine/discover.py too: its patch of cgc's ignore-file lookup is the contract's (load_discovery).
    assert reaches((PACKAGE / module).read_text(encoding="utf-8")) == []


def test_resolution_runs_only_the_inheritance_builders_the_contract_lists() -> None:
    source = (PACKAGE / "resolution.py").read_text(encoding="utf-8")
    used = {node.attr for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Attribute) and node.value.attr == "inh"}
    assert used and used <= set(cgc_contract.INHERITANCE_BUILDERS), used - set(cgc_contract.INHERITANCE_BUILDERS)
    assert set(cgc_contract.INHERITANCE_BUILDERS) == used


def frame_names_used(path: Path) -> Set[str]:
    """The names a module reads or sets in cgc's frame: keys of `frame` / `loc` (get, [], in, put({...}))."""
    found: Set[str] = set()
    holders = {"frame", "loc"}

    def is_holder(node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id in holders

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Subscript) and is_holder(node.value) and isinstance(node.slice, ast.Constant):
            found.add(node.slice.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_holder(node.func.value):
            for arg in node.args[:1]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.add(arg.value)
                elif isinstance(arg, ast.Dict):
                    found.update(k.value for k in arg.keys if isinstance(k, ast.Constant))
        elif isinstance(node, ast.Compare) and any(is_holder(c) for c in node.comparators) \
                and isinstance(node.left, ast.Constant):
            found.add(node.left.value)
    return found


@pytest.mark.parametrize("module", ["call_run.py", "kept_indices.py"])
def test_the_frame_locals_a_module_uses_are_the_contracts(module: str) -> None:
    # kept_indices reads the frame by the names in CALL_INDEXES and LOOP_DICTS only (checked below).
    used = frame_names_used(PACKAGE / module)
    assert used or module == "kept_indices.py", "the scan found no frame local: it needs writing again"
    assert used <= cgc_contract.FRAME_NAMES, used - cgc_contract.FRAME_NAMES
    from pi_cgc_engine.kept_indices import LOOP_DICTS

    assert {name for names in LOOP_DICTS.values() for name in names} <= cgc_contract.FRAME_NAMES


def test_a_frame_local_the_contract_does_not_list_is_refused(cgc: Any) -> None:
    def holder() -> Any:
        functions_named = 1
        frame = cgc.caller_frame(0)
        assert frame.get("functions_named") == functions_named
        with pytest.raises(NarrowingFailed, match="not_listed is not a local .* the contract lists"):
            frame.get("not_listed")
        with pytest.raises(NarrowingFailed, match="not_listed"):
            frame.put({"not_listed": 2})

    holder()


def test_the_copied_sources_are_the_installed_cgcs(cgc: Any) -> None:
    assert cgc.copied_source_digests() == cgc.COPIED_SOURCES


def test_a_changed_copied_source_breaks_the_contract(cgc: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    name = next(iter(cgc.COPIED_SOURCES))
    monkeypatch.setitem(cgc.COPIED_SOURCES, name, "0" * 64)
    with pytest.raises(cgc.ContractBroken, match=f"{cgc.cgc_name(name)} \\(its source changed"):
        cgc.check_copied(cgc.cgc_version())


def test_a_kuzu_manager_without_what_the_engine_reads_is_named(cgc: Any) -> None:
    class Manager:
        _pool = None
        _db = object()

    with pytest.raises(cgc.ContractBroken, match="Manager holds nothing in _pool"):
        with cgc.kuzu_connection(Manager()):
            pass
    with pytest.raises(cgc.ContractBroken, match="Manager holds nothing in _write_lock"):
        cgc.kuzu_transaction_driver(Manager(), object())

    class Odd:
        _pool = ["not", "a", "queue"]

    with pytest.raises(cgc.ContractBroken, match="_pool is a list"):
        with cgc.kuzu_connection(Odd()):
            pass


def test_the_proven_versions_are_one_list() -> None:
    listed = json.loads((PACKAGE / "proven-cgc-versions.json").read_text(encoding="utf-8"))["versions"]
    assert cgc_contract.PROVEN_VERSIONS == frozenset(listed)
    script = (ENGINE_DIR.parent / "src" / "cgc" / "engine-script.ts").read_text(encoding="utf-8")
    assert "proven-cgc-versions.json" in script
    assert not any(f'"{version}"' in script for version in listed)  # read from the file, not written again


def import_time_imports(path: Path) -> Set[str]:
    """The package's modules this one imports when it is imported (not in functions, not for type checking)."""
    found: Set[str] = set()

    def visit(body: List[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.If):
                test = node.test
                if not (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"):
                    visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return found


def test_the_packages_modules_import_each_other_without_a_cycle() -> None:
    graph: Dict[str, Set[str]] = {p.stem: import_time_imports(p) for p in modules()}
    cycles: List[List[str]] = []
    state: Dict[str, int] = {}  # 1: on the path, 2: done

    def visit(name: str, path: List[str]) -> None:
        state[name] = 1
        for target in sorted(graph.get(name, ())):
            if state.get(target) == 1:
                cycles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_load_passes_on_the_installed_cgc_and_finds_the_loops(tmp_path: Path) -> None:
    # In a fresh interpreter: load installs its hooks once per process (the session's is conftest's).
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(ENGINE_DIR)!r})\n"
        "from pi_cgc_engine import cgc_contract\n"
        "from pi_cgc_engine.context import RUN\n"
        "version = cgc_contract.load()\n"
        "print(json.dumps({'version': version, 'roles': sorted(RUN.loop_roles.values()),\n"
        "                  'writer': cgc_contract.GraphWriter is not None}))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "HOME": str(tmp_path)})
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout.strip().splitlines()[-1])
    assert answer["version"] in cgc_contract.PROVEN_VERSIONS
    assert answer["roles"] == cgc_contract.EXPECTED_LOOPS
    assert answer["writer"] is True


def test_the_sessions_load_set_the_loop_roles(cgc: Any) -> None:
    assert sorted(RUN.loop_roles.values()) == cgc.EXPECTED_LOOPS
    assert all(cgc.CallGroupsFrame is not None and line > 0 for line in RUN.loop_roles)


def test_loops_not_the_ones_the_kept_indices_know_break_the_contract(cgc: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgc, "find_loop_roles", lambda: {})
    with pytest.raises(cgc.ContractBroken, match="loops over all_file_data"):
        cgc.check_call_groups_shape()


def test_a_local_the_narrowing_reads_missing_breaks_the_contract(cgc: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgc, "CALL_LOCALS", (*cgc.CALL_LOCALS, "no_such_local"))
    with pytest.raises(cgc.ContractBroken, match="no local no_such_local"):
        cgc.check_call_groups_shape()


def test_a_missing_private_name_of_cgc_breaks_the_contract(cgc: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # load checks every name before it installs a hook: refused here, nothing of cgc's is changed.
    monkeypatch.delattr(cgc._calls, "_resolved_posix")
    with pytest.raises(cgc.ContractBroken, match="lacks .*_resolved_posix"):
        cgc.load()


def test_an_unproven_version_breaks_the_contract(cgc: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgc, "cgc_version", lambda: "0.0.1")
    with pytest.raises(cgc.ContractBroken, match="0.0.1 is not a version"):
        cgc.load()


def serve_once(argv: List[str], home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, "HOME": str(home), "PYTHONPATH": os.environ.get("PYTHONPATH", "")})


def refusal(run: subprocess.CompletedProcess[str]) -> Dict[str, Any]:
    lines = run.stdout.strip().splitlines()
    assert lines, run.stderr
    return json.loads(lines[0])


def test_serve_refuses_a_cgc_whose_resolution_is_not_the_one_it_narrows(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    run = serve_once([str(ENGINE_DIR / "tests" / "broken_contract_engine.py"), "serve", "--root", str(root)], tmp_path)
    assert run.returncode == REFUSED_EXIT, run.stderr
    answer = refusal(run)
    assert answer["event"] == "refused"
    assert "loops over all_file_data" in answer["reason"]


def test_serve_refuses_a_cgc_version_it_was_not_proven_on(tmp_path: Path) -> None:
    # The entry as pi-cgc runs it; codegraphcontext's metadata says another version (a dist-info found first).
    fake = tmp_path / "site"
    info = fake / "codegraphcontext-0.0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: codegraphcontext\nVersion: 0.0.1\n")
    root = tmp_path / "tree"
    root.mkdir()
    run = subprocess.run([sys.executable, str(ENTRY), "serve", "--root", str(root)], capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL,
                         env={**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(fake)})
    assert run.returncode == REFUSED_EXIT, run.stderr
    answer = refusal(run)
    assert answer == {"event": "refused", "reason": answer["reason"]}
    assert "cgc 0.0.1 is not a version the engine was proven on" in answer["reason"]
