"""Narrowed resolution: which files an update resolves again (docs/engine.md, "Narrowing")."""

from __future__ import annotations

import bisect
import re
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from .context import RUN
from .files import UNREAD_FIELDS, FileEntry
from .journal import MISSING, order_differs
from .link_rows import WHOLE_KINDS
from .recording import ALL_ITEMS, ALL_KEYS, NONEMPTY
from .tree_state import TreeState

IDENTIFIER = re.compile(r"[A-Za-z_]\w*")  # cgc's test for a bare-name argument in the pre-pass


def call_arg_names(entry: FileEntry) -> Dict[str, Set[str]]:
    """Bare-name argument -> names of the calls passing it (what cgc's callback pre-pass matches)."""
    if entry.callargs is None:
        found: Dict[str, Set[str]] = {}
        for call in entry.data.get("function_calls") or []:
            name = call.get("name")
            if not name:
                continue
            for arg in call.get("args") or []:
                text = str(arg).strip()
                if IDENTIFIER.fullmatch(text):
                    found.setdefault(text, set()).add(name)
        entry.callargs = found
    return entry.callargs


def call_positions(entry: FileEntry) -> Dict[str, Tuple[int, ...]]:
    """Call name -> the positions of the file's calls of that name passing a bare name, in order."""
    if entry.callpos is None:
        found: Dict[str, List[int]] = {}
        for index, call in enumerate(entry.data.get("function_calls") or []):
            name = call.get("name")
            if name and any(IDENTIFIER.fullmatch(str(arg).strip()) for arg in call.get("args") or []):
                found.setdefault(name, []).append(index)
        entry.callpos = {name: tuple(found[name]) for name in found}
    return entry.callpos


def call_facts(entry: FileEntry) -> None:
    """Derives what updates read of a file's calls (kept with the file: the first update pays nothing)."""
    call_arg_names(entry)
    call_positions(entry)


def call_names(entry: FileEntry) -> FrozenSet[str]:
    if entry.callnames is None:
        entry.callnames = frozenset(name for names in call_arg_names(entry).values() for name in names)
    return entry.callnames


def _same_entries(before: Any, after: Any) -> bool:
    """Equal, but for the unread fields of the entry dicts a value lists (also inside the (path, entry) pairs of
    _functions_by_name): a kept entry is lean (files.make_lean), a fresh one is not."""
    if not (isinstance(before, list) and isinstance(after, list)) or len(before) != len(after):
        return False
    return all(a == b or same_but_unread(a, b) for a, b in zip(before, after))


