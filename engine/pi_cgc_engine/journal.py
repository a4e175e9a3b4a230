"""The journal: the last state's large dicts changed in place by an update, and put back if it does not commit."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from .context import RUN, NarrowingFailed

MISSING = object()


class _Before:
    """A dict the journal changed, read as the last state had it: by key, its size, and its key order where the
    journal knows it (see Journal); `order_differs` compares that order with another dict's."""

    __slots__ = ("now", "olds", "order")

    def __init__(self, now: Dict[Any, Any], olds: Dict[Any, Any], order: Optional[Tuple[Any, ...]]):
        self.now, self.olds, self.order = now, olds, order

    def get(self, key: Any, default: Any = None) -> Any:
        olds = self.olds
        if key in olds:
            old = olds[key]
            return default if old is MISSING else old
        return dict.get(self.now, key, default)

    def __contains__(self, key: Any) -> bool:
        return self.get(key, MISSING) is not MISSING

    def __len__(self) -> int:
        size = len(self.now)
        for key, old in self.olds.items():
            size += (old is not MISSING) - dict.__contains__(self.now, key)
        return size

    def _came_or_went(self) -> bool:
        now = self.now
        return any((old is MISSING) == dict.__contains__(now, key) for key, old in self.olds.items())

    def __iter__(self) -> Iterator[Any]:
        keys = _order_before(self.now, self.olds, self.order)
        if len(keys) != len(self):  # a key the last state had was taken out before its order was noted
            raise NarrowingFailed("the key order of a dict changed in place was read as the last state's")
        return iter(keys)

    def order_differs(self, other: Dict[Any, Any]) -> bool:
        # Other keys are another order; the same keys, set again in place, are in the same order unless a
        # settle moved them (then the order noted before it is compared).
        if self._came_or_went():
            return True
        return self.order is not None and _order_before(self.now, self.olds, self.order) != list(other)


def order_differs(old: Any, new: Dict[Any, Any]) -> bool:
    """Whether two dicts' keys are in another order (`old` may be a dict the update changed in place)."""
    if isinstance(old, _Before):
        return old.order_differs(new)
    return list(old) != list(new)


def _order_before(now: Dict[Any, Any], olds: Dict[Any, Any], order: Optional[Tuple[Any, ...]]) -> List[Any]:
    """The keys of a dict the journal changed, in the order the last state had them: the order the journal noted
    (before a settle, and with `exact` before the first key was taken out), else the dict's own (values set again
    keep their place, a new key goes to the end), less the keys the update added. Without `exact`, a key taken out
    before the order was noted is missing from it (the callers compare lengths)."""
    keys = order if order is not None else dict.__iter__(now)
    return [key for key in keys if olds.get(key, True) is not MISSING]


class Journal:
    """The last state's large dicts that an update changes in place instead of copying (the copies of the kept
    indices, the imports map and its views cost 20-30 ms at 5 000 files), with the value each changed key had.
    Until the update commits, `before` reads such a dict as the last state has it; an update that does not
    commit (busy, refused, failed, a fault) puts every value back (undo). A key taken out and put back goes to
    the end, so the key order is noted before a settle reorders a dict (a pass over its keys, a fraction of the
    settle), and, with `exact` (an embedded database, where a busy lock makes undone updates common), before
    the first key is taken out: the order is then put back as well. Without it (5-7 ms saved on an update that
    takes a file out at 5 000 files), a dict whose order moved has it marked owed by its `on_undo`, as a kept
    index's is after any change (see "Kept indices"): right, at the cost of resolving again what reads it."""

    def __init__(self, exact: bool = True) -> None:
        self.exact = exact
        # id -> (the dict, each changed key's value before (MISSING: absent), [its key order before, or None],
        # on_undo callbacks (given whether the order moved))
        self.dicts: Dict[int, Tuple[Dict[Any, Any], Dict[Any, Any], List[Optional[Tuple[Any, ...]]],
                                    List[Callable[[bool], None]]]] = {}

    def _track(self, d: Dict[Any, Any]) -> Tuple[Dict[Any, Any], Dict[Any, Any], List[Optional[Tuple[Any, ...]]],
                                                 List[Callable[[bool], None]]]:
        tracked = self.dicts.get(id(d))
        if tracked is None:
            tracked = self.dicts[id(d)] = (d, {}, [None], [])
        return tracked

    def on_undo(self, d: Dict[Any, Any], callback: Callable[[bool], None]) -> None:
        """`callback(order_moved)` runs when the update is undone, after the dict's values are put back."""
        self._track(d)[3].append(callback)

    def set(self, d: Dict[Any, Any], key: Any, value: Any) -> None:
        olds = self._track(d)[1]
        if key not in olds:
            olds[key] = dict.get(d, key, MISSING)
        dict.__setitem__(d, key, value)

    def delete(self, d: Dict[Any, Any], key: Any, ordered: bool = True) -> None:
        _, olds, order, _ = self._track(d)
        if key not in olds:
            olds[key] = dict.get(d, key, MISSING)
        if dict.__contains__(d, key):
            if self.exact and ordered and order[0] is None and olds[key] is not MISSING:
                order[0] = tuple(dict.__iter__(d))
            dict.__delitem__(d, key)

    def before_reorder(self, d: Dict[Any, Any]) -> None:
        """Called before a settle puts `d`'s keys in another order in place (`d` may be the last state's)."""
        order = self._track(d)[2]
        if order[0] is None:
            order[0] = tuple(dict.__iter__(d))

    def before(self, d: Dict[Any, Any]) -> Any:
        """`d` as the last state had it, or `d` itself when the update has not changed it."""
        tracked = self.dicts.get(id(d))
        return d if tracked is None or tracked[0] is not d else _Before(d, tracked[1], tracked[2][0])

    def undo(self) -> None:
        for d, olds, order, callbacks in self.dicts.values():
            # A noted order is whole only when noted before any key the last state had was taken out.
            keys = _order_before(d, olds, order[0]) if order[0] is not None else None
            moved = False
            for key, old in olds.items():
                if old is MISSING:
                    dict.pop(d, key, None)
                else:
                    moved = moved or not dict.__contains__(d, key)
                    dict.__setitem__(d, key, old)
            if keys is not None and len(keys) == len(d):
                items = [(key, dict.__getitem__(d, key)) for key in keys]
                dict.clear(d)
                dict.update(d, items)
                moved = False
            elif keys is not None:
                moved = True
            for callback in callbacks:
                callback(moved)
        self.dicts.clear()


def as_before(d: Any) -> Any:
    """A dict of the last state as it had it, whether or not the update under way changed it in place."""
    journal = RUN.journal
    return d if journal is None else journal.before(d)


def before_reorder(d: Dict[Any, Any]) -> None:
    """Notes a dict's key order before a settle puts its keys in another order in place."""
    if RUN.journal is not None:
        RUN.journal.before_reorder(d)
