"""The engine's kept indices with an owed key order (kept_indices, "Kept indices").

When a file with keys comes or goes, an index keeps the right keys and values and its key order is put right only
when something iterates it. cgc's resolution must then see, in every index it iterates, the order cgc's own build
from every file gives, exactly as if the order had been rebuilt at once; so must the imports map and its
per-language views, kept the same way.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List

import pytest

from pi_cgc_engine.cgc_contract import CALL_INDEXES, caller_frame, lang_view_of
from pi_cgc_engine.context import RUN
from pi_cgc_engine.files import FileEntry, digest_of
from pi_cgc_engine.kept_indices import compare_kept_indices
from pi_cgc_engine.recording import imports_owed
from pi_cgc_engine.resolution import resolve_tree
from pi_cgc_engine.tree import Tree


def test_owed_orders_are_cgcs_wherever_its_resolution_iterates_them_after_a_file_comes_and_after_it_goes(
        cgc: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path.resolve()

    def write(rel: str, text: str) -> None:
        (root / rel).write_text(text)

    write("m.py", "def run():\n    return 1\n\n\nclass Base:\n    def go(self):\n        return 1\n")
    write("n.py", "from m import run, Base\n\n\nclass K(Base):\n    pass\n\n\ndef call():\n    return run()\n")
    write("z.py", "from n import call\n\n\ndef last():\n    return call()\n")

    # What cgc's loop sees: every index it is given, iterated (as cgc's own code would) while the first file is
    # resolved. resolved_posix is a function of cgc's calls module the loop calls for each file.
    seen: Dict[str, Dict[Any, Any]] = {}
    owed_at_loop: List[str] = []
    imports_owed_at_loop: List[List[bool]] = []
    captured_make: List[Any] = []
    seen_imports: Dict[str, Any] = {}
    seen_view: Dict[str, Any] = {}
    original = cgc._calls._resolved_posix

    def spy(path: Any) -> Any:
        run = RUN.call_run
        if not seen and run is not None and getattr(run, "swapped", False):
            frame = caller_frame(1)
            if frame.is_call_groups:
                owed_at_loop.extend(sorted(run.keeper.owed))
                captured_make[:] = [frame["_get_lang_imports"]]
                for name in (*CALL_INDEXES, "_functions_by_name"):
                    index = frame.get(name)
                    if isinstance(index, dict):
                        seen[name] = dict(index.items())  # iterating: an owed order is settled first
                imports_owed_at_loop.append([imports_owed(run.imports_map), "python" in run.views_owed])
                seen_imports.update(frame["imports_map"].items())
                seen_view.update(frame["_get_lang_imports"]("python").items())
        return original(path)

    spy.cache_clear = original.cache_clear  # type: ignore[attr-defined]  # cgc clears its cache at each resolution
    monkeypatch.setattr(cgc._calls, "_resolved_posix", spy)

    tree = Tree(root, None)

    def parsed() -> Dict[str, FileEntry]:
        return {p.as_posix(): tree.parse(p, digest_of(p)) for p in tree.discover()}

    report: List[Dict[str, Any]] = []
    files = parsed()
    # The imports map as the engine's plan keeps it (Tree.merge_imports_kept), with each name's files.
    imports_map, owners, groups = tree.merge_imports_kept(None, files, set(files))
    state = resolve_tree(None, files, imports_map, set(files), True)[0]
    state.import_owners, state.import_groups = owners, groups

    def step(name: str, changed: List[str]) -> None:
        nonlocal state
        seen.clear()
        owed_at_loop.clear()
        imports_owed_at_loop.clear()
        seen_imports.clear()
        seen_view.clear()
        files = parsed()
        paths = {(root / c).as_posix() for c in changed}
        imports_map, owners, groups = tree.merge_imports_kept(state, files, paths)
        state, resolved = resolve_tree(state, files, imports_map, paths, True)
        state.import_owners, state.import_groups = owners, groups
        keys = [k for k in sorted(files) if "error" not in files[k].data]
        whole_map = tree.merge_imports(files)
        whole_view = lang_view_of(captured_make[0], "python", whole_map) if captured_make else {}
        differences = (compare_kept_indices(seen, [files[k].data for k in keys], whole_map) if seen
                       else ["nothing iterated"])
        report.append({
            "step": name,
            "owedAtLoop": list(owed_at_loop),
            "owedAfter": sorted(state.order_owed),
            "resolved": len(resolved),
            "iterated": sorted(seen),
            "differences": differences,
            "importsOwedAtLoop": imports_owed_at_loop[:1],
            "importsInOrder": list(seen_imports) == list(whole_map) and seen_imports == dict(whole_map),
            "viewInOrder": bool(whole_view) and list(seen_view) == list(whole_view) and seen_view == whole_view,
        })

    # A file that sorts first, with names of its own and names the others have: its keys go first in cgc's order.
    write("a.py", "def brand_new():\n    return 2\n\n\ndef run():\n    return 3\n\n\nclass Early(Base):\n    def go(self):\n        return 4\n")
    step("a file that sorts first added", ["a.py"])
    # It goes again, and a file that calls is edited (so that a file is resolved and cgc's loop runs).
    os.remove(root / "a.py")
    write("n.py", "from m import run, Base\n\n\nclass K(Base):\n    pass\n\n\ndef call():\n    return run() + 1\n")
    step("that file deleted, a caller edited", ["a.py", "n.py"])
    tree.kept_walk.close()

    assert [r["step"] for r in report] == ["a file that sorts first added", "that file deleted, a caller edited"]
    for entry in report:
        # The case under test: the order of the indices the change gave or took keys was owed when cgc's loop
        # began, and the loop saw every index in cgc's order; what it iterated is owed no more.
        assert {"function_index", "_functions_by_name"} <= set(entry["owedAtLoop"]), entry
        assert entry["resolved"] > 0, entry
        assert {"function_index", "_functions_by_name"} <= set(entry["iterated"]), entry
        assert entry["differences"] == [], entry
        assert entry["owedAfter"] == [], entry
        # The imports map and its per-language view, likewise.
        assert entry["importsOwedAtLoop"] == [[True, True]], entry
        assert entry["importsInOrder"] is True, entry
        assert entry["viewInOrder"] is True, entry
