"""The dicts the engine lends to cgc's resolution: kept indices, recording copies, the imports map."""

from __future__ import annotations

import bisect
from typing import Any, Callable, Dict, Iterable, Iterator, List, Tuple

from .context import RUN, NarrowingFailed
from .files import FileEntry, merge_order_of
from .journal import before_reorder

# Pseudo keys: a read of an index as a whole (its keys in order, everything, whether it is empty).
ALL_KEYS = "\0all-keys"
ALL_ITEMS = "\0all-items"
NONEMPTY = "\0nonempty"


def _note(tag: str, key: Any) -> None:
    sink = RUN.sink
    if sink is not None:
        try:
            sink.add((tag, key))
        except TypeError:  # an unhashable key: the lookup itself raises the same way in cgc
            sink.add((tag, ALL_ITEMS))


class LendableDict(dict):
    """The layout shared by the indices the engine builds and the recording dicts it gives cgc: one can
    become the other in place (`lend`), so a 5 000-file index is recorded without being copied."""

    __slots__ = ("settle", "tag", "owed", "chosen_only", "run")  # the last two: FunctionsByName's
    settle: Any  # Callable[[dict], None] or None
    tag: Any
    owed: bool
    chosen_only: Any
    run: Any


class KeptDict(LendableDict):
    """An index the engine built: a plain dict (it keeps dict's own iteration, so copies of it are fast)."""

    __slots__ = ()


class OwedOrderDict(LendableDict):
    """A copy of a kept index given to cgc whose key order may be owed (see "Kept indices", the order): before
    anything that can see the order, `settle` (set by the engine) puts the keys in cgc's order."""

    __slots__ = ()

    def _settled(self) -> None:
        settle = self.settle
        if settle is not None:
            self.settle = None
            settle(self)

    def __iter__(self) -> Iterator[Any]:
        self._settled()
        return dict.__iter__(self)

    def __reversed__(self) -> Iterator[Any]:
        self._settled()
        return dict.__reversed__(self)  # type: ignore[attr-defined]

    def keys(self) -> Any:
        self._settled()
        return dict.keys(self)

    def values(self) -> Any:
        self._settled()
        return dict.values(self)

    def items(self) -> Any:
        self._settled()
        return dict.items(self)

    def copy(self) -> Dict[Any, Any]:
        self._settled()
        return dict(dict.items(self))

    def __repr__(self) -> str:
        self._settled()
        return dict.__repr__(self)

    def __or__(self, other: Any) -> Any:
        self._settled()
        return dict.__or__(self, other)


def refill_after(settle: Callable[[], None], source: Dict[Any, Any]) -> Callable[[Dict[Any, Any]], None]:
    """An OwedOrderDict's `settle`: settles the dict it was copied from (in place), then copies it again."""

    def refill(copy: Dict[Any, Any]) -> None:
        settle()
        dict.clear(copy)
        dict.update(copy, source)

    return refill


