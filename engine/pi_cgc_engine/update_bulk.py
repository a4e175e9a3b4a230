"""Many files written at once on KùzuDB: their rows taken from the replay of a full index of the state after the
change (graph_rows.build_graph), and loaded in bulk (bulk_kuzu), inside the update's transaction.

cgc's writer sends a changed file's nodes and edges one statement each on KùzuDB: a checkout of a tenth of a
1 000-file tree took over 500 s, against 73 s for pi-cgc's full index of all of it. The replay's rows are what a
full index writes, so after the update's deletes the rows that touch the written files are the ones missing:

  - every node of a written file (`whole`): the graph's nodes with that path are deleted first, with the deleted
    files' (`gone`) and the folders left empty, as cgc's delete of a file does;
  - every edge with an end among those nodes (the file's own, and the links other files have into it, which
    the deletes took out);
  - the outgoing links of the files whose links are written again (`links`; the update deleted them);
  - the shared and structure nodes those edges reach (modules, external classes, folders) where the graph lacks
    them, and the folders' own edges into a new folder.
"""

from __future__ import annotations

import time
from typing import Any, Dict, List, Set, Tuple

from . import bulk_kuzu
from .context import RUN
from .graph_model import GraphRows, NodeId
from .link_rows import LINK_TYPES
from .tree_state import TreeState

# cgc's writer sends each node and edge of a written file as a statement of its own on KùzuDB; the replay of a full
# index (graph_rows) makes every row of the tree in memory, and the update then loads the written files' rows in
# bulk (below). An update goes in bulk where the items it writes reach the tree's divided by BULK_RATIO.
# Measured on 800 files of the standard library: the writer took about 7 ms a row written, the replay about 10 us a
# row of the whole tree, so the two meet near a six-hundredth of the tree. A fiftieth keeps an ordinary edit with
# cgc's writer, where the replay's pass over every file and a COPY per table would outweigh the rows it saves.
BULK_RATIO = 50
# The items of a file the writer makes a statement or more of.
WRITTEN_ITEMS = ("functions", "classes", "variables", "imports", "function_calls")


def items_of(data: Dict[str, Any]) -> int:
    return sum(len(data.get(key) or ()) for key in WRITTEN_ITEMS)


def bulk_pays(state: TreeState, whole: Set[str], links: Set[str]) -> bool:
    """Whether writing `whole` files and the links of `links` in bulk is the faster way (BULK_RATIO; serve --bulk)."""
    if RUN.options.bulk != "auto":
        return RUN.options.bulk == "always"
    files = state.files
    written = sum(items_of(files[p].data) for p in whole if p in files)
    written += sum(len(files[p].data.get("function_calls") or ()) for p in links - whole if p in files)
    return written * BULK_RATIO >= sum(items_of(entry.data) for entry in files.values())


# Nodes of the tree's structure, and nodes shared by name: written where the graph lacks them, never deleted here.
STRUCTURE_LABELS = frozenset({"Repository", "Directory"})
SHARED_LABELS = frozenset({"Module", "ExternalClass"})
COMMON_LABELS = STRUCTURE_LABELS | SHARED_LABELS


def own_path(rows: GraphRows, nid: NodeId) -> Any:
    """The file a node belongs to (None for a structure or shared node, or a node without a path)."""
    return None if nid[0] in COMMON_LABELS else rows.nodes[nid[0]][nid[1]].get("path")


