"""Loads the graph graph_rows.build_graph computed into FalkorDB (Lite or a server) or Neo4j in bulk, by Cypher.

No import of codegraphcontext: the caller passes cgc's driver (`manager.get_driver()`: on FalkorDB cgc's
FalkorDBDriverWrapper, whose sessions' run(query, **params) returns a result with .data(); on Neo4j the neo4j
package's Driver, whose sessions have execute_write). The graph must be empty (graph_rows models an empty graph):
`load` checks that first and raises NotEmpty.

cgc's indexes and constraints are the caller's to create before (cgc's own create_graph_schema, through the cgc
contract, so that the database holds what cgc's index leaves); the loader's own index and key property are gone
when it returns. It does not look nodes up by cgc's properties: FalkorDB Lite's range index cannot find the
number 0 (database.zero_safe).

How: the loader's own index on a key property of its own (KEY) for each label, then
  nodes, per label, in batches:  UNWIND $rows AS row CREATE (n:`Label`) SET n = row.p, n.KEY = row.k
      (k a string: FalkorDB Lite's range index finds no 0, and id(n) = row.x is a scan of every node on FalkorDB);
  edges, per (type, from label, to label), in batches:
      UNWIND $rows AS row MATCH (a:`A` {KEY: row.a}) MATCH (b:`B` {KEY: row.b}) CREATE (a)-[r:`TYPE`]->(b) SET r = row.p
  then KEY removed from every node, KEY_BATCH nodes a statement, and the loader's indexes dropped (also when the
  load failed).
No MERGE: every node and edge of GraphRows is distinct by construction. A batch holds at most BATCH_ROWS rows and
about BATCH_CHARS characters of property text (FalkorDB's client sends parameters as Cypher text). On Neo4j each
batch is one managed write transaction (execute_write: retried on a transient error, which CREATE makes safe only
because a failed transaction leaves nothing); on FalkorDB each statement is atomic. An interrupted load leaves a
partial graph, as cgc's own index does.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from .graph_model import GraphRows

BATCH_ROWS = 2000
BATCH_CHARS = 2_000_000
KEY_BATCH = 20_000  # nodes whose loader key one statement removes


class NotEmpty(Exception):
    """The graph already holds nodes."""


class Writer:
    """Statements through cgc's driver: Neo4j's managed transactions, or FalkorDB's session wrapper."""

    def __init__(self, driver: Any):
        self.session = driver.session()
        self.neo4j = hasattr(self.session, "execute_write")
        self.statements = 0

    def run(self, query: str, **params: Any) -> List[Dict[str, Any]]:
        self.statements += 1
        if self.neo4j:
            return self.session.execute_write(lambda tx: [record.data() for record in tx.run(query, **params)])
        return [dict(record) for record in self.session.run(query, **params).data()]

    def read(self, query: str) -> List[Dict[str, Any]]:
        if self.neo4j:
            return self.session.execute_read(lambda tx: [record.data() for record in tx.run(query)])
        return [dict(record) for record in self.session.run(query).data()]

    def close(self) -> None:
        close = getattr(self.session, "close", None)
        if callable(close):
            close()


def _size(value: Any) -> int:
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, (list, tuple)):
        return 2 + sum(_size(v) + 1 for v in value)
    if isinstance(value, dict):
        return 2 + sum(len(k) + 2 + _size(v) for k, v in value.items())
    return 8


def _batches(rows: Iterable[Dict[str, Any]], measure: Callable[[Dict[str, Any]], int]) -> Iterator[List[Dict[str, Any]]]:
    batch: List[Dict[str, Any]] = []
    chars = 0
    for row in rows:
        size = measure(row)
        if batch and (len(batch) >= BATCH_ROWS or chars + size > BATCH_CHARS):
            yield batch
            batch, chars = [], 0
        batch.append(row)
        chars += size
    if batch:
        yield batch


def _clean(props: Dict[str, Any]) -> Dict[str, Any]:
    """The properties a node or edge keeps (a NULL is no property), lists as lists."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in props.items() if v is not None}


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


KEY = "_pi_cgc_bulk_key"


def _index_statements(label: str, neo4j: bool) -> Tuple[str, str]:
    """The statements that create and drop the loader's own index on KEY for a label."""
    if neo4j:
        name = _quote(f"pi_cgc_bulk_{label}")
        return (f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{_quote(label)}) ON (n.{KEY})",
                f"DROP INDEX {name} IF EXISTS")
    return (f"CREATE INDEX FOR (n:{_quote(label)}) ON (n.{KEY})", f"DROP INDEX FOR (n:{_quote(label)}) ON (n.{KEY})")