def same_but_unread(a: Any, b: Any) -> bool:
    """Equal, but for UNREAD_FIELDS in any dict inside (dicts, lists and tuples)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() - UNREAD_FIELDS != b.keys() - UNREAD_FIELDS:
            return False
        return all(a[k] == b[k] or same_but_unread(a[k], b[k]) for k in a if k not in UNREAD_FIELDS)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and type(a) is type(b) and len(a) == len(b):
        return all(x == y or same_but_unread(x, y) for x, y in zip(a, b))
    return False


def diff_index(tag: str, old: Dict[Any, Any], new: Dict[Any, Any], into: Set[Tuple[str, Any]]) -> None:
    """Adds (tag, key) for every key whose value differs, and the pseudo keys that changed."""
    changed = False
    for key, value in new.items():
        before = old.get(key, MISSING)
        if before is MISSING or (before != value and not _same_entries(before, value)):
            into.add((tag, key))
            changed = True
    for key in old:
        if key not in new:
            into.add((tag, key))
            changed = True
    if changed or list(old) != list(new):
        into.add((tag, ALL_ITEMS))
    if list(old) != list(new):
        into.add((tag, ALL_KEYS))
    if bool(old) != bool(new):
        into.add((tag, NONEMPTY))


def diff_keys(tag: str, old: Dict[Any, Any], new: Dict[Any, Any], keys: Iterable[Any], reordered: bool,
              into: Set[Tuple[str, Any]], order_known: bool = True) -> None:
    """diff_index restricted to `keys` (every key whose value may differ); `reordered` says the key order
    may have changed (then it is compared, or taken as changed when a side's order is owed: not
    `order_known`)."""
    changed = False
    for key in keys:
        before, after = old.get(key, MISSING), new.get(key, MISSING)
        if before is MISSING and after is MISSING:
            continue
        if before is MISSING or after is MISSING or (before != after and not _same_entries(before, after)):
            into.add((tag, key))
            changed = True
    order_changed = reordered and (not order_known or order_differs(old, new))
    if changed or order_changed:
        into.add((tag, ALL_ITEMS))
    if order_changed:
        into.add((tag, ALL_KEYS))
    if bool(old) != bool(new):
        into.add((tag, NONEMPTY))


class CandidateIndex:
    """name -> the files that have it, so that an update finds the few files a name reaches without a pass
    over every file (5 000 of them, 3-7 ms a pass). Only ever added to: a file's names before a change stay
    beside its names after it, so the index is a superset for every state from the one it was built for on
    (whichever update fails, nothing is undone) and is shared by them; each file found is checked exactly."""

    __slots__ = ("files_of",)

    def __init__(self) -> None:
        # A name one file has maps to that file's key, not to a set of one (most names: at 5 000 files, 180 000 of
        # the 232 000 reads that decide an update, 216 bytes each as a set).
        self.files_of: Dict[Any, str | Set[str]] = {}

    def add(self, key: str, names: Iterable[Any]) -> None:
        files_of = self.files_of
        for name in names:
            found = files_of.get(name)
            if found is None:
                files_of[name] = key
            elif isinstance(found, str):
                if found != key:
                    files_of[name] = {found, key}
            else:
                found.add(key)

    def files_with(self, names: Iterable[Any]) -> Set[str]:
        found: Set[str] = set()
        files_of = self.files_of
        for name in names:
            keys = files_of.get(name)
            if keys is None:
                continue
            if isinstance(keys, str):
                found.add(keys)
            else:
                found |= keys
        return found


# The candidate indices over the files' calls: a bare-name argument -> the files passing it, and the name
# of a call passing a bare name -> the files making such a call.
CALL_CANDIDATES: Dict[str, Callable[[FileEntry], Iterable[str]]] = {
    "passers": lambda entry: call_arg_names(entry).keys(),
    "callers": lambda entry: call_names(entry),
}


def call_candidates(prev: Optional["TreeState"], files: Dict[str, FileEntry], keys: List[str],
                    changed: Set[str]) -> Dict[str, CandidateIndex]:
    """The last state's call candidate indices with the changed files' names added, or new ones."""
    kept = prev.candidates if prev is not None else None
    if kept is not None and all(name in kept for name in CALL_CANDIDATES):
        for key in changed:
            entry = files.get(key)
            if entry is not None and "error" not in entry.data:
                for name, names_of in CALL_CANDIDATES.items():
                    kept[name].add(key, names_of(entry))
        return {name: kept[name] for name in CALL_CANDIDATES}
    built = {name: CandidateIndex() for name in CALL_CANDIDATES}
    for key in keys:
        for name, names_of in CALL_CANDIDATES.items():
            built[name].add(key, names_of(files[key]))
    return built


def _calls_by_name(data: Optional[Dict[str, Any]]) -> Dict[str, List[Tuple[str, ...]]]:
    found: Dict[str, List[Tuple[str, ...]]] = {}
    if data is not None and "error" not in data:
        for call in data.get("function_calls") or []:
            found.setdefault(call.get("name"), []).append(tuple(str(arg) for arg in call.get("args") or []))
    return found


def _function_lines(data: Optional[Dict[str, Any]]) -> Dict[str, List[Any]]:
    found: Dict[str, List[Any]] = {}
    if data is not None and "error" not in data:
        for fn in data.get("functions") or []:
            found.setdefault(fn.get("name"), []).append(fn.get("line_number"))
    return found


def callback_names(old_files: Dict[str, FileEntry], files: Dict[str, FileEntry], keys: List[str], changed: Set[str],
                   defined: Iterable[str], passers: Optional[CandidateIndex] = None) -> Set[str]:
    """Names f whose callback entries (a file, f, a parameter) may differ after `changed`.

    cgc's pre-pass adds, for each call named f that passes a bare name a as its i-th argument, and for
    each function named f (any file) with an i-th parameter p, one entry (file of a function named a,
    a, its line) per function named a, under (that f's file, f, p) -- in file order, then call order.
    So the entries under f differ only if (1) a changed file's calls named f (their arguments) differ
    and one passes a name some function has, or (2) the files and lines of the functions named a
    differ for an a that some call named f passes."""
    names: Set[str] = set()
    moved: Set[str] = set()
    defined_before: Set[str] = set()  # beside `defined` (every name, tens of thousands: not copied)
    for path in changed:
        old_entry, new_entry = old_files.get(path), files.get(path)
        old_data = old_entry.data if old_entry is not None else None
        new_data = new_entry.data if new_entry is not None else None
        old_lines, new_lines = _function_lines(old_data), _function_lines(new_data)
        defined_before.update(old_lines)
        moved.update(n for n in set(old_lines) | set(new_lines) if old_lines.get(n) != new_lines.get(n))
        old_calls, new_calls = _calls_by_name(old_data), _calls_by_name(new_data)
        for name in set(old_calls) | set(new_calls):
            before, after = old_calls.get(name, []), new_calls.get(name, [])
            if before != after and any(
                (text in defined or text in defined_before) and IDENTIFIER.fullmatch(text)
                for args in before + after for text in (arg.strip() for arg in args)
            ):
                names.add(name)
    if moved and passers is not None:
        keys = [key for key in passers.files_with(moved) if key in files and "error" not in files[key].data]
    for key in keys if moved else ():
        passing = call_arg_names(files[key])
        for arg in passing.keys() & moved:
            names.update(passing[arg])
    names.discard(None)
    return names


# The languages whose files the whole-tree kinds read: each of cgc's build_*_links for them skips a file of
# another language first (build_binds_links and build_previews_links read the imports map too, for Kotlin
# files only).
WHOLE_KIND_LANGS = frozenset({"go", "haskell", "elixir", "csharp", "c_sharp", "dart", "kotlin"})


def whole_kinds_kept(prev: Optional["TreeState"], files: Dict[str, FileEntry], changed: Set[str], has_kotlin: bool) -> bool:
    """Whether the last state's whole-tree rows are this tree's: the files they read are the same (no changed
    file was or is of their languages) and, without a Kotlin file, the imports map is read by none."""
    if prev is None or has_kotlin or any(kind not in prev.whole for kind in WHOLE_KINDS):
        return False
    for path in changed:
        for entry in (prev.files.get(path), files.get(path)):
            if entry is not None and entry.data.get("lang") in WHOLE_KIND_LANGS:
                return False
    return True


def carried(last: Optional[Dict[str, Any]], resolved: Dict[str, Any], keys: List[str], chosen: Set[str],
            changed: Set[str], keys_kept: bool) -> Dict[str, Any]:
    """Per parsed file: the resolved files' new value, every other file's last one. With the last state's keys
    (keys_kept: `keys` is theirs but for the changed files) only the changed and resolved files are set: in the
    last dict itself under the update's journal (read it as it was with as_before), in a copy of it otherwise
    (a pass over 5 000 files without them); its order is not kept (nothing reads it)."""
    if last is not None and keys_kept:
        journal = RUN.journal
        if journal is not None:
            for key in changed:
                if dict.__contains__(last, key):
                    journal.delete(last, key, ordered=False)
            for key in chosen:
                journal.set(last, key, resolved[key])
            found = last
        else:
            found = dict(last)
            for key in changed:
                found.pop(key, None)
            for key in chosen:
                found[key] = resolved[key]
        if len(found) == len(keys):
            return found
    # (an unchosen file is not a changed one: its value in `last` is the last state's, in place or not)
    return {key: resolved[key] if key in chosen else last[key] for key in keys}  # type: ignore[index]


class SortedMembers:
    """`key in` a sorted list of keys, by bisection: a set of 5 000 paths costs 0.2-0.5 ms per update."""

    __slots__ = ("keys",)

    def __init__(self, keys: List[str]):
        self.keys = keys

    def __contains__(self, key: str) -> bool:
        keys = self.keys
        at = bisect.bisect_left(keys, key)
        return at < len(keys) and keys[at] == key


def parsed_keys(prev: Optional[TreeState], files: Dict[str, FileEntry], changed: Set[str]) -> List[str]:
    """The keys of the files whose parse did not fail, in path order: the last state's with the changed files
    put in or taken out (only they can differ), or, without them, from every file (5 000: 4 ms). A list the
    last state has is never changed: it is copied first."""
    kept = prev.keys if prev is not None else None
    if kept is None:
        return [p for p in sorted(files) if "error" not in files[p].data]
    keys = kept
    for path in sorted(changed):
        wanted = path in files and "error" not in files[path].data
        at = bisect.bisect_left(keys, path)
        if wanted != (at < len(keys) and keys[at] == path):
            if keys is kept:
                keys = list(kept)
            if wanted:
                keys.insert(at, path)
            else:
                del keys[at]
    return keys
