"""The engine's journal (journal.Journal): an update that does not commit leaves the last state as it was.

An update changes the last state's kept indices, imports map and views in place instead of copying them, so an
update that does not commit (the database busy, a write refused, a fault) must put every value back. A broken undo
would show as a graph that silently drifts from the tree after a busy retry: the next update would diff against
values that are not the graph's. So: plan an update (a file deleted, one added, one changed: keys come, go and
change in every kept dict), let it end without committing, and find the last state exactly as it was, key order
included; then the same update, committed, equals cgc's own build from every file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pytest

from pi_cgc_engine.context import RUN
from pi_cgc_engine.engine import Engine
from pi_cgc_engine.files import digest_of
from pi_cgc_engine.link_rows import compare_links
from pi_cgc_engine.recording import imports_owed
from pi_cgc_engine.resolution import resolve_tree
from pi_cgc_engine.tree import Tree
from pi_cgc_engine.tree_state import TreeState

PER_FILE = ("labels", "label_index", "rows", "deps", "targets")


def snapshot(s: TreeState) -> Dict[str, Any]:
    return {
        "owed": [sorted(s.order_owed), imports_owed(s.imports_map), sorted(s.views_owed)],
        "indices": {name: list(index.items()) for name, index in s.indices.items()},
        "contributors": {name: dict(c) for name, c in s.contributors.items()},
        "imports": list(dict.items(s.imports_map)),
        "owners": dict(s.import_owners),  # type: ignore[arg-type]
        "views": {lang: list(view.items()) for lang, view in s.lang_views.items()},
        # Per file, and the label index by path: their key order is not kept (nothing reads it), their values are.
        "perFile": {name: dict(getattr(s, name)) for name in PER_FILE},
    }


def undone(root: Path, exact: bool) -> Dict[str, Any]:
    """`exact`: the journal notes key orders and puts them back (an embedded database); else an order it moved
    is marked owed (a database server)."""

    def write(rel: str, text: str) -> None:
        (root / rel).write_text(text)

    write("a.py", "import os\nfrom b import helper, Base\n\n\nclass A(Base):\n    def go(self):\n        return helper()\n\n\ndef top():\n    return A().go()\n")
    write("b.py", "import json\n\n\nclass Base:\n    def go(self):\n        return 0\n\n\ndef helper():\n    return json.dumps(1)\n")
    write("c.py", "import re\nfrom a import top\n\n\nclass C:\n    def run(self):\n        return top()\n\n\ndef gone():\n    return re.compile('x')\n")

    tree = Tree(root, None)
    eng = Engine.__new__(Engine)
    eng.root, eng.tree, eng.trusted, eng.unknown, eng.foreign_rows = root, tree, True, set(), frozenset()
    files = {p.as_posix(): tree.parse(p, digest_of(p)) for p in tree.discover()}
    imports_map, owners, groups = tree.merge_imports_kept(None, files, set(files))
    state = resolve_tree(None, files, imports_map, set(files), True)[0]
    state.import_owners, state.import_groups = owners, groups
    eng.state = state
    # One update committed first: the kept dicts are then the engine's own (KeptDict, the map's ImportsMap).
    write("b.py", "import json\n\n\nclass Base:\n    def go(self):\n        return 1\n\n\ndef helper():\n    return json.dumps(2)\n")
    with eng.in_place(exact=exact):
        eng.state = eng.plan([(root / "b.py").as_posix()])[0]
    state = eng.state

    before = snapshot(state)
    objects = {name: id(index) for name, index in state.indices.items()}
    (root / "c.py").unlink()
    write("d.py", "import re\nfrom b import helper\n\n\nclass D(dict):\n    def run(self):\n        return helper()\n")
    write("a.py", "import os\nfrom b import helper\n\n\ndef top():\n    return helper()\n")
    paths = [(root / name).as_posix() for name in ("a.py", "c.py", "d.py")]

    changed_in_place: List[str] = []
    with eng.in_place(exact=exact) as journal:
        assert journal is not None
        planned = eng.plan(paths)[0]
        changed_in_place = sorted(name for name, index in planned.indices.items() if objects.get(name) == id(index)
                                  and id(index) in journal.dicts)
        changed_in_place += sorted(name for name in PER_FILE if getattr(planned, name) is getattr(state, name)
                                   and id(getattr(state, name)) in journal.dicts)
        # not committed: eng.state stays the last state, and the span's end undoes the journal

    after = snapshot(state)

    def same(a: Any, b: Any, owed: bool) -> bool:
        # Keys and values as they were; the key order too, unless (not exact) the order is marked owed.
        return a == b or not exact and owed and dict(a) == dict(b)

    newly_owed = [sorted(set(after["owed"][0]) - set(before["owed"][0])), after["owed"][1] and not before["owed"][1],
                  sorted(set(after["owed"][2]) - set(before["owed"][2]))]
    report: Dict[str, Any] = {
        "changedInPlace": changed_in_place,
        "stateKept": eng.state is state,
        "indices": {name: same(before["indices"][name], after["indices"][name], name in state.order_owed)
                    for name in before["indices"]},
        "contributors": all(before["contributors"][n] == after["contributors"][n] for n in before["contributors"]),
        "imports": same(before["imports"], after["imports"], imports_owed(state.imports_map)),
        "owners": before["owners"] == after["owners"],
        "perFile": {name: before["perFile"][name] == after["perFile"][name] for name in PER_FILE},
        "views": {lang: same(before["views"][lang], after["views"][lang], lang in state.views_owed)
                  for lang in before["views"]},
        "newlyOwed": newly_owed,
    }

    # The same update again, committed: cgc's own build from every file of the tree after it.
    RUN.options.check = True
    with eng.in_place(exact=exact):
        new = eng.plan(paths)[0]
        eng.state = new
    report["indexCheck"] = list(new.index_check or [])
    report["linksDiffer"] = compare_links(new.links, tree.resolve(new.files, new.imports_map))[:5]
    tree.kept_walk.close()

    # The update did change the last state's dicts in place (else this would test nothing).
    assert {"function_index", "class_index", "global_class_bases", *PER_FILE} <= set(report["changedInPlace"])
    assert report["stateKept"] is True
    assert [name for name, ok in report["indices"].items() if not ok] == []
    assert report["contributors"] is True
    assert report["imports"] is True
    assert report["owners"] is True
    assert report["perFile"] == {name: True for name in PER_FILE}
    assert len(report["views"]) > 0
    assert [lang for lang, ok in report["views"].items() if not ok] == []
    # The same update, committed after the undo, equals cgc's own build: indices, key orders and link rows.
    assert report["indexCheck"] == []
    assert report["linksDiffer"] == []
    return report


@pytest.mark.usefixtures("cgc")
def test_on_an_embedded_database_every_kept_index_the_imports_map_and_its_views_key_order_included(
        tmp_path: Path) -> None:
    assert undone(tmp_path.resolve(), exact=True)["newlyOwed"] == [[], False, []]


@pytest.mark.usefixtures("cgc")
def test_on_a_database_server_the_same_values_a_key_order_the_update_moved_marked_owed(tmp_path: Path) -> None:
    # The deleted file's keys went from the file-keyed indices: their order could not be put back.
    assert {"function_index", "class_index"} <= set(undone(tmp_path.resolve(), exact=False)["newlyOwed"][0])