def select(rows: GraphRows, whole: Set[str], links: Set[str]) -> Tuple[GraphRows, Set[NodeId]]:
    """(the rows to load, the nodes among them that belong to no file, to be left out where the graph has them).
    The selection shares the replay's property dicts; the load empties the selection, not the replay."""
    chosen = GraphRows(rows.profile)
    common: Set[NodeId] = set()
    for label, table in rows.nodes.items():
        if label in COMMON_LABELS:
            continue
        picked = {key: props for key, props in table.items() if props.get("path") in whole}
        if picked:
            chosen.nodes[label] = picked
    for rel, table in rows.edges.items():
        is_link = rel in LINK_TYPES
        picked_edges = {}
        for edge, props in table.items():
            a, b = edge[0], edge[1]
            a_path = own_path(rows, a)
            if a_path in whole or own_path(rows, b) in whole or (is_link and a_path in links):
                picked_edges[edge] = props
            elif a[0] in STRUCTURE_LABELS and b[0] in STRUCTURE_LABELS:
                picked_edges[edge] = props  # a folder's edge into a folder: kept where the folder is new (write)
            else:
                continue
            for end in (a, b):
                if own_path(rows, end) is None:  # (also a node of no file, as an external function)
                    common.add(end)
        if picked_edges:
            chosen.edges[rel] = picked_edges
    for label, table in rows.nodes.items():
        if label == "Directory":
            common.update((label, key) for key in table)
    for label, key in common:
        chosen.nodes.setdefault(label, {})[key] = rows.nodes[label][key]
    return chosen, common


def _column(conn: Any, query: str, **params: Any) -> List[Any]:
    result = conn.execute(query, params)
    found = []
    while result.has_next():
        found.append(result.get_next()[0])
    return found


def path_tables(conn: Any) -> List[str]:
    """The node tables of file-owned nodes (those with a path column)."""
    tables = [row for row in _column(conn, "CALL show_tables() WHERE type = 'NODE' RETURN name")]
    return [t for t in tables if t not in COMMON_LABELS
            and any(name == "path" for name, _ in bulk_kuzu.table_columns(conn, t))]


def delete_files(conn: Any, paths: List[str], root: str) -> None:
    """Every node of the files at `paths` with its edges, then the folders left empty: what cgc's
    delete_file_from_graph does per file (4 statements a file, one a walk up the folders: 5.5 s for 100 files at
    1 000), in a statement per table."""
    if not paths:
        return
    for table in path_tables(conn):
        conn.execute(f"MATCH (n:`{table}`) WHERE n.path IN $paths DETACH DELETE n", {"paths": paths})
    prefix = root.rstrip("/") + "/"
    # (a folder emptied holds no file; its parent may then be empty in turn)
    while _column(conn, "MATCH (d:Directory) WHERE d.path STARTS WITH $prefix AND NOT (d)-[:CONTAINS]->() "
                        "DETACH DELETE d RETURN count(*)", prefix=prefix)[0]:
        pass


def write(conn: Any, rows: GraphRows, whole: Set[str], links: Set[str], gone: Set[str], root: str) -> Dict[str, int]:
    """Deletes the files `gone` and `whole`, then loads what the written files and the rewritten links need (see
    the module's docstring) through `conn`, a connection inside the update's open transaction. Returns ms per phase
    and counts."""
    started = time.monotonic()
    delete_files(conn, sorted(whole | gone), root)
    swept = time.monotonic()
    chosen, common = select(rows, whole, links)
    present: Set[NodeId] = set()
    by_label: Dict[str, List[Any]] = {}
    for label, key in common:
        by_label.setdefault(label, []).append(key)
    for label, keys in by_label.items():
        pk = rows.profile.primary_keys.get(label, "uid")
        present.update((label, key) for key in _column(
            conn, f"MATCH (n:`{label}`) WHERE n.`{pk}` IN $keys RETURN n.`{pk}`", keys=keys))
    for label, key in present:
        del chosen.nodes[label][key]
    for edges in chosen.edges.values():
        # A folder's edge into a folder the graph has: the graph has the edge too.
        for edge in [e for e in edges if e[0][0] in STRUCTURE_LABELS and e[1][0] in STRUCTURE_LABELS and e[1] in present]:
            del edges[edge]
    chosen.nodes = {label: table for label, table in chosen.nodes.items() if table}
    chosen.edges = {rel: table for rel, table in chosen.edges.items() if table}
    selected = time.monotonic()
    stats = bulk_kuzu.load(conn, chosen, require_empty=False, in_transaction=True)
    return {"deleteMs": round((swept - started) * 1000), "selectMs": round((selected - swept) * 1000),
            "loadMs": stats["ms"], "bulkNodes": stats["nodes"], "bulkEdges": stats["edges"]}
