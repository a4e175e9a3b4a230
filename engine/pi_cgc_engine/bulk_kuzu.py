"""Loads the graph graph_rows.build_graph computed into cgc's embedded KùzuDB in bulk (COPY FROM CSV).

No import of codegraphcontext: the caller passes a kuzu Connection, or cgc's database manager (its
get_driver().session() is an EmbeddedSessionWrapper whose `.conn` is a kuzu Connection; the cgc contract owns that
reach). The database must hold cgc's schema (open it through cgc's get_database_manager().get_driver() first: that
creates the tables) and nothing else: graph_rows models an empty graph.

How: one CSV file per node table and per (relationship table, FROM label, TO label), written to a private temporary
folder (mkdtemp: mode 0700, named by the loading process's pid) that is removed afterwards, or by the next load
once that process is gone (a kill leaves it behind), then per file
    COPY <Table> FROM (LOAD WITH HEADERS (<col> <type>, …) FROM '<file>' (…) RETURN …) [(from='A', to='B')]
The kuzu package cgc 0.6.13 installs (0.11.3) has no pandas/pyarrow here, and its CSV reader has no list syntax
that survives commas or quotes, so a STRING[] column travels as one STRING, each element preceded by a unit
separator (U+001F), and is split back in the RETURN (string_split). Numbers and booleans use an empty field for
NULL; strings use a sentinel in NULL_STRINGS (so that an empty string stays an empty string). A list the
encoding cannot carry (an element holding U+001F, or several elements with an empty one) is set afterwards by
primary key (UNWIND … MATCH (n {pk}) SET), as is a string equal to the sentinel.

The schema the replay assumed (graph_rows.KUZU) is checked against the database's (TABLE_INFO, SHOW_CONNECTION)
before anything is written; a difference raises SchemaMismatch and nothing is written.
"""

from __future__ import annotations

import csv
import os
import shutil
import tempfile
import time
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

from .graph_model import GraphRows
from .graph_profiles import Profile
from .memory import release_free_memory
from .protocol import process_alive

SEP = "\x1f"
NULL_STRING = "PI_CGC_NULL_0f1e7a"
_OPTIONS = f"HEADER=true, PARALLEL=false, ESCAPE='\\\\', QUOTE='\"', NULL_STRINGS=['{NULL_STRING}']"
_TYPES = {"BOOL": "BOOLEAN"}


FOLDER_PREFIX = "pi-cgc-bulk-"


def remove_abandoned_folders(temp_parent: Optional[str] = None) -> List[str]:
    """Removes the CSV folders of loads whose process is gone (killed before its own cleanup ran)."""
    parent = temp_parent or tempfile.gettempdir()
    removed = []
    for name in os.listdir(parent):
        owner = name[len(FOLDER_PREFIX):].split("-", 1)[0]
        if not name.startswith(FOLDER_PREFIX) or not owner.isdigit() or process_alive(int(owner)):
            continue
        path = os.path.join(parent, name)
        if os.path.isdir(path) and os.stat(path).st_uid == os.getuid():
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


class SchemaMismatch(Exception):
    """The database's tables are not those the rows were computed for."""


class NotEmpty(Exception):
    """The database already holds nodes."""


def connection_of(target: Any) -> Any:
    """A kuzu Connection from a Connection or cgc's embedded database manager (EmbeddedGraphManager)."""
    if hasattr(target, "execute"):
        return target
    driver = target.get_driver()
    session = driver.session()
    conn = getattr(session, "conn", None)
    if conn is None or not hasattr(conn, "execute"):
        raise TypeError("not a kuzu Connection nor a manager whose sessions hold one")
    return _Borrowed(conn, session)


class _Borrowed:
    """A connection taken from cgc's pool, given back on close()."""

    def __init__(self, conn: Any, session: Any):
        self.conn, self.session = conn, session

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        return self.conn.execute(*args, **kwargs)

    def close(self) -> None:
        self.session.__exit__(None, None, None)


def _rows(result: Any) -> List[List[Any]]:
    out = []
    while result.has_next():
        out.append(result.get_next())
    return out


def table_columns(conn: Any, table: str) -> List[Tuple[str, str]]:
    """(name, type) of a table's properties, in its order (TABLE_INFO)."""
    return [(row[1], _TYPES.get(row[2], row[2])) for row in _rows(conn.execute(f"CALL TABLE_INFO('{table}') RETURN *"))]


def rel_pairs(conn: Any, table: str) -> set:
    return {(row[0], row[1]) for row in _rows(conn.execute(f"CALL SHOW_CONNECTION('{table}') RETURN *"))}