class RecordingDict(OwedOrderDict):
    """A copy of one of cgc's indices that notes every read into RUN.sink. Writes are refused: the
    loop body is known to write none, and one would make the recorded reads meaningless."""

    __slots__ = ()

    def __init__(self, source: Dict[Any, Any], tag: str):
        dict.__init__(self, source)
        self.tag = tag
        self.settle = None

    def __getitem__(self, key: Any) -> Any:
        _note(self.tag, key)
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        _note(self.tag, key)
        return dict.get(self, key, default)

    def __contains__(self, key: Any) -> bool:
        _note(self.tag, key)
        return dict.__contains__(self, key)

    def __iter__(self) -> Iterator[Any]:
        _note(self.tag, ALL_KEYS)
        return OwedOrderDict.__iter__(self)

    def __reversed__(self) -> Iterator[Any]:
        _note(self.tag, ALL_KEYS)
        return OwedOrderDict.__reversed__(self)

    def __len__(self) -> int:
        _note(self.tag, ALL_KEYS)
        return dict.__len__(self)

    def __bool__(self) -> bool:
        _note(self.tag, NONEMPTY)
        return dict.__len__(self) > 0

    def keys(self) -> Any:
        _note(self.tag, ALL_KEYS)
        return OwedOrderDict.keys(self)

    def values(self) -> Any:
        _note(self.tag, ALL_ITEMS)
        return OwedOrderDict.values(self)

    def items(self) -> Any:
        _note(self.tag, ALL_ITEMS)
        return OwedOrderDict.items(self)

    def copy(self) -> Dict[Any, Any]:
        _note(self.tag, ALL_ITEMS)
        return OwedOrderDict.copy(self)

    def __eq__(self, other: Any) -> bool:
        _note(self.tag, ALL_ITEMS)
        return dict.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        _note(self.tag, ALL_ITEMS)
        return dict.__ne__(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        _note(self.tag, ALL_ITEMS)
        return OwedOrderDict.__repr__(self)

    def __or__(self, other: Any) -> Any:
        _note(self.tag, ALL_ITEMS)
        return OwedOrderDict.__or__(self, other)

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise NarrowingFailed(f"cgc wrote to the {self.tag} index while resolving")

    __setitem__ = __delitem__ = __ior__ = _refuse  # type: ignore[assignment]
    setdefault = pop = popitem = update = clear = _refuse  # type: ignore[assignment]


class CallbackRecordingDict(RecordingDict):
    """callback_arg_targets: the loop reads (its own file, function, parameter); noted by function."""

    __slots__ = ()

    def _key(self, key: Any) -> Any:
        return key[1] if isinstance(key, tuple) and len(key) == 3 else ALL_ITEMS

    def __getitem__(self, key: Any) -> Any:
        _note(self.tag, self._key(key))
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        _note(self.tag, self._key(key))
        return dict.get(self, key, default)

    def __contains__(self, key: Any) -> bool:
        _note(self.tag, self._key(key))
        return dict.__contains__(self, key)


class Parsed(dict):
    """A file's parsed data as given to cgc: its function_calls are what the run decides."""

    __slots__ = ("key",)
    key: str

    def get(self, name: Any, default: Any = None) -> Any:
        if name == "function_calls":
            run = RUN.call_run
            if run is not None:
                return run.function_calls(self, default)
        return dict.get(self, name, default)


def _parsed_key(fd: "Parsed") -> str:
    return fd.key


def entries_at(data: List["Parsed"], keys: Iterable[str]) -> List[Tuple[int, "Parsed"]]:
    """The entries of the engine's list (in key order) of these keys, with their positions, in the list's order:
    found by key, not by a pass over every file (5 000 of them)."""
    found = []
    for key in sorted(keys):
        at = bisect.bisect_left(data, key, key=_parsed_key)
        if at < len(data) and data[at].key == key:
            found.append((at, data[at]))
    return found


class FunctionsByName(OwedOrderDict):
    """cgc's _functions_by_name during a narrowed callback pre-pass. The pre-pass looks a name up twice:
    for the functions a call may call (the entries go under each one's file), then, inside the loop
    over each one's parameters, for the functions a bare-name argument may mean. The first gets only
    the chosen files' functions of that name (the entries under other files are read by no chosen
    file; the order of the rest is kept), the second everything, as cgc built it."""

    __slots__ = ()

    def get(self, name: Any, default: Any = None) -> Any:
        if self.run.in_parameters or not self.run.in_prepass:
            return dict.get(self, name, default)
        return self.chosen_only.get(name, default)


class ImportsMap(LendableDict):
    """The imports map given to cgc: `in` notes the name asked about while a file's contribution is taken.
    `owed` (see Tree.merge_imports_kept): the right names and paths, not yet in cgc's order."""

    __slots__ = ()

    def __contains__(self, key: Any) -> bool:
        tests = RUN.tests
        if tests is not None:
            tests.add(key)
        return dict.__contains__(self, key)


def imports_owed(imports_map: Dict[str, List[str]]) -> bool:
    return getattr(imports_map, "owed", False)


def imports_order(files: Dict[str, FileEntry]) -> Dict[str, None]:
    """The imports map's names in cgc's order: first appearance, file after file in merge order."""
    order: Dict[str, None] = {}
    for path in merge_order_of(files)[0]:
        order.update(dict.fromkeys(files[path].imports))
    return order


def settle_imports(imports_map: Dict[str, List[str]], files: Dict[str, FileEntry]) -> None:
    """Puts an imports map whose order is owed in cgc's order, in place."""
    if not imports_owed(imports_map):
        return
    order = imports_order(files)
    if len(order) != len(imports_map):
        raise NarrowingFailed(f"the kept imports map has {len(imports_map)} names where its files give {len(order)}")
    items = [(name, dict.__getitem__(imports_map, name)) for name in order]
    before_reorder(imports_map)
    dict.clear(imports_map)
    dict.update(imports_map, items)
    imports_map.owed = False  # type: ignore[attr-defined]


def settled_imports(imports_map: Dict[str, List[str]], files: Dict[str, FileEntry]) -> Dict[str, List[str]]:
    """The imports map in cgc's order, leaving it as it is (for checks and whole resolutions)."""
    if not imports_owed(imports_map):
        return imports_map
    settled = ImportsMap(imports_map)
    settled.owed = True
    settle_imports(settled, files)
    return settled
