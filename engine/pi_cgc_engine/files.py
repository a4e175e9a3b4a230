"""A parsed file as the engine keeps it, and the path helpers every module shares."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

from .call_rows import CallRows, plain_values
from .context import RUN

# ---------------------------------------------------------------------------------------------
# The tree: parsed files, the imports map, resolved link rows.


@dataclass
class FileEntry:
    size: int
    mtime_ns: int
    digest: str
    data: Dict[str, Any]
    imports: Dict[str, List[str]]
    # Derived from data when first needed: identifier argument -> names of the calls passing it.
    callargs: Optional[Dict[str, Set[str]]] = None
    # Derived likewise: the names of the calls passing a bare name (what the callback pre-pass matches),
    # and the names of the Module nodes the file's imports write metadata to (module_import_rows).
    callnames: Optional[FrozenSet[str]] = None
    # And the positions in data's function_calls of the calls passing a bare name, by the call's name.
    callpos: Optional[Dict[str, Tuple[int, ...]]] = None
    modnames: Optional[FrozenSet[str]] = None
    # The copy of data given to cgc's resolution (a Parsed; not cached on disk).
    parsed: Optional[Any] = field(default=None, compare=False, repr=False)
    # Without the fields nothing reads after the file was written (UNREAD_FIELDS: its functions' source text and
    # docstrings, about half of what the engine holds): see make_lean. A lean entry is never written to a graph.
    lean: bool = False

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("parsed", None)
        return state


# Lists whose entries' "source" is not code text: an import's is the module it imports from, which the Module
# metadata of every later update reads (link_rows.module_import_rows).
KEEP_WHOLE = frozenset({"imports"})


class SharedValues:
    """One object per distinct string, and per distinct tuple of strings, whole numbers and None, across the files
    of a read: a parse makes a new string for every name it meets (at 5 000 files, 5.4 million strings for 0.5
    million distinct values: 300 MB of copies), and the cache keeps what is shared shared (pickle's memo)."""

    def __init__(self) -> None:
        self.strings: Dict[str, str] = {}
        self.tuples: Dict[Tuple[Any, ...], Tuple[Any, ...]] = {}

    def share(self, value: Any) -> Any:
        """`value` with its strings and such tuples the ones kept; dicts and lists are changed in place."""
        kind = type(value)
        if kind is str:
            return self.strings.setdefault(value, value)
        if kind is dict:
            for key, item in value.items():
                shared = self.share(item)
                if shared is not item:
                    value[key] = shared
        elif kind is list:
            for at, item in enumerate(value):
                shared = self.share(item)
                if shared is not item:
                    value[at] = shared
        elif kind is tuple:
            items = tuple(self.share(item) for item in value)
            # A tuple holding a bool or a float stays as it is (see plain_values).
            if plain_values(items):
                return self.tuples.setdefault(items, items)
            return items if any(a is not b for a, b in zip(items, value)) else value
        return value


def lean_items(data: Dict[str, Any]) -> None:
    """Drops UNREAD_FIELDS from the entries of a file's parsed data (its functions', classes', … source text and
    docstrings), but for the lists in KEEP_WHOLE."""
    for key, entries in data.items():
        if key in KEEP_WHOLE:
            continue
        if isinstance(entries, list):
            for item in entries:
                if isinstance(item, dict):
                    for name in UNREAD_FIELDS:
                        item.pop(name, None)
        elif isinstance(entries, CallRows):
            data[key] = entries.without(UNREAD_FIELDS)


# The lists of a lean entry kept as CallRows (tuples, read as the dicts they were): each item a small dict that
# nothing changes once parsed, and the bulk of what the engine holds. At 5 000 files, 527 000 calls of 9 keys,
# 197 000 variables of 8 and 110 000 functions of 12: 390 MB as dicts. Not classes: cgc adds them to other lists.
COMPACT_LISTS = ("function_calls", "variables", "functions")


def compact_lists(entry: FileEntry, keys: Tuple[str, ...] = COMPACT_LISTS) -> None:
    """The entry's lists `keys` (of COMPACT_LISTS) as CallRows, every field kept, in its data and in the copy given
    to cgc alike."""
    for key in keys:
        items = entry.data.get(key)
        if isinstance(items, list) and items and all(type(item) is dict for item in items):
            # A function's parameter list is the object the engine's narrowing knows it by (call_run.param_lists).
            entry.data[key] = compact = CallRows(items, share_lists=key != "functions")
            if entry.parsed is not None and dict.get(entry.parsed, key) is items:
                dict.__setitem__(entry.parsed, key, compact)


def make_lean(entry: FileEntry) -> None:
    """A kept entry without what no later step reads: cgc's resolution never reads a function's source or
    docstring, and the graph writers take a fresh parse (Engine.plan parses a lean file again before it is written;
    the index parses the cache's lean files again). Its calls, variables and functions are kept compact
    (COMPACT_LISTS)."""
    if not entry.lean:
        lean_items(entry.data)
        compact_lists(entry)
        entry.lean = True


def lean_nested(value: Any, depth: int = 4) -> None:
    """lean_items through the nesting of a kept index's contribution (dicts and lists of entries, and the
    (path, entry) pairs of _functions_by_name): cgc's index entries are copies of the parsed ones."""
    if depth == 0:
        return
    if isinstance(value, dict):
        for name in UNREAD_FIELDS:
            value.pop(name, None)
        for inner in value.values():
            if isinstance(inner, (dict, list, tuple)):
                lean_nested(inner, depth - 1)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            if isinstance(inner, (dict, list, tuple)):
                lean_nested(inner, depth - 1)


def same_content(fresh: Dict[str, Any], kept: FileEntry) -> bool:
    """Whether a fresh parse holds what a kept entry holds (a lean one: but for UNREAD_FIELDS)."""
    if not kept.lean:
        return fresh == kept.data
    return {key: [{k: v for k, v in item.items() if k not in UNREAD_FIELDS} if isinstance(item, dict) else item
                  for item in value] if isinstance(value, list) and key not in KEEP_WHOLE else value
            for key, value in fresh.items()} == kept.data


def file_ext(path: Path) -> str:
    return ".d.ts" if path.name.endswith(".d.ts") else path.suffix


def digest_of(path: Path) -> Tuple[int, int, str]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns, hashlib.sha1(path.read_bytes()).hexdigest()


def _position(entry: Dict[str, Any]) -> Tuple[Any, ...]:
    return (entry["line_number"], str(entry.get("name")), str(entry.get("context")), str(entry.get("class_context")))


def _line(entry: Dict[str, Any]) -> int:
    return entry["line_number"]


# Lists whose order within a line the parser gives the same at every parse (source order), and the graph reads:
# cgc's writer MERGEs a JS/TS file's IMPORTS edges by line and sets each row's imported_name in turn, so the last
# name a line imports is the edge's (`import { Writable, Readable }`: Readable). Sorted by name, the graph differed.
PARSER_ORDERED = frozenset({"imports"})


def _whole(entry: Dict[str, Any]) -> str:
    return repr(sorted((key, repr(value)) for key, value in entry.items() if key not in UNREAD_FIELDS))


def canonical_order(data: Dict[str, Any]) -> Dict[str, Any]:
    """The file's entries in source order. cgc's parser (tree-sitter 0.25's captures, gathered per capture name)
    lists a file's functions and variables in a different order at each parse, even within one process. No
    graph depends on that order (the parity replays compare with cgc's own index, in whatever order it
    parsed), but the engine's indices do: re-parsing a file whose entries are unchanged would reorder them,
    and every file that read them would be resolved again. Sorted by line, then name and context; entries
    still tied (two names assigned on one line) by all they hold; imports by line only (PARSER_ORDERED).
    --parse-order-as-parsed keeps cgc's order (for comparisons: bench/engine-profile.py)."""
    if RUN.options.parse_order_as_parsed:
        return data
    for key, entries in data.items():
        if not (isinstance(entries, list) and len(entries) > 1):
            continue
        if not all(isinstance(entry, dict) and isinstance(entry.get("line_number"), int) for entry in entries):
            continue
        if key in PARSER_ORDERED:
            entries.sort(key=_line)  # stable: a line's entries stay in the parser's order
            continue
        entries.sort(key=_position)
        start = 0
        while start < len(entries):
            end = start + 1
            while end < len(entries) and _position(entries[end]) == _position(entries[start]):
                end += 1
            if end - start > 1:
                entries[start:end] = sorted(entries[start:end], key=_whole)
            start = end
    return data


@functools.lru_cache(maxsize=1 << 16)
def ext_of(path: str) -> str:
    return file_ext(Path(path))


def merge_order_of(files: Dict[str, Any]) -> Tuple[List[str], Dict[str, int]]:
    """The order in which the imports map merges the files (extension groups in order of first appearance
    in path order, files in path order), and each extension group's rank."""
    order = sorted(files)
    groups = dict.fromkeys(ext_of(path) for path in order)
    rank = {ext: index for index, ext in enumerate(groups)}
    return (sorted(order, key=lambda path: rank[ext_of(path)]) if len(groups) > 1 else order), rank


@functools.lru_cache(maxsize=1 << 16)
def _resolved(path: str) -> str:
    return Path(path).resolve().as_posix()


def norm(path: Any) -> str:
    return _resolved(str(path)) if path else ""


# Fields of the parsed functions and classes that cgc's resolution never reads (the entries of
# function_index & co. are shallow copies of them; calls.py and inheritance.py name neither, read
# entries by literal key only, and never compare whole entries). Most edits change a function's
# source; without this every file reading that function's entry would be re-resolved.
UNREAD_FIELDS = frozenset({"source", "docstring"})
