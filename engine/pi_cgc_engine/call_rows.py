"""A list of small dicts kept compact, read as the list it was: a file's rows of one call group as cgc's resolution
made them, and a lean file's parsed calls, variables and functions (files.COMPACT_LISTS).

cgc's resolution makes each CALLS row a dict of 13-14 keys (464 bytes). At 5 000 files the engine keeps 1.45
million of them, and 0.8 million parsed calls, variables and functions: most of its state. Here the rows of one
shape (key order) are kept as one flat tuple of their values, 8 bytes a value; a dict is made again whenever a row
is read. As a tuple per row (176 bytes a CALLS row) the 2.3 million rows took 354 MB at 5 000 files. Reading a
column (the target of every row, to pick rows by target) makes no dict.

In the cache the rows are kept by column, and a column of whole numbers or floats as machine numbers: a number
is an object of its own in Python (32 bytes a whole number, 24 a float), and pickle shares strings and tuples,
never numbers. Loaded row by row, the 1.45 million rows of 5 000 files held 2.9 million line numbers for 8 000
distinct ones and 1.45 million confidences for 9. Loaded by column, each number is the one object SHARED_NUMBERS
keeps for its value: about 40 MB less resident at 5 000 files, for about 0.4 s more of the cache's load."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from itertools import chain
from typing import Any, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Tuple, overload

# One object per whole number and per float the loaded rows hold. It grows with the distinct values only:
# line numbers, and cgc's few confidences.
SHARED_NUMBERS: Dict[str, Dict[Any, Any]] = {"q": {}, "d": {}}
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


# The cache's form of a file's rows: per run of rows of one shape, the shape and the run's columns.
PackedRuns = List[Tuple["Shape", List[Column]]]
# A row's keys in order, and the positions of its values that were lists (kept as tuples: see CallRows).
Shape = Tuple[Tuple[str, ...], Tuple[int, ...]]
# One tuple per distinct list of plain values (strings, whole numbers, None) the rows hold: a call's arguments,
# a function's decorators. At 5 000 files 2.2 million such lists, 750 000 objects, 250 000 distinct values.
SHARED_TUPLES: Dict[Tuple[Any, ...], Tuple[Any, ...]] = {}


def plain_values(values: Iterable[Any]) -> bool:
    """Only strings, whole numbers and None: values equal only when they are the same (1 == True == 1.0), so
    equal containers of them can be one shared object."""
    return all(value is None or type(value) in (str, int) for value in values)


class CallRows:
    """Rows as cgc's resolution made them (dicts), kept by runs of one shape; iteration and indexing give dicts.

    A run is its shape and one flat tuple of its rows' values, row after row: no object per row. A value that was
    a list of plain values is kept as a tuple shared by every equal one, and read as a new list (`share_lists`).
    So a row read is a dict of its own, and so are its lists: changing them changes nothing kept. Without
    `share_lists`, a list is kept as the object it was and read as that object: what is known by its identity
    (a function's parameters: call_run.param_lists) must be."""

    __slots__ = ("_runs", "_starts")

    def __init__(self, rows: Iterable[Dict[str, Any]] = (), share_lists: bool = True) -> None:
        shapes = SHAPES
        shared = SHARED_TUPLES
        runs: List[Tuple[Shape, List[Any]]] = []
        shape: Optional[Shape] = None
        values: List[Any] = []
        for row in rows:
            lists: Tuple[int, ...] = ()
            row_values = list(row.values())
            for at, value in enumerate(row_values):
                if share_lists and type(value) is list and plain_values(value):
                    lists += (at,)
                    kept = tuple(value)
                    row_values[at] = shared.setdefault(kept, kept)
            row_shape = (tuple(row), lists)
            if not row_shape[0]:
                raise ValueError("a row without keys is not kept compact")  # its run would have no width
            if row_shape != shape:
                shape = shapes.setdefault(row_shape, row_shape)
                values = []
                runs.append((shape, values))
            values.extend(row_values)
        self._set_runs([(shape, tuple(values)) for shape, values in runs])

    def _set_runs(self, runs: List[Tuple[Shape, Tuple[Any, ...]]]) -> None:
        self._runs = tuple(runs)
        starts: List[int] = []
        count = 0
        for (keys, _), values in runs:
            starts.append(count)
            count += len(values) // len(keys)
        starts.append(count)
        self._starts = tuple(starts)

    def __len__(self) -> int:
        return self._starts[-1]

    def __bool__(self) -> bool:
        return self._starts[-1] > 0

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        for (keys, lists), values in self._runs:
            flat = iter(values)
            for row in zip(*[flat] * len(keys)):
                made = dict(zip(keys, row))
                for at in lists:
                    made[keys[at]] = list(row[at])
                yield made

    def _row(self, at: int) -> Dict[str, Any]:
        count = self._starts[-1]
        if at < 0:
            at += count
        if not 0 <= at < count:
            raise IndexError("CallRows index out of range")
        run = bisect_right(self._starts, at) - 1 if len(self._runs) > 1 else 0
        (keys, lists), values = self._runs[run]
        width = len(keys)
        begin = (at - self._starts[run]) * width
        made = dict(zip(keys, values[begin:begin + width]))
        for position in lists:
            made[keys[position]] = list(made[keys[position]])
        return made

    @overload
    def __getitem__(self, at: int) -> Dict[str, Any]: ...

    @overload
    def __getitem__(self, at: slice) -> List[Dict[str, Any]]: ...

    def __getitem__(self, at: int | slice) -> Any:
        if isinstance(at, slice):
            return [self._row(index) for index in range(*at.indices(len(self)))]
        return self._row(at)

    def column(self, name: str) -> List[Any]:
        """Each row's value of `name` (None where a row has no such key), in order, without making the rows."""
        column: List[Any] = []
        for (keys, lists), values in self._runs:
            width = len(keys)
            if name not in keys:
                column.extend([None] * (len(values) // width))
                continue
            at = keys.index(name)
            picked = values[at::width]
            column.extend(map(list, picked) if at in lists else picked)
        return column

    def without(self, names: FrozenSet[str]) -> "CallRows":
        """These rows without the keys in `names` (self where no row has any)."""
        if not any(names.intersection(keys) for (keys, _), _ in self._runs):
            return self
        runs: List[Tuple[Shape, Tuple[Any, ...]]] = []
        for (keys, lists), values in self._runs:
            kept = [at for at, key in enumerate(keys) if key not in names]
            if not kept:
                raise ValueError("rows without any key are not kept compact")
            shape = (tuple(keys[at] for at in kept), tuple(new for new, at in enumerate(kept) if at in lists))
            columns = [values[at::len(keys)] for at in kept]
            runs.append((SHAPES.setdefault(shape, shape), tuple(chain.from_iterable(zip(*columns)))))
        rows = CallRows()
        rows._set_runs(runs)
        return rows

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, CallRows):
            return len(self) == len(other) and (self._runs == other._runs or list(self) == list(other))
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CallRows({list(self)!r})"

    def __getstate__(self) -> PackedRuns:
        return [(shape, [_packed_column(values[at::len(shape[0])]) for at in range(len(shape[0]))])
                for shape, values in self._runs]

    def __setstate__(self, state: PackedRuns) -> None:
        runs: List[Tuple[Shape, Tuple[Any, ...]]] = []
        for shape, columns in state:
            shape = SHAPES.setdefault(shape, shape)
            runs.append((shape, tuple(chain.from_iterable(zip(*map(_unpacked_column, columns))))))
        self._set_runs(runs)


# One tuple per shape, shared by every run that has it (a few dozen: cgc's kinds of rows and of parsed items).
SHAPES: Dict[Shape, Shape] = {}

# The rows of a group a file has none of (most of the ten): one shared object.
NO_CALL_ROWS = CallRows()
