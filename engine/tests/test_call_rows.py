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
    # A row read is a dict of its own: changing it changes nothing kept.
    compact[0]["line_number"] = -1
    assert compact[0] == rows[0]


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
