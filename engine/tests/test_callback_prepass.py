"""The callback pre-pass the engine runs in cgc's place (callback_prepass): the rows it leads to are cgc's own.

cgc maps each (function's file, function, parameter) to the functions a call passing a bare name there may mean,
and resolves a call of that parameter to each of them (tier 3 rows). The engine builds that map itself, in a
compact form; the rows of a whole resolution and of a narrowed one after an edit must equal those of cgc's own
resolution of every file (Tree.resolve: cgc's loop, no hooks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pytest

from pi_cgc_engine import cgc_contract
from pi_cgc_engine.callback_prepass import CallbackTargets
from pi_cgc_engine.files import FileEntry, digest_of
from pi_cgc_engine.link_rows import compare_links
from pi_cgc_engine.resolution import resolve_tree
from pi_cgc_engine.tree import Tree

FILES = {
    # Functions that call a parameter, given a function by its bare name, in the same file and across files.
    "apply.py": "def apply(fn, value):\n    return fn(value)\n\n\ndef twice(fn, value):\n    return fn(fn(value))\n",
    "double.py": "from apply import apply, twice\n\n\ndef double(v):\n    return v * 2\n\n\n"
                 "def use():\n    return apply(double, 2) + twice(double, 3)\n",
    # A second `double` elsewhere: a call passing `double` means the caller's own where it has one.
    "other.py": "from apply import apply\n\n\ndef double(v):\n    return v + v\n\n\ndef here():\n    return apply(double, 1)\n",
    "third.py": "from apply import apply\nfrom double import double\n\n\ndef there():\n    return apply(double, 5)\n",
    # Two methods of one name in one file, and only one calls its parameter: cgc's entry (the file, `run`, `fn`)
    # is made from the calls of both, and the engine makes only the entries cgc's loop reads.
    "methods.py": "class Runner:\n    def run(self, fn, value):\n        return fn(value)\n\n\n"
                  "class Recorder:\n    def run(self, fn, value):\n        return [fn, value]\n\n\n"
                  "def square(v):\n    return v * v\n\n\ndef cube(v):\n    return v * v * v\n\n\n"
                  "def use_both():\n    return Runner().run(square, square) + Recorder().run(cube, cube)\n",
}


def parsed(tree: Tree) -> Dict[str, FileEntry]:
    return {p.as_posix(): tree.parse(p, digest_of(p)) for p in tree.discover()}


def callback_rows(links: Dict[str, Any]) -> List[Any]:
    return [row for group in links["calls"] for row in group if row.get("resolution_tier") == 3]


def test_the_rows_are_cgcs_after_a_whole_resolution_and_after_an_edit(cgc: Any, tmp_path: Path) -> None:
    root = tmp_path.resolve()
    for name, text in FILES.items():
        (root / name).write_text(text)
    tree = Tree(root, None)
    files = parsed(tree)
    imports_map, owners, groups = tree.merge_imports_kept(None, files, set(files))
    state = resolve_tree(None, files, imports_map, set(files), True)[0]
    state.import_owners, state.import_groups = owners, groups
    theirs = tree.resolve(files, imports_map)
    assert compare_links(state.links, theirs) == []
    assert len(callback_rows(theirs)) >= 4  # the tree has what the pre-pass is for
    # Runner.run's call of `fn` means the functions passed to either method: square and cube.
    runner = sorted(row["called_name"] for row in callback_rows(theirs) if row["caller_file_path"].endswith("methods.py"))
    assert "square" in runner and "cube" in runner, runner

    # An edit: the narrowed run's pre-pass sees only the callers of the edited file's functions.
    (root / "other.py").write_text(FILES["other.py"].replace("return apply(double, 1)", "return apply(double, 1) + 1"))
    files = parsed(tree)
    changed = {(root / "other.py").as_posix()}
    imports_map, owners, groups = tree.merge_imports_kept(state, files, changed)
    state = resolve_tree(state, files, imports_map, changed, True)[0]
    assert compare_links(state.links, tree.resolve(files, imports_map)) == []


def test_a_value_reads_as_cgcs_list() -> None:
    value = CallbackTargets()
    assert not value and list(value) == [] and len(value) == 0
    value.runs.extend([(("/a.py", "f", 1), ("/b.py", "f", 4)), (("/a.py", "f", 1),)])
    assert value and len(value) == 3
    assert list(value) == [("/a.py", "f", 1), ("/b.py", "f", 4), ("/a.py", "f", 1)]
    assert value == list(value)


def test_a_pre_pass_other_than_the_one_the_engine_runs_breaks_the_contract(cgc: Any,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    assert cgc_contract.prepass_digest() in cgc_contract.PREPASS_SHA256
    monkeypatch.setattr(cgc_contract, "PREPASS_SHA256", frozenset({"0" * 64}))
    with pytest.raises(cgc_contract.ContractBroken, match="callback pre-pass"):
        cgc_contract.check_call_groups_shape()
