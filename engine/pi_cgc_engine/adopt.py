"""Adopting a graph written elsewhere: the graph's rows compared with what a full index of the engine's state
writes, and only the files that differ written again.

An engine without a trusted cache does not know what the graph holds: `cgc index` or a `cgc watch` wrote it, or
pi-cgc before the cache was lost. It reads the tree (Engine.start), replays the full index of it in memory
(graph_rows.build_graph, the rows pi-cgc's own index loads), and reads the graph's nodes and edges back. Each
node and edge becomes a line (on FalkorDB and Neo4j as the canonical dump renders it, dump.py; on KùzuDB its
table's columns, below) put with the file it belongs to. The files whose lines differ are written again as an
update writes a changed file; the files whose links alone differ get their links written again. A graph equal to
the replay gets nothing written.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from . import cgc_contract as cgc
from .database import Database
from .dump import IDENTITY, VOLATILE, properties_of
from .graph_model import GraphRows
from .link_rows import LINK_TYPES

# Nodes that stand for the tree's structure rather than a file's content.
STRUCTURE_LABELS = frozenset({"Repository", "Directory"})
# Nodes without a path: shared by every file that links to them.
SHARED_LABELS = ("Module", "ExternalClass")
STRUCTURE = ""

Lines = Dict[Any, Set[Any]]


def render(props: Dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in props.items() if k not in VOLATILE and v is not None},
                      sort_keys=True, default=str, ensure_ascii=False)


def ident(label: str, props: Dict[str, Any]) -> str:
    return f"{label}{render({k: props[k] for k in IDENTITY if k in props})}"


@dataclass
class Placement:
    """Which key a node's or an edge's line belongs to: its file's path, a shared node's (label, name), or the
    structure."""

    root: str

    def in_repo(self, props: Dict[str, Any]) -> bool:
        path = props.get("path")
        return isinstance(path, str) and (path == self.root or path.startswith(self.root + "/"))

    def node(self, label: str, props: Dict[str, Any]) -> Any:
        if label in STRUCTURE_LABELS:
            return STRUCTURE
        if self.in_repo(props):
            return props["path"]
        return (label, props.get("name"))

    def edge(self, a_label: str, a: Dict[str, Any], b_label: str, b: Dict[str, Any]) -> Any:
        for label, props in ((a_label, a), (b_label, b)):
            if label not in STRUCTURE_LABELS and self.in_repo(props):
                return props["path"]
        return STRUCTURE


def expected_lines(rows: GraphRows, root: str) -> Tuple[Lines, Lines]:
    """(nodes, edges): the lines a full index writes, by key (Placement)."""
    place = Placement(root)
    nodes: Lines = {}
    edges: Lines = {}
    linked_shared: Set[Tuple[str, Any]] = set()
    for rel, table in rows.edges.items():
        for (a_id, b_id, _), props in table.items():
            a, b = rows.nodes[a_id[0]][a_id[1]], rows.nodes[b_id[0]][b_id[1]]
            line = f"E {rel} {ident(a_id[0], a)} -> {ident(b_id[0], b)} {render(props)}"
            edges.setdefault(place.edge(a_id[0], a, b_id[0], b), set()).add(line)
            for node_id, node in ((a_id, a), (b_id, b)):
                if "path" not in node or node.get("path") is None:
                    linked_shared.add(node_id)
    for label, table in rows.nodes.items():
        for key, props in table.items():
            if props.get("path") is None and (label, key) not in linked_shared:
                continue  # as the dump: a pathless node counts where an edge of the repository reaches it
            nodes.setdefault(place.node(label, props), set()).add(f"N {label} {render(props)}")
    return nodes, edges


def graph_lines(db: Database, root: str) -> Tuple[Lines, Lines]:
    """(nodes, edges): the lines the graph holds for the repository at `root`, by key (Placement)."""
    place = Placement(root)
    prefix = root.rstrip("/") + "/"
    nodes: Lines = {}
    edges: Lines = {}
    shared: Dict[Tuple[str, Any], str] = {}
    if db.embedded:
        label_of, type_of = "label", "label"
        labels = [row["name"] for row in db.read("CALL show_tables() RETURN name, type") if row["type"] == "NODE"]
    else:
        label_of, type_of = "labels", "type"
        labels = [row["label"] for row in db.read("CALL db.labels()")]
    for label in labels:
        if label in SHARED_LABELS:
            continue
        try:
            records = db.read(f"MATCH (n:`{label}`) WHERE n.path = $root OR n.path STARTS WITH $prefix RETURN n",
                              root=root, prefix=prefix)
        except Exception as error:  # a KùzuDB table without a path column holds nothing of a repository
            if not cgc.is_binder_exception(error):
                raise
            continue
        for record in records:
            found, props = properties_of(record["n"])
            nodes.setdefault(place.node(found, props), set()).add(f"N {found} {render(props)}")
    for label in SHARED_LABELS:
        if label in labels:
            for record in db.read(f"MATCH (n:`{label}`) RETURN n"):
                found, props = properties_of(record["n"])
                if props.get("path") is None:
                    shared[(found, props.get("name"))] = f"N {found} {render(props)}"
    ends = ", ".join(f"{side}.{key} AS {side}_{key}" for side in "ab" for key in IDENTITY)
    label_expr = (lambda side: f"label({side})") if label_of == "label" else (lambda side: f"labels({side})[0]")
    query = (f"MATCH (a)-[e]->(b) WHERE a.path = $root OR a.path STARTS WITH $prefix OR b.path STARTS WITH $prefix "
             f"RETURN {label_expr('a')} AS a_label, {label_expr('b')} AS b_label, {type_of}(e) AS rel, e, {ends}")
    for record in db.read(query, root=root, prefix=prefix):
        a = {key: record[f"a_{key}"] for key in IDENTITY if record[f"a_{key}"] is not None}
        b = {key: record[f"b_{key}"] for key in IDENTITY if record[f"b_{key}"] is not None}
        _, props = properties_of(record["e"])
        line = f"E {record['rel']} {ident(record['a_label'], a)} -> {ident(record['b_label'], b)} {render(props)}"
        edges.setdefault(place.edge(record["a_label"], a, record["b_label"], b), set()).add(line)
        for label, end in ((record["a_label"], a), (record["b_label"], b)):
            if "path" not in end:
                node_line = shared.get((label, end.get("name")))
                if node_line is not None:
                    nodes.setdefault((label, end.get("name")), set()).add(node_line)
    return nodes, edges


# ---------------------------------------------------------------------------------------------------------------
# On KùzuDB: the same comparison over each table's columns, read through a connection of cgc's pool. Through cgc's
# session wrapper, and rendered as the dump renders, the read took over a minute at 1 000 files; projected, with the
# long texts hashed by KùzuDB itself (md5), a few seconds.

HASHED = frozenset({"source", "docstring", "value"})
KuzuLine = Tuple[Any, ...]


def _frozen(value: Any) -> Any:
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


def _md5(value: Any) -> Any:
    return None if value is None else hashlib.md5(str(value).encode("utf-8")).hexdigest()


def kuzu_columns(connection: Any) -> Tuple[Dict[str, List[str]], Dict[str, List[str]], Dict[str, str]]:
    """(node tables, rel tables, each node table's key): each table's columns, as the database has them (the key
    first; on KùzuDB a positional label's key is its uid, made of its name, path, line and occurrence)."""
    nodes: Dict[str, List[str]] = {}
    rels: Dict[str, List[str]] = {}
    keys: Dict[str, str] = {}
    tables = connection.execute("CALL show_tables() RETURN name, type")
    while tables.has_next():
        name, kind = tables.get_next()
        if kind not in ("NODE", "REL"):
            continue
        info = connection.execute(f"CALL table_info('{name}') RETURN *")
        columns: List[str] = []
        while info.has_next():
            row = info.get_next()
            if kind == "NODE" and row[4] is True:
                keys[name] = row[1]
            elif row[1] not in VOLATILE:
                columns.append(row[1])
        if kind == "NODE":
            nodes[name] = [keys[name], *columns]
        else:
            rels[name] = columns
    return nodes, rels, keys


def _rows(connection: Any, query: str, **params: Any) -> Iterable[List[Any]]:
    result = connection.execute(query, params) if params else connection.execute(query)
    while result.has_next():
        yield result.get_next()


def kuzu_expected_lines(rows: GraphRows, root: str, node_columns: Dict[str, List[str]],
                        rel_columns: Dict[str, List[str]]) -> Tuple[Lines, Lines]:
    place = Placement(root)
    nodes: Lines = {}
    edges: Lines = {}
    linked: Set[Tuple[str, Any]] = set()
    for rel, table in rows.edges.items():
        columns = rel_columns.get(rel, [])
        for (a_id, b_id, _), props in table.items():
            a, b = rows.nodes[a_id[0]][a_id[1]], rows.nodes[b_id[0]][b_id[1]]
            line = ("E", rel, a_id, b_id, tuple(_frozen(props.get(c)) for c in columns))
            edges.setdefault(place.edge(a_id[0], a, b_id[0], b), set()).add(line)
            for node_id, node in ((a_id, a), (b_id, b)):
                if node.get("path") is None:
                    linked.add(node_id)
    for label, table in rows.nodes.items():
        columns = node_columns.get(label, [])
        for key, props in table.items():
            if props.get("path") is None and (label, key) not in linked:
                continue
            values = tuple(_md5(props.get(c)) if c in HASHED else _frozen(props.get(c)) for c in columns)
            nodes.setdefault(place.node(label, props), set()).add(("N", label, key, values))
    return nodes, edges


def kuzu_graph_lines(connection: Any, root: str, node_columns: Dict[str, List[str]],
                     rel_columns: Dict[str, List[str]], keys: Dict[str, str]) -> Tuple[Lines, Lines]:
    place = Placement(root)
    prefix = root.rstrip("/") + "/"
    nodes: Lines = {}
    edges: Lines = {}
    pathless: Dict[Tuple[str, Any], KuzuLine] = {}
    for label, columns in node_columns.items():
        if "path" not in columns:
            continue
        key_at, path_at = 0, columns.index("path")
        shown = ", ".join(f"{f'md5(n.{c})' if c in HASHED else f'n.{c}'} AS c{at}" for at, c in enumerate(columns))
        for row in _rows(connection, f"MATCH (n:`{label}`) RETURN {shown}"):
            key, path, values = row[key_at], row[path_at], tuple(_frozen(v) for v in row)
            props = {"path": path, "name": None}
            if isinstance(path, str) and (path == root or path.startswith(prefix)):
                nodes.setdefault(place.node(label, props), set()).add(("N", label, key, values))
            elif path is None:
                pathless[(label, key)] = ("N", label, key, values)
    ends = "label(a), a.uid, a.path, a.name, label(b), b.uid, b.path, b.name"
    for rel, columns in rel_columns.items():
        shown = "".join(f", e.{c} AS c{at}" for at, c in enumerate(columns))
        query = (f"MATCH (a)-[e:`{rel}`]->(b) WHERE a.path = $root OR a.path STARTS WITH $prefix "
                 f"OR b.path STARTS WITH $prefix RETURN {ends}{shown}")
        for row in _rows(connection, query, root=root, prefix=prefix):
            a_label, a_uid, a_path, a_name, b_label, b_uid, b_path, b_name = row[:8]
            a_id = (a_label, {"uid": a_uid, "path": a_path, "name": a_name}.get(keys.get(a_label, "uid")))
            b_id = (b_label, {"uid": b_uid, "path": b_path, "name": b_name}.get(keys.get(b_label, "uid")))
            line = ("E", rel, a_id, b_id, tuple(_frozen(v) for v in row[8:]))
            edges.setdefault(place.edge(a_label, {"path": a_path}, b_label, {"path": b_path}), set()).add(line)
            for node_id, path in ((a_id, a_path), (b_id, b_path)):
                if path is None and node_id in pathless:
                    nodes.setdefault(node_id, set()).add(pathless[node_id])
    return nodes, edges


@dataclass
class Differences:
    """What the graph holds otherwise than a full index of the engine's state would."""

    # Files whose nodes (or edges other than links) differ: written again whole.
    files: Set[str] = field(default_factory=set)
    # Files whose links alone differ: their outgoing links written again.
    links: Set[str] = field(default_factory=set)
    # Files the graph holds that the tree does not have.
    stale: Set[str] = field(default_factory=set)
    # Modules whose node differs (its metadata), and other shared nodes that differ.
    modules: Set[str] = field(default_factory=set)
    shared: Set[Tuple[str, Any]] = field(default_factory=set)
    structure: bool = False
    # A few of the differing lines, for the log.
    examples: List[str] = field(default_factory=list)

    @property
    def none(self) -> bool:
        return not (self.files or self.links or self.stale or self.modules or self.shared or self.structure)

    def as_json(self) -> Dict[str, Any]:
        return {"files": len(self.files), "links": len(self.links), "stale": len(self.stale),
                "modules": len(self.modules), "shared": len(self.shared), "structure": self.structure}


def link_line(line: Any) -> bool:
    return (line[1] if isinstance(line, tuple) else line.split(" ", 2)[1]) in LINK_TYPES


def compare(expected: Tuple[Lines, Lines], found: Tuple[Lines, Lines], tree_files: Iterable[str]) -> Differences:
    known = set(tree_files)
    out = Differences()
    (want_nodes, want_edges), (have_nodes, have_edges) = expected, found

    def note(want: Set[str], have: Set[str]) -> None:
        if len(out.examples) < 10:
            out.examples.extend(f"-{str(line)[:300]}" for line in sorted(want - have, key=str)[:2])
            out.examples.extend(f"+{str(line)[:300]}" for line in sorted(have - want, key=str)[:2])

    for key in set(want_nodes) | set(have_nodes):
        want, have = want_nodes.get(key, set()), have_nodes.get(key, set())
        if want == have:
            continue
        note(want, have)
        if key == STRUCTURE:
            out.structure = True
        elif isinstance(key, tuple):
            (out.modules.add(key[1]) if key[0] == "Module" else out.shared.add(key))
        elif key in known:
            out.files.add(key)
        else:
            out.stale.add(key)
    for key in set(want_edges) | set(have_edges):
        want, have = want_edges.get(key, set()), have_edges.get(key, set())
        if want == have:
            continue
        note(want, have)
        if key == STRUCTURE or isinstance(key, tuple):
            out.structure = True
        elif key not in known:
            out.stale.add(key)
        elif all(link_line(line) for line in want ^ have):
            out.links.add(key)
        else:
            out.files.add(key)
    out.links -= out.files
    return out


def differences(rows: GraphRows, db: Database, root: Path, tree_files: Iterable[str],
                found: Optional[Tuple[Lines, Lines]] = None) -> Differences:
    root_str = root.as_posix()
    if db.embedded and found is None:
        with cgc.kuzu_connection(db.manager) as connection:
            node_columns, rel_columns, keys = kuzu_columns(connection)
            found = kuzu_graph_lines(connection, root_str, node_columns, rel_columns, keys)
        return compare(kuzu_expected_lines(rows, root_str, node_columns, rel_columns), found, tree_files)
    return compare(expected_lines(rows, root_str), found or graph_lines(db, root_str), tree_files)