def check_schema(conn: Any, profile: Profile, labels: Iterable[str],
                 rels: Dict[str, set]) -> Dict[str, List[Tuple[str, str]]]:
    """Each table of `labels` and `rels` (relationship table: the (FROM, TO) pairs used), as the database has it;
    raises SchemaMismatch where it differs from the profile."""
    p = profile
    found: Dict[str, List[Tuple[str, str]]] = {}
    problems: List[str] = []
    for label in labels:
        try:
            cols = table_columns(conn, label)
        except Exception as error:
            problems.append(f"node table {label}: {error}")
            continue
        found[label] = cols
        expected = p.node_tables[label]
        have = dict(cols)
        for name, kind in expected.items():
            if have.get(name) != kind:
                problems.append(f"{label}.{name}: the database has {have.get(name)}, the rows assume {kind}")
    for rel, used in rels.items():
        try:
            cols = table_columns(conn, rel)
            pairs = rel_pairs(conn, rel)
        except Exception as error:
            problems.append(f"relationship table {rel}: {error}")
            continue
        found[rel] = cols
        have = dict(cols)
        for name, kind in p.rel_tables[rel][1].items():
            if have.get(name) != kind:
                problems.append(f"{rel}.{name}: the database has {have.get(name)}, the rows assume {kind}")
        if used - pairs:
            problems.append(f"{rel}: the database lacks the pairs {sorted(used - pairs)}")
        if pairs != p.rel_tables[rel][0]:
            problems.append(f"{rel}: the database's pairs differ from the profile's "
                            f"({sorted(pairs ^ p.rel_tables[rel][0])[:5]})")
    if problems:
        raise SchemaMismatch("; ".join(problems[:10]))
    return found


def check_target(target: Any, profile: Profile) -> None:
    """Whether a load can go ahead, before the rows are made: the database holds no node (else NotEmpty), and
    every table of the profile is as it assumes (else SchemaMismatch)."""
    conn = connection_of(target)
    try:
        _check_empty(conn)
        check_schema(conn, profile, profile.node_tables, {rel: set() for rel in profile.rel_tables})
    finally:
        if isinstance(conn, _Borrowed):
            conn.close()


def _check_empty(conn: Any) -> None:
    count = _rows(conn.execute("MATCH (n) RETURN count(n)"))[0][0]
    if count:
        raise NotEmpty(f"the database holds {count} nodes; the rows model an empty graph")


def _encode(kind: str, value: Any) -> Tuple[str, bool]:
    """The CSV field of a value, and whether it must be set afterwards instead."""
    if kind == "STRING[]":
        if value is None:
            return NULL_STRING, False
        if any(SEP in item for item in value) or (len(value) > 1 and any(item == "" for item in value)):
            return NULL_STRING, True
        return "".join(SEP + item for item in value), False
    if kind == "STRING":
        if value is None:
            return NULL_STRING, False
        if value == NULL_STRING:
            return NULL_STRING, True
        return value, False
    if value is None:
        return "", False
    if kind == "BOOLEAN":
        return "true" if value else "false", False
    if kind == "DOUBLE":
        return repr(float(value)), False
    return str(value), False


def _load_query(path: str, cols: List[Tuple[str, str]], table: str, pair: Optional[Tuple[str, str]]) -> str:
    header = ", ".join(f"`{name}` {'STRING' if kind == 'STRING[]' else kind}" for name, kind in cols)
    returns = []
    for name, kind in cols:
        if kind == "STRING[]":
            returns.append(f"CASE WHEN `{name}` IS NULL THEN NULL WHEN `{name}` = '' THEN CAST([] AS STRING[]) "
                           f"ELSE string_split(substring(`{name}`, 2, size(`{name}`)), '{SEP}') END")
        else:
            returns.append(f"`{name}`")
    query = (f"COPY `{table}` FROM (LOAD WITH HEADERS ({header}) FROM '{path}' ({_OPTIONS}) "
             f"RETURN {', '.join(returns)})")
    if pair is not None:
        query += f" (from='{pair[0]}', to='{pair[1]}')"
    return query


