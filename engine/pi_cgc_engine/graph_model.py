"""The in-memory graph the replay writes into (GraphRows): nodes by key, edges by their ends and MERGE key, and
the MATCH and MERGE semantics of the backend's profile."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from .graph_profiles import NotReplicable, Profile

# ---------------------------------------------------------------------------------------------------------------
# The in-memory graph.

NodeId = Tuple[str, Any]  # (label, primary key value)


@dataclass
class GraphRows:
    """What build_graph returns. nodes[label] is {primary key value: properties} (properties include the key; on
    KùzuDB a positional label's key is cgc's uid). edges[type] is {(from id, to id, merge key): properties} in the
    order cgc first wrote them; an id is (label, primary key value); the merge key is the tuple of the
    properties cgc's MERGE pattern names (empty for most types)."""
    profile: Profile
    nodes: Dict[str, Dict[Any, Dict[str, Any]]] = field(default_factory=dict)
    edges: Dict[str, Dict[Tuple[NodeId, NodeId, Tuple[Any, ...]], Dict[str, Any]]] = field(default_factory=dict)
    _by_name: Dict[Tuple[str, Any], List[Any]] = field(default_factory=dict)
    # The same nodes by (label, name, path), each with its place in _by_name's list (a MATCH by name and path
    # reads only these: common names such as `__init__` have thousands of nodes, one scan each otherwise).
    _by_name_path: Dict[Tuple[str, Any, Any], List[Any]] = field(default_factory=dict)
    _name_seq: Dict[Tuple[str, Any], int] = field(default_factory=dict)
    _name_count: Iterator[int] = field(default_factory=itertools.count)
    # One id tuple per node among the edges' ends (MATCH and MERGE make a new one each time: at 5 000 files,
    # 2.4 million ends of 1.2 million edges for half a million nodes).
    _ids: Dict[NodeId, NodeId] = field(default_factory=dict)

    def drop_lookups(self) -> None:
        """The replay is done: its MATCH lookups go (at 5 000 files, an entry per named node in each of three
        maps), and only the rows stay for the loader."""
        self._by_name = {}
        self._by_name_path = {}
        self._name_seq = {}
        self._ids = {}

    # -- nodes
    def node(self, nid: NodeId) -> Optional[Dict[str, Any]]:
        return self.nodes.get(nid[0], {}).get(nid[1])

    def found(self, nid: NodeId) -> Dict[str, Any]:
        """The node of an id that match() (or a walk of nodes) gave: one the graph holds."""
        return self.nodes[nid[0]][nid[1]]

    def merge_node(self, label: str, key: Any, key_props: Optional[Dict[str, Any]] = None) -> Tuple[NodeId, Dict[str, Any]]:
        """MERGE (n:label {key}): key_props are the pattern's properties where the key is not one property."""
        if key is None or (key_props is not None and any(v is None for v in key_props.values())):
            raise NotReplicable(f"a {label} MERGE with a NULL key")
        table = self.nodes.setdefault(label, {})
        props = table.get(key)
        if props is None:
            props = table[key] = dict(key_props) if key_props is not None else {self.profile.primary_keys.get(label, "uid"): key}
            if "name" in props:
                self._index_name(label, key, props["name"], props.get("path"))
        return (label, key), props

    def _index_name(self, label: str, key: Any, name: Any, path: Any) -> None:
        self._by_name.setdefault((label, name), []).append(key)
        self._by_name_path.setdefault((label, name, path), []).append(key)
        self._name_seq[(label, key)] = next(self._name_count)

    def _unindex_name(self, label: str, key: Any, props: Dict[str, Any]) -> None:
        self._by_name[(label, props["name"])].remove(key)
        self._by_name_path[(label, props["name"], props.get("path"))].remove(key)

    def set(self, nid: NodeId, prop: str, value: Any) -> None:
        label, key = nid
        if self.profile.typed:
            columns = self.profile.columns(label)
            if columns is not None and prop not in columns:
                raise NotReplicable(f"SET {label}.{prop}: no such column")
            check_type(f"{label}.{prop}", columns[prop] if columns else None, value)
        props = self.nodes[label][key]
        if value is None and not self.profile.typed:  # a SET of NULL removes the property
            if prop == "name" and "name" in props:
                self._unindex_name(label, key, props)
            elif prop == "path" and "name" in props:
                self._move_path(label, key, props, None)
            props.pop(prop, None)
            return
        if prop == "name" and props.get("name") != value:
            if "name" in props:
                self._unindex_name(label, key, props)
            self._index_name(label, key, value, props.get("path"))
        elif prop == "path" and "name" in props and props.get("path") != value:
            self._move_path(label, key, props, value)
        props[prop] = value

    def _move_path(self, label: str, key: Any, props: Dict[str, Any], path: Any) -> None:
        """A named node's path changes: its (name, path) entry moves; its place in _by_name stays."""
        self._by_name_path[(label, props["name"], props.get("path"))].remove(key)
        self._by_name_path.setdefault((label, props["name"], path), []).append(key)

    def match(self, label: str, **where: Any) -> List[NodeId]:
        """MATCH (n:label {where}): a NULL in the pattern matches nothing; a property the table lacks is a binder
        exception (raised as Binder)."""
        if self.profile.typed:
            columns = self.profile.columns(label)
            if columns is None:
                raise Binder(label)
            for prop in where:
                if prop not in columns:
                    raise Binder(f"{label}.{prop}")
        if any(v is None for v in where.values()):
            return []
        table = self.nodes.get(label, {})
        # What a lookup by key already matched is not compared again (a string is equal as a key as it is by
        # equal); the rest of the pattern is.
        rest = where
        if "name" in where and "path" in where:
            found = self._by_name_path.get((label, where["name"], where["path"]), ())
            seq = self._name_seq
            keys = sorted(found, key=lambda k: seq[(label, k)]) if len(found) > 1 else list(found)
            rest = _unmatched(where, ("name", "path"))
        elif "name" in where:
            keys = list(self._by_name.get((label, where["name"]), ()))
            rest = _unmatched(where, ("name",))
        elif self.profile.primary_keys.get(label) in where:
            pk = where[self.profile.primary_keys[label]]
            keys = [pk] if pk in table else []
        else:
            keys = list(table)
        if not rest:
            return [(label, k) for k in keys]
        return [(label, k) for k in keys if all(equal(table[k].get(p), v) for p, v in rest.items())]

    def populated(self, label: str) -> bool:
        return bool(self.nodes.get(label))

    # -- edges
    def merge_edge(self, rel: str, a: NodeId, b: NodeId, key: Tuple[Tuple[str, Any], ...] = ()) -> Dict[str, Any]:
        if not self.profile.has_pair(rel, a[0], b[0]):
            raise Binder(f"{rel} {a[0]}->{b[0]}")
        if any(v is None for _, v in key):
            raise NotReplicable(f"a {rel} MERGE with a NULL in its key {key}")
        table = self.edges.setdefault(rel, {})
        ids = self._ids
        ident = (ids.setdefault(a, a), ids.setdefault(b, b), tuple(v for _, v in key))
        props = table.get(ident)
        if props is None:
            props = table[ident] = {}
            for k, v in key:
                self.set_edge(rel, props, k, v)
        return props

    def set_edge(self, rel: str, props: Dict[str, Any], prop: str, value: Any) -> None:
        if not self.profile.typed:
            if value is None:
                props.pop(prop, None)
            else:
                props[prop] = value
            return
        columns = self.profile.rel_tables[rel][1]
        if prop not in columns:
            raise Binder(f"{rel}.{prop}")
        check_type(f"{rel}.{prop}", columns[prop], value)
        props[prop] = value


class Binder(Exception):
    """KùzuDB's binder exception: cgc's writer skips the statement (or the group)."""


def _unmatched(where: Dict[str, Any], looked_up: Tuple[str, ...]) -> Dict[str, Any]:
    """The pattern without the string properties a lookup matched by key."""
    return {p: v for p, v in where.items() if not (p in looked_up and isinstance(v, str))}


def equal(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return False
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    return a == b


_TYPE_CHECKS: Dict[str, Callable[[Any], bool]] = {
    "STRING": lambda v: isinstance(v, str),
    "INT64": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "BOOLEAN": lambda v: isinstance(v, bool),
    "DOUBLE": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "STRING[]": lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v),
}


def check_type(where: str, kind: Optional[str], value: Any) -> None:
    """Refuses a value cgc would have had KùzuDB cast (or reject): only values of the column's own type are modelled."""
    if value is None or kind is None:
        return
    ok = _TYPE_CHECKS.get(kind)
    if ok is None or not ok(value):
        raise NotReplicable(f"{where}: a {type(value).__name__} value for a {kind} column ({str(value)[:80]!r})")
