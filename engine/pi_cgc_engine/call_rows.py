"""A file's rows of one call group, kept compact: they read as the list of dicts cgc's resolution made.

cgc's resolution makes each CALLS row a dict of 13-14 keys (464 bytes). At 5 000 files the engine keeps 1.45
million of them, most of its state. Here a row is a tuple of its values with its key order last (a key order
is shared by every row that has it), 176 bytes; a dict is made again whenever a row is read. Reading a column
(the target of every row, to pick rows by target) makes no dict."""

from __future__ import annotations

from typing import Any, Dict, Iterable, Iterator, List, Tuple, overload


class CallRows:
    """Rows as cgc's resolution made them (dicts), kept as tuples; iteration and indexing give dicts."""

    __slots__ = ("_rows",)

    def __init__(self, rows: Iterable[Dict[str, Any]] = ()) -> None:
        orders: Dict[Tuple[str, ...], Tuple[str, ...]] = {}
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

    def __getstate__(self) -> List[Tuple[Any, ...]]:
        return self._rows

    def __setstate__(self, state: List[Tuple[Any, ...]]) -> None:
        self._rows = state


# The rows of a group a file has none of (most of the ten): one shared object.
NO_CALL_ROWS = CallRows()
