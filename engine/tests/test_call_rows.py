"""CallRows: a file's call rows kept compact read as the list of dicts they were made from."""

from __future__ import annotations

import pickle
from typing import Any, Dict, List

from pi_cgc_engine.cache import private_loads
from pi_cgc_engine.call_rows import CallRows
from pi_cgc_engine.link_rows import BIG_ROW_LIST, rows_by_target


def made(count: int, salt: int = 0) -> List[Dict[str, Any]]:
    """Rows as cgc makes them: a function call, and a parameter call without called_context (another key order)."""
    rows: List[Dict[str, Any]] = []
    for i in range(count):
        if i % 5 == 4:
            rows.append({"type": "parameter", "caller_name": "f", "called_file_path": f"/t/p{(i + salt) % 13}.py",
                         "line_number": i, "args": ["x"]})
        else:
            rows.append({"type": "function", "caller_name": "g", "called_file_path": f"/t/p{(i + salt) % 13}.py",
                         "called_context": None, "line_number": i, "args": [], "confidence": 0.95})
    return rows


def test_they_read_as_the_rows_they_were_made_from() -> None:
    rows = made(12)
    compact = CallRows(rows)
    assert len(compact) == 12 and compact
    assert list(compact) == rows
    assert [list(row) for row in compact] == [list(row) for row in rows]  # each row's key order too
    assert compact[4] == rows[4] and compact[-1] == rows[-1] and compact[2:5] == rows[2:5]
    assert compact.column("called_context") == [row.get("called_context") for row in rows]
    assert compact == rows and compact == CallRows(rows)
    assert compact != CallRows(made(12, salt=1)) and compact != CallRows(rows[:-1])
    assert not CallRows() and list(CallRows()) == []
    # A row read is a dict of its own, and so are its lists: changing them changes nothing kept.
    compact[0]["line_number"] = -1
    compact[4]["args"].append("y")
    for row in compact:
        row["args"].append("z")
    assert compact[0] == rows[0] and compact[4] == rows[4] and list(compact) == rows
    assert compact.column("args") == [row["args"] for row in rows]


def test_a_list_of_other_values_is_kept_as_the_object_it_was() -> None:
    nested = [["a", 1], {"b": 2}]
    rows = [{"name": "f", "args": nested, "flags": [True, 0.5]}, {"name": "g", "args": ["x"], "flags": []}]
    compact = CallRows(rows)
    assert list(compact) == rows
    assert compact[0]["args"] is nested  # not plain: read as the list it was, as before
    assert type(compact[0]["flags"]) is list and compact[0]["flags"] == [True, 0.5]
    assert [type(value) for value in compact[0]["flags"]] == [bool, float]


def test_without_shared_lists_a_list_is_read_as_the_object_it_was() -> None:
    # A lean file's functions: the engine's narrowing knows a function's parameters by the list's identity.
    rows = made(12)
    compact = CallRows(rows, share_lists=False)
    assert list(compact) == rows
    assert all(read["args"] is row["args"] for read, row in zip(compact, rows))
    assert compact[3]["args"] is rows[3]["args"]
    lean = compact.without(frozenset({"caller_name"}))
    assert all(read["args"] is row["args"] for read, row in zip(lean, rows))


def test_without_drops_the_keys_and_keeps_the_rest_as_it_was() -> None:
    rows = made(12)
    lean = CallRows(rows).without(frozenset({"confidence", "caller_name"}))
    want = [{key: value for key, value in row.items() if key not in ("confidence", "caller_name")} for row in rows]
    assert list(lean) == want and [list(row) for row in lean] == [list(row) for row in want]
    assert lean[4] == want[4] and lean.column("args") == [row["args"] for row in want]
    compact = CallRows(rows)
    assert compact.without(frozenset({"absent"})) is compact


def test_the_cache_keeps_them_and_loads_them_as_they_were() -> None:
    compact = CallRows(made(40))
    again = private_loads(pickle.dumps({"rows": [compact]}, protocol=pickle.HIGHEST_PROTOCOL))["rows"][0]
    assert isinstance(again, CallRows) and again == compact and list(again) == made(40)


def test_rows_by_target_picks_the_same_rows_from_either_form() -> None:
    changed = {"/t/p3.py", "/t/p7.py"}
    for count in (60, BIG_ROW_LIST + 10):
        rows = made(count)
        compact = CallRows(rows)
        for into in (True, False):
            want = rows_by_target(rows, "called_file_path", changed, into, {}, ("a.py", "calls", 0))
            assert rows_by_target(compact, "called_file_path", changed, into, {}, ("a.py", "calls", 0)) == want
            assert want  # the pick is not empty either way


def test_a_cache_load_shares_their_numbers_and_keeps_every_value_as_it_was() -> None:
    rows = made(40)
    # Values sharing by value would change: a bool beside whole numbers, a float zero of either sign, NaN, None.
    rows[0]["line_number"] = True
    rows[1]["confidence"] = -0.0
    rows[2]["confidence"] = float("nan")
    rows[3]["line_number"] = None
    rows[6]["line_number"] = 1 << 70  # beyond a machine number
    odd = [dict(rows[5], line_number=10_000 + i) for i in range(3)]
    again = private_loads(pickle.dumps([CallRows(rows), CallRows(odd)], protocol=pickle.HIGHEST_PROTOCOL))
    loaded = list(again[0])
    assert [repr(row) for row in loaded] == [repr(row) for row in rows]  # -0.0, nan, True and None as they were
    assert [type(row["line_number"]) for row in loaded] == [type(row["line_number"]) for row in rows]
    assert list(again[1]) == odd
    # One object per number, within a file's rows and across files (whole numbers above 256 and floats are
    # objects of their own each time pickle makes one).
    files = [[{"line_number": 70_000 + i % 3, "confidence": 0.5 + i % 2} for i in range(9)] for _ in range(2)]
    first, second = (list(rows) for rows in private_loads(pickle.dumps([CallRows(files[0]), CallRows(files[1])])))
    assert first == files[0] and second == files[1]
    assert first[0]["line_number"] is first[3]["line_number"] is second[6]["line_number"]
    assert first[0]["confidence"] is first[2]["confidence"] is second[4]["confidence"]
