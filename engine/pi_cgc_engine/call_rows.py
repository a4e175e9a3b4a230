"""A list of small dicts kept compact, read as the list it was: a file's rows of one call group as cgc's resolution
made them, and a lean file's parsed calls, variables and functions (files.COMPACT_LISTS).

cgc's resolution makes each CALLS row a dict of 13-14 keys (464 bytes). At 5 000 files the engine keeps 1.45
million of them, most of its state. Here a row is a tuple of its values with its key order last (a key order
is shared by every row that has it), 176 bytes; a dict is made again whenever a row is read. Reading a column
(the target of every row, to pick rows by target) makes no dict.

In the cache the rows are kept by column, and a column of whole numbers or floats as machine numbers: a number
is an object of its own in Python (32 bytes a whole number, 24 a float), and pickle shares strings and tuples,
never numbers. Loaded row by row, the 1.45 million rows of 5 000 files held 2.9 million line numbers for 8 000
distinct ones and 1.45 million confidences for 9. Loaded by column, each number is the one object SHARED_NUMBERS
keeps for its value: about 40 MB less resident at 5 000 files, for about 0.4 s more of the cache's load."""

from __future__ import annotations

from array import array
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Tuple, overload

# One object per whole number and per float the loaded rows hold. It grows with the distinct values only:
# line numbers, and cgc's few confidences.
SHARED_NUMBERS: Dict[str, Dict[Any, Any]] = {"q": {}, "d": {}}
# One tuple per key order, shared by every row that has it (a few dozen: cgc's kinds of rows and of parsed items).
KEY_ORDERS: Dict[Tuple[str, ...], Tuple[str, ...]] = {}
_INT_RANGE = (-(1 << 63), (1 << 63) - 1)
# A column as the cache keeps it: its values, or (array type code, the numbers' bytes, the positions of None).
Column = List[Any] | Tuple[str, bytes, Tuple[int, ...]]


def _packed_column(column: Sequence[Any]) -> Column:
    """Whole numbers only, or floats only (and None), as machine numbers; anything else as it is. Never a bool
    (True == 1), a float zero (0.0 == -0.0) or NaN (not equal to itself), which sharing by value would change."""
    kinds = set(map(type, column))
    kinds.discard(type(None))
    if len(kinds) != 1:
        return list(column)
    kind = kinds.pop()
    nones = tuple(at for at, value in enumerate(column) if value is None) if None in column else ()
    values = [0 if value is None else value for value in column] if nones else column
    if kind is int and _INT_RANGE[0] <= min(values) and max(values) <= _INT_RANGE[1]:
        return ("q", array("q", values).tobytes(), nones)
    if kind is float and not any(value == 0 or value != value for value in set(values)):
        return ("d", array("d", values).tobytes(), nones)
    return list(column)


def _unpacked_column(column: Column) -> List[Any]:
    if isinstance(column, list):
        return column
    code, data, nones = column
    numbers = array(code)
    numbers.frombytes(data)
    table = SHARED_NUMBERS[code]
    for value in set(numbers):
        table.setdefault(value, value)
    values = list(map(table.__getitem__, numbers))
    for at in nones:
        values[at] = None
    return values


# The cache's form of a file's rows: per row length, the rows' positions (None: all of them) and their columns.
PackedRows = List[Tuple[Optional[Tuple[int, ...]], List[Column]]]


def packed_rows(rows: List[Tuple[Any, ...]]) -> PackedRows:
    lengths = sorted(set(map(len, rows)))
    if len(lengths) == 1:
        return [(None, [_packed_column(column) for column in zip(*rows)])]
    groups: PackedRows = []
    for length in lengths:
        at = tuple(index for index, row in enumerate(rows) if len(row) == length)
        groups.append((at, [_packed_column(column) for column in zip(*(rows[index] for index in at))]))
    return groups


def unpacked_rows(groups: PackedRows) -> List[Tuple[Any, ...]]:
    if len(groups) == 1 and groups[0][0] is None:
        return list(zip(*map(_unpacked_column, groups[0][1])))
    rows: List[Any] = [None] * sum(len(at or ()) for at, _ in groups)
    for at, columns in groups:
        for index, row in zip(at or (), zip(*map(_unpacked_column, columns))):
            rows[index] = row
    return rows


class CallRows:
    """Rows as cgc's resolution made them (dicts), kept as tuples; iteration and indexing give dicts."""

    __slots__ = ("_rows",)

    def __init__(self, rows: Iterable[Dict[str, Any]] = ()) -> None:
        orders = KEY_ORDERS
        packed: List[Tuple[Any, ...]] = []
        for row in rows:
            order = tuple(row)
            order = orders.setdefault(order, order)
            packed.append((*row.values(), order))
        self._rows = packed

    def __len__(self) -> int:
        return len(self._rows)

    def __bool__(self) -> bool:
        return bool(self._rows)

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        for row in self._rows:
            yield dict(zip(row[-1], row))

    @overload
    def __getitem__(self, at: int) -> Dict[str, Any]: ...

    @overload
    def __getitem__(self, at: slice) -> List[Dict[str, Any]]: ...

    def __getitem__(self, at: int | slice) -> Any:
        if isinstance(at, slice):
            return [dict(zip(row[-1], row)) for row in self._rows[at]]
        row = self._rows[at]
        return dict(zip(row[-1], row))

    def column(self, name: str) -> List[Any]:
        """Each row's value of `name` (None where a row has no such key), in order, without making the rows."""
        where: Dict[Tuple[str, ...], int] = {}
        values = []
        for row in self._rows:
            order = row[-1]
            at = where.get(order)
            if at is None:
                at = where[order] = order.index(name) if name in order else -1
            values.append(row[at] if at >= 0 else None)
        return values

    def without(self, names: FrozenSet[str]) -> "CallRows":
        """These rows without the keys in `names` (self where no row has any)."""
        if not any(names.intersection(row[-1]) for row in self._rows):
            return self
        return CallRows({key: value for key, value in zip(row[-1], row) if key not in names} for row in self._rows)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, CallRows):
            if len(self._rows) != len(other._rows):
                return False
            for mine, theirs in zip(self._rows, other._rows):
                if mine != theirs and (mine[-1] == theirs[-1] or dict(zip(mine[-1], mine)) != dict(zip(theirs[-1], theirs))):
                    return False
            return True
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CallRows({list(self)!r})"

    def __getstate__(self) -> PackedRows:
        return packed_rows(self._rows) if self._rows else []

    def __setstate__(self, state: PackedRows) -> None:
        self._rows = unpacked_rows(state) if state else []


# The rows of a group a file has none of (most of the ten): one shared object.
NO_CALL_ROWS = CallRows()