def write_csv(path: str, header: List[str], records: Iterable[List[str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_ALL, doublequote=False, escapechar="\\", lineterminator="\n")
        writer.writerow(header)
        writer.writerows(records)


def _node_records(nodes: Dict[Any, Dict[str, Any]], cols: List[Tuple[str, str]], label: str, pk: str,
                  fixups: List[Tuple[str, str, str, str, Any, Any]]) -> Iterator[List[str]]:
    """A node table's CSV records; the values the encoding cannot carry go to `fixups`, set after the copy."""
    for key, props in nodes.items():
        record = []
        for name, kind in cols:
            field, later = _encode(kind, props.get(name))
            if later:
                fixups.append(("node", label, pk, name, key, props.get(name)))
            record.append(field)
        yield record


def _edge_records(edges: Dict[Any, Dict[str, Any]], pair: Tuple[str, str], cols: List[Tuple[str, str]],
                  rel: str) -> Iterator[List[str]]:
    """The CSV records of a relationship table's edges from pair[0] to pair[1]."""
    for (a, b, _key), props in edges.items():
        if (a[0], b[0]) != pair:
            continue
        record = [str(a[1]), str(b[1])]
        for name, kind in cols:
            field, later = _encode(kind, props.get(name))
            if later:
                raise SchemaMismatch(f"{rel}.{name}: a value the CSV encoding cannot carry ({props.get(name)!r})")
            record.append(field)
        yield record


def load(target: Any, rows: GraphRows, *, temp_parent: Optional[str] = None, require_empty: bool = True,
         in_transaction: bool = False) -> Dict[str, Any]:
    """Writes every node and edge of `rows` into the database, and empties `rows` as it goes (each table once
    written to its file). Returns counts and timings (ms). `in_transaction`: the caller's transaction is open on
    `target` and is the caller's to end (update_bulk); else the load is one transaction of its own."""
    start = time.monotonic()
    conn = connection_of(target)
    try:
        if require_empty:
            _check_empty(conn)
        tables = check_schema(conn, rows.profile, rows.nodes,
                              {rel: {(a[0], b[0]) for a, b, _ in table} for rel, table in rows.edges.items()})
        p = rows.profile
        remove_abandoned_folders(temp_parent)
        folder = tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-", dir=temp_parent)
        os.chmod(folder, 0o700)
        stats: Dict[str, Any] = {"nodes": 0, "edges": 0, "copies": 0, "fixups": 0}
        fixups: List[Tuple[str, str, str, str, Any, Any]] = []  # (kind, table, pk name, column, key, value)
        copies: List[str] = []  # the COPY statements, one per file, in order: node tables first
        committed = False
        try:
            # Every file is written before the first COPY, each from a generator of its records, and each table
            # goes once written: the rows are in memory once (not a second time as lists of strings), and none of
            # them while KùzuDB copies (at 5 000 files, half a million nodes and over a million edges).
            for label in list(rows.nodes):
                nodes = rows.nodes.pop(label)
                if not nodes:
                    continue
                cols = tables[label]
                pk = p.primary_keys.get(label, "uid")

                path = os.path.join(folder, f"{len(copies) + 1:03d}-{label}.csv")
                write_csv(path, [c for c, _ in cols], _node_records(nodes, cols, label, pk, fixups))
                copies.append(_load_query(path, cols, label, None))
                stats["nodes"] += len(nodes)
                del nodes
            for rel in list(rows.edges):
                edges = rows.edges.pop(rel)
                cols = tables[rel]
                pairs: Dict[Tuple[str, str], int] = {}
                for a, b, _key in edges:
                    pairs[(a[0], b[0])] = pairs.get((a[0], b[0]), 0) + 1

                for pair, count in pairs.items():
                    path = os.path.join(folder, f"{len(copies) + 1:03d}-{rel}-{pair[0]}-{pair[1]}.csv")
                    header = [("from", "STRING"), ("to", "STRING")] + cols
                    write_csv(path, [c for c, _ in header], _edge_records(edges, pair, cols, rel))
                    copies.append(_load_query(path, header, rel, pair))
                    stats["edges"] += count
                del edges
            release_free_memory()  # what the rows held, before the database's memory grows
            # One transaction: an index cut short (killed, a full disk, the database failing) leaves nothing of itself.
            if not in_transaction:
                conn.execute("BEGIN TRANSACTION")
            for query in copies:
                conn.execute(query)
                stats["copies"] += 1
            for _kind, label, pk, column, key, value in fixups:
                conn.execute(f"MATCH (n:`{label}`) WHERE n.`{pk}` = $key SET n.`{column}` = $value", {"key": key, "value": value})
                stats["fixups"] += 1
            if not in_transaction:
                conn.execute("COMMIT")
            committed = True
        finally:
            if not committed and not in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except Exception:  # a transaction the failure already ended
                    pass
            shutil.rmtree(folder, ignore_errors=True)
        stats["ms"] = round((time.monotonic() - start) * 1000)
        return stats
    finally:
        if isinstance(conn, _Borrowed):
            conn.close()
