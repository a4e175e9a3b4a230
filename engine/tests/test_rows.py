"""The rows an update writes again into a changed file (link_rows.rows_by_target).

The rows of another file that point into a changed file, in their order. Files with very many rows (cgc's
heuristic calls: one row per same-named function of the tree, 1.4 million in one file of the 5 000-file bench
tree) are served from positions kept per target; what they give must be what filtering the whole list gives.
"""

from __future__ import annotations

from typing import Any, Dict, List, Set

from pi_cgc_engine.files import norm
from pi_cgc_engine.link_rows import BIG_ROW_LIST, rows_by_target


def rows(count: int, salt: int) -> List[Dict[str, Any]]:
    return [{"called_file_path": f"/nowhere/t{(i * 7 + salt) % 97}.py", "line_number": i} for i in range(count)]


def naive(listing: List[Dict[str, Any]], changed: Set[str], into: bool) -> List[Dict[str, Any]]:
    return [r for r in listing if (norm(r.get("called_file_path")) in changed) is into]


def test_rows_into_a_changed_file_are_a_filter_of_the_whole_list_small_large_and_after_the_list_changed() -> None:
    compared: List[Dict[str, Any]] = []
    kept: Dict[Any, Any] = {}  # the state's positions of large lists (TreeState.row_positions)
    changed = {"/nowhere/t3.py", "/nowhere/t50.py"}
    for count in (500, BIG_ROW_LIST + 5_000):
        first = rows(count, 0)
        again = rows(count, 1)  # the file resolved again: new lists, other rows
        for listing in (first, first, again, first):
            for into in (True, False):
                got = rows_by_target(listing, "called_file_path", changed, into, kept, ("a.py", "calls", 0))
                want = naive(listing, changed, into)
                same = got == want and all(a is b for a, b in zip(got, want))
                compared.append({"count": count, "into": into, "same": same, "rows": len(got)})
        assert rows_by_target(first, "called_file_path", {"/nowhere/x.py"}, True, kept, ("a.py", "calls", 0)) == []
    assert len(compared) == 16
    assert [entry for entry in compared if not entry["same"]] == []
    assert any(entry["into"] and entry["rows"] > 0 for entry in compared)