def check_target(driver: Any) -> None:
    """Whether a load can go ahead, before the rows are made: the graph holds no node (else NotEmpty)."""
    writer = Writer(driver)
    try:
        _check_empty(writer)
    finally:
        writer.close()


def _check_empty(writer: Writer) -> None:
    found = writer.read("MATCH (n) RETURN count(n) AS c")
    count = found[0]["c"] if found else 0
    if count:
        raise NotEmpty(f"the graph holds {count} nodes; the rows model an empty graph")


def load(driver: Any, rows: GraphRows, *, require_empty: bool = True,
         progress: Optional[Callable[[str], None]] = None) -> Dict[str, Any]:
    """Writes every node and edge of `rows` through cgc's driver, and empties `rows` as it goes (each table once
    written). Returns counts and timings (ms)."""
    start = time.monotonic()
    writer = Writer(driver)
    stats: Dict[str, Any] = {"nodes": 0, "edges": 0, "statements": 0}
    labels = [label for label, nodes in rows.nodes.items() if nodes]
    indexed: List[str] = []
    try:
        if require_empty:
            _check_empty(writer)
        for label in labels:
            writer.run(_index_statements(label, writer.neo4j)[0])
            indexed.append(label)
        if writer.neo4j:
            writer.read("CALL db.awaitIndexes(300)")
        # Each table's payload is made batch by batch, and the table goes once written: the rows are in memory
        # once, and less of them as the load goes on.
        keys: Dict[Tuple[str, Any], str] = {}

        def node_payload(label: str, nodes: Dict[Any, Dict[str, Any]]) -> Iterator[Dict[str, Any]]:
            for key, props in nodes.items():
                keys[(label, key)] = f"k{len(keys)}"
                yield {"k": keys[(label, key)], "p": _clean(props)}

        for label in labels:
            query = f"UNWIND $rows AS row CREATE (n:{_quote(label)}) SET n = row.p, n.{KEY} = row.k"
            for batch in _batches(node_payload(label, rows.nodes.pop(label)), lambda row: 12 + _size(row["p"])):
                writer.run(query, rows=batch)
                stats["nodes"] += len(batch)
        stats["nodes_ms"] = round((time.monotonic() - start) * 1000)
        if progress:
            progress(f"{stats['nodes']} nodes written")
        for rel in list(rows.edges):
            by_pair: Dict[Tuple[str, str], List[Dict[str, Any]]] = {}
            for (a, b, _key), props in rows.edges.pop(rel).items():
                by_pair.setdefault((a[0], b[0]), []).append({"a": keys[a], "b": keys[b], "p": _clean(props)})
            for (la, lb), payload in by_pair.items():
                query = (f"UNWIND $rows AS row MATCH (a:{_quote(la)} {{{KEY}: row.a}}) "
                         f"MATCH (b:{_quote(lb)} {{{KEY}: row.b}}) "
                         f"CREATE (a)-[r:{_quote(rel)}]->(b) SET r = row.p RETURN count(r) AS c")
                for batch in _batches(payload, lambda row: 40 + _size(row["p"])):
                    made = writer.run(query, rows=batch)
                    if not made or made[0]["c"] != len(batch):
                        raise RuntimeError(f"{rel}: {made[0]['c'] if made else 0} of {len(batch)} edges were written")
                    stats["edges"] += len(batch)
    finally:
        # The loader's own index and key go again: the database keeps what cgc's index leaves.
        try:
            for label in labels:
                # In batches: on Neo4j one transaction over every node ran past the server's transaction memory
                # (dbms.memory.transaction.total.max) at 5 000 files.
                query = (f"MATCH (n:{_quote(label)}) WHERE n.{KEY} IS NOT NULL WITH n LIMIT {KEY_BATCH} "
                         f"REMOVE n.{KEY} RETURN count(n) AS c")
                while (writer.run(query) or [{"c": 0}])[0]["c"]:
                    pass
            for label in indexed:
                writer.run(_index_statements(label, writer.neo4j)[1])
        finally:
            stats["statements"] = writer.statements
            writer.close()
    stats["ms"] = round((time.monotonic() - start) * 1000)
    return stats
