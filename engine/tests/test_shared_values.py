"""SharedValues: equal strings (and tuples of strings and whole numbers) of the files of a read become one object,
and nothing reads differently."""

from __future__ import annotations

import copy
from typing import Any, Dict

from pi_cgc_engine.files import SharedValues


def parsed(name: str) -> Dict[str, Any]:
    """Like a parse of one file: new strings everywhere (built at run time, not constants)."""
    def new(text: str) -> str:
        return "".join(list(text))

    return {
        "path": new(f"/r/{name}.py"),
        "lang": new("python"),
        "functions": [{"name": new("run"), "args": [new("self"), new("value")], "context": None,
                       "flags": (len(name) > 0, 1), "ratio": (1.0, new("x"))}],
        "function_calls": [{"name": new("run"), "context": (new("run"), new("function_definition"), 3),
                            "class_context": (None, None), "args": [new("value")]}],
    }


def test_equal_values_become_one_object_and_read_the_same() -> None:
    shared = SharedValues()
    a, b = parsed("a"), parsed("b")
    before = copy.deepcopy([a, b])
    assert a["lang"] is not b["lang"]
    for data in (a, b):
        shared.share(data)
    assert [a, b] == before
    assert a["lang"] is b["lang"]
    assert a["functions"][0]["args"][0] is b["functions"][0]["args"][0]
    assert a["function_calls"][0]["context"] is b["function_calls"][0]["context"]
    assert a["function_calls"][0]["class_context"] is b["function_calls"][0]["class_context"]
    # A tuple holding a bool or a float keeps its own (True == 1 == 1.0 would otherwise merge them).
    assert a["functions"][0]["flags"] is not b["functions"][0]["flags"]
    assert type(a["functions"][0]["flags"][0]) is bool
    assert a["functions"][0]["ratio"][1] is b["functions"][0]["ratio"][1]
    # A tuple of whole numbers is not a tuple of booleans.
    ones = shared.share((1, "k"))
    assert shared.share((True, "k")) is not ones and shared.share((1, "k")) is ones


def test_a_lean_entry_keeps_its_calls_and_variables_compact_and_they_read_the_same() -> None:
    import pickle

    from pi_cgc_engine.cache import private_loads
    from pi_cgc_engine.call_rows import CallRows
    from pi_cgc_engine.files import FileEntry, make_lean
    from pi_cgc_engine.recording import Parsed

    data = parsed("a")
    data["variables"] = [{"name": "limit", "line_number": 300 + i, "context": None, "type": None} for i in range(3)]
    data["functions"][0]["source"] = "def run(self, value): ..."
    entry = FileEntry(size=1, mtime_ns=1, digest="d", data=data, imports={})
    entry.parsed = Parsed(data)
    calls, variables = copy.deepcopy(data["function_calls"]), copy.deepcopy(data["variables"])
    make_lean(entry)
    assert isinstance(entry.data["function_calls"], CallRows) and isinstance(entry.data["variables"], CallRows)
    assert dict.get(entry.parsed, "function_calls") is entry.data["function_calls"]  # cgc's copy: the same compact list
    assert "source" not in entry.data["functions"][0]
    again = private_loads(pickle.dumps(entry))
    for kept in (entry, again):
        assert list(kept.data["function_calls"]) == calls and kept.data["variables"] == variables
        assert kept.data["variables"][2]["line_number"] == 302 and len(kept.data["variables"]) == 3
