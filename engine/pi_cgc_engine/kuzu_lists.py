"""A guard against a fault of KùzuDB 0.11.3's checkpoint: list values of a relationship table moved between rows.

Seen on cgc's graph: a transaction deleted about half of the HEURISTIC_CALLS edges of one (FROM, TO) pair (the
outgoing links of the files an update resolved again); it read back right until the next checkpoint, and from then
on 56 of the 226 edges left held another edge's `args` (their other properties right). Kùzu runs that checkpoint
itself, at the latest when the database closes, so the graph came back wrong at the next open. Kùzu's project is
archived and cgc pins 0.11.3, so the engine guards instead: after a write, before the database closes
(Database.close), it checkpoints and checks each call edge's `args`, in both of Kùzu's copies of the edge, against
its `args_key`, which cgc's writer (and graph_replay) sets to the JSON text of the same list. An edge that differs
is written again with the list from `args_key`. No other list column holds such a copy.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Tuple

CALL_TABLES = ("CALLS", "HEURISTIC_CALLS")

# Cypher: the JSON text json.dumps gives for a list of plain strings. Rows it names may still be right (an element
# that JSON escapes); rows it passes over are. It keeps the check inside Kùzu for nearly every row.
_PLAIN_JSON = ("CASE WHEN size(r.args) = 0 THEN '[]' "
               "ELSE concat('[\"', list_to_string('\", \"', r.args), '\"]') END")


def _rows(result: Any) -> List[List[Any]]:
    out = []
    while result.has_next():
        out.append(result.get_next())
    return out


def moved_args(connection: Any) -> List[Tuple[str, Dict[str, int], list]]:
    """The call edges whose `args` is not their `args_key`'s list: (table, internal id, the list it should hold)."""
    found = []
    seen = set()
    # Kùzu keeps an edge's properties twice, with its source's edges and with its target's: each copy is read (a
    # scan from the target reads the second).
    for table, pattern in ((t, p) for t in CALL_TABLES for p in (f"()-[r:`{t}`]->()", f"()<-[r:`{t}`]-()")):
        rows = _rows(connection.execute(
            f"MATCH {pattern} WHERE r.args IS NOT NULL AND r.args_key IS NOT NULL "
            f"AND r.args_key <> {_PLAIN_JSON} RETURN ID(r), r.args, r.args_key"))
        for rid, args, key in rows:
            if (rid["table"], rid["offset"]) in seen:
                continue
            if json.dumps(args) != key:
                try:
                    wanted = json.loads(key)
                except ValueError:
                    continue  # not a copy of a list (cgc writes str(args) for a non-list): nothing to compare
                if isinstance(wanted, list) and all(isinstance(item, str) for item in wanted):
                    seen.add((rid["table"], rid["offset"]))
                    found.append((table, rid, wanted))
    return found


def _rewrite(connection: Any, table: str, moved: List[Tuple[str, Dict[str, int], list]]) -> None:
    """The moved edges of `table` deleted and written again with their `args` from `args_key` (a SET of `args`
    leaves one of Kùzu's two copies as it was)."""
    ids = [{"t": rid["table"], "o": rid["offset"], "args": args} for name, rid, args in moved if name == table]
    if not ids:
        return
    edges = _rows(connection.execute(
        f"UNWIND $ids AS row MATCH (a)-[r:`{table}`]->(b) WHERE ID(r) = internal_id(row.t, row.o) "
        "RETURN label(a), ID(a), label(b), ID(b), r, row.args", {"ids": ids}))
    connection.execute("BEGIN TRANSACTION")
    try:
        connection.execute(f"UNWIND $ids AS row MATCH ()-[r:`{table}`]->() WHERE ID(r) = internal_id(row.t, row.o) "
                           "DELETE r", {"ids": ids})
        for a_label, a, b_label, b, props, args in edges:
            values = {k: v for k, v in props.items() if not k.startswith("_")}
            values["args"] = args
            sets = ", ".join(f"`{k}`: $p_{k}" for k in values)
            connection.execute(
                f"MATCH (a:`{a_label}`), (b:`{b_label}`) WHERE ID(a) = internal_id($at, $ao) "
                "AND ID(b) = internal_id($bt, $bo) "
                f"CREATE (a)-[:`{table}` {{{sets}}}]->(b)",
                {"at": a["table"], "ao": a["offset"], "bt": b["table"], "bo": b["offset"],
                 **{f"p_{k}": v for k, v in values.items()}})
        connection.execute("COMMIT")
    except BaseException:
        try:
            connection.execute("ROLLBACK")
        except RuntimeError:  # Kùzu ended the transaction with the failed statement
            pass
        raise


def checkpoint_and_mend(connection: Any, rounds: int = 3) -> int:
    """CHECKPOINT, then each call edge whose `args` the checkpoint moved written again with the right one, and
    checkpointed again, until none is left. Returns how many edges were mended."""
    connection.execute("CHECKPOINT")
    mended = 0
    for _ in range(rounds):
        moved = moved_args(connection)
        if not moved:
            return mended
        for table in CALL_TABLES:
            _rewrite(connection, table, moved)
        mended += len(moved)
        connection.execute("CHECKPOINT")
    left = moved_args(connection)
    if left:
        raise RuntimeError(f"{len(left)} call edges still hold another edge's args after {rounds} repairs")
    return mended
