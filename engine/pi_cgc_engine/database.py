"""The database: opened for an operation, closed when idle (KùzuDB's lock is exclusive); each backend's fixes."""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from . import cgc_contract as cgc
from . import kuzu_lists
from .context import RUN
from .protocol import log, ms_since, plural

# Backends the parity harness ran on (FalkorDB Lite shares the server's engine and writer path).
# Neo4j ran it on two servers (one database each). Nornic and LadybugDB are refused: never compared.
PROVEN_BACKENDS = {"kuzudb", "falkordb", "falkordb-remote", "neo4j"}
# The real lock messages of cgc 0.6.13 on KùzuDB (kuzu's own text, and cgc's CLI hint).
LOCK_MESSAGES = ("Could not set lock on file", "Another CGC process already has this embedded database open")


_FILE_NODES = (
    "MATCH (f:File {path: $path}) OPTIONAL MATCH (f)-[:CONTAINS]->(element) "
    "OPTIONAL MATCH (element)-[:HAS_PARAMETER]->(p:Parameter) "
    "WITH collect(DISTINCT f) + collect(DISTINCT element) + collect(DISTINCT p) AS doomed "
    "UNWIND doomed AS n RETURN DISTINCT id(n) AS id"
)


def delete_file_edges_first(writer: Any, path: str) -> None:
    """GraphWriter.delete_file_from_graph of cgc 0.6.13, statement for statement, but for its DETACH DELETE."""
    file_path = cgc.normalize_path(path)
    with writer.driver.session() as session:
        parents = [row["path"] for row in session.run(
            "MATCH (f:File {path: $path})<-[:CONTAINS*]-(d:Directory) RETURN d.path as path ORDER BY d.path DESC",
            path=file_path)]
        session.run("MATCH (f:File {path: $path})-[r:CONTAINS]->(:Module) DELETE r", path=file_path)
        ids = [row["id"] for row in session.run(_FILE_NODES, path=file_path)]
        if ids:
            session.run("UNWIND $ids AS i MATCH (n) WHERE id(n) = i MATCH (n)-[r]->() DELETE r", ids=ids)
            session.run("UNWIND $ids AS i MATCH (n) WHERE id(n) = i MATCH ()-[r]->(n) DELETE r", ids=ids)
            session.run("UNWIND $ids AS i MATCH (n) WHERE id(n) = i DELETE n", ids=ids)
        for parent in parents:
            session.run("MATCH (d:Directory {path: $path}) WHERE NOT (d)-[:CONTAINS]->() DETACH DELETE d", path=parent)


# ---------------------------------------------------------------------------------------------
# The database: opened for an operation, closed when idle (KùzuDB's lock is exclusive).


class Busy(Exception):
    pass


class TransactionLost(Exception):
    """KùzuDB rolls a manual transaction back on any failed statement, binder errors included."""


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


class TxnConnection:
    """A kuzu.Connection inside one explicit transaction.

    cgc's writer probes labels by letting queries fail with a binder error and moving on; inside a
    Kùzu transaction that failure rolls everything back. So a statement that once failed to bind is
    remembered (by text and parameter shape) and answered with the same error without reaching Kùzu,
    and a transaction that was lost anyway is noticed (`lost`) so the caller retries it whole.
    """

    def __init__(self, conn: Any, known_binder_failures: Dict[str, str]):
        self.conn = conn
        self.known = known_binder_failures
        self.lost: Optional[str] = None
        self.learned = False
        self.statements = 0

    def execute(self, query: str, parameters: Optional[Dict[str, Any]] = None) -> Any:
        key = query + "\0" + json.dumps(_shape(parameters or {}), sort_keys=True)
        if key in self.known:
            raise RuntimeError(self.known[key])
        if self.lost is not None:
            raise TransactionLost("pi-cgc: the write transaction was rolled back; nothing more is sent")
        self.statements += 1
        try:
            return self.conn.execute(query, parameters or {})
        except Exception as error:
            text = str(error)
            self.lost = text
            if "binder exception" in text.lower():
                self.known[key] = text
                self.learned = True
            raise TransactionLost(f"pi-cgc: the write transaction was rolled back ({text[:200]})") from None


# FalkorDB Lite (falkordblite 0.9.0) answers a range-index lookup of the number 0 with nothing: `MATCH (n:Function
# {occurrence_index: 0})` finds no node though every node of a file without two same-named symbols on one line has
# that value (1 is found; a FalkorDB server answers right; docs/cgc-compat.md). cgc's writer links each function,
# class … to its file, and each parameter to its function, by such a lookup, so on Lite those edges were never
# written. The engine's writes there take the occurrence_index out of the lookup's map and compare it in a WHERE
# the planner cannot answer from the index (`+ 0`); every other key is matched as cgc wrote it.
_ZERO_LOOKUP = re.compile(r"MATCH \((\w+):(\w+) \{([^{}]*?), occurrence_index: row\.occurrence_index\}\)")


def zero_safe(query: str) -> str:
    return _ZERO_LOOKUP.sub(r"MATCH (\1:\2 {\3}) WHERE \1.occurrence_index + 0 = row.occurrence_index", query)


class ZeroSafeSession:
    """A driver session whose queries go through zero_safe."""

    def __init__(self, session: Any):
        self._session = session

    def run(self, query: str, *args: Any, **kwargs: Any) -> Any:
        return self._session.run(zero_safe(query), *args, **kwargs)

    def __enter__(self) -> "ZeroSafeSession":
        self._session.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._session.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


class ZeroSafeDriver:
    """cgc's FalkorDB Lite driver, its sessions' queries through zero_safe."""

    def __init__(self, driver: Any):
        self._driver = driver

    def session(self, *args: Any, **kwargs: Any) -> ZeroSafeSession:
        return ZeroSafeSession(self._driver.session(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)


class Database:
    def __init__(self, root: Path, context: Optional[str]):
        ctx = cgc.resolve_context(context, cwd=root)
        # The same choice cgc's CLI makes (_initialize_services): the context's database is only a
        # default when no runtime override or DEFAULT_DATABASE is set.
        if ctx.database and not os.getenv("CGC_RUNTIME_DB_TYPE") and not os.getenv("DEFAULT_DATABASE"):
            os.environ["DEFAULT_DATABASE"] = ctx.database
        self.ctx = ctx
        self.is_open = False
        self.binder_failures: Dict[str, str] = {}
        # KùzuDB: a write committed since the last checkpoint the engine made (close makes one first: kuzu_lists).
        self.unchecked = False
        # The open write transaction's connection on KùzuDB, while write_transaction's work runs (update_bulk).
        self.transaction: Optional[TxnConnection] = None
        # cgc's choice of backend makes the manager, and on FalkorDB Lite starts its daemon, which loads the
        # whole graph before it answers: 2.4 s at 5 000 files, the larger part of a warm start's wait. So it
        # runs beside the engine's start, which reads the cache meanwhile; the first use waits for it.
        self._chosen: List[Any] = []
        self._choosing = threading.Thread(target=self._choose, name="cgc-database-manager", daemon=True)
        self._choosing.start()

    def _choose(self) -> None:
        try:
            self._chosen.append(cgc.get_database_manager(db_path=os.getenv("CGC_RUNTIME_DB_PATH") or self.ctx.db_path))
        except BaseException as error:  # raised where the manager is first used
            self._chosen.append(error)

    @functools.cached_property
    def manager(self) -> Any:
        """cgc's database manager (waits for cgc's choice; its failure is raised here)."""
        self._choosing.join()
        chosen = self._chosen[0]
        if isinstance(chosen, BaseException):
            raise chosen
        return chosen

    @functools.cached_property
    def backend(self) -> str:
        return str(self.manager.get_backend_type())

    @property
    def embedded(self) -> bool:
        return self.backend in ("kuzudb", "ladybugdb")

    @property
    def falkordb(self) -> bool:
        return self.backend in ("falkordb", "falkordb-remote")  # Lite or a server

    def open(self) -> int:
        """Opens the database if closed; returns the ms it took. Raises Busy on a held lock."""
        if self.is_open:
            return 0
        start = time.monotonic()
        try:
            self.manager.get_driver()
        except Exception as error:
            text = str(error)
            if any(message.lower() in text.lower() for message in LOCK_MESSAGES):
                raise Busy(text) from None
            raise
        self.is_open = True
        return ms_since(start)

    def close(self) -> None:
        if self.is_open:
            if self.unchecked:
                try:
                    self.checkpoint()
                except Exception as error:  # the close goes on: what a mend could not do, a rebuild does
                    log(f"the checkpoint before closing KùzuDB failed ({error!r})")
            self.is_open = False
            self.manager.close_driver()

    def checkpoint(self) -> int:
        """KùzuDB's checkpoint now, and the call edges' `args` it moved put back (kuzu_lists); how many."""
        self.unchecked = False
        with cgc.kuzu_connection(self.manager) as connection:
            mended = kuzu_lists.checkpoint_and_mend(connection)
        if mended:
            log(f"KùzuDB's checkpoint moved the args of {plural(mended, 'call edge')}: put back from their args_key")
        return mended

    def writer(self) -> Any:
        driver = self.manager.get_driver()
        return cgc.GraphWriter(ZeroSafeDriver(driver) if self.backend == "falkordb" else driver, db_manager=self.manager)

    def read(self, query: str, **params: Any) -> List[Any]:
        with self.manager.get_driver().session() as session:
            return list(session.run(query, **params))

    def write_transaction(self, work: Callable[[Any], None]) -> Dict[str, int]:
        """Runs work(writer) atomically where the backend allows it; returns statement counts."""
        if not self.embedded:
            work(self.writer())
            return {"attempts": 1}
        attempts = 0
        while True:
            attempts += 1
            with cgc.kuzu_connection(self.manager) as raw:
                txn = TxnConnection(raw, self.binder_failures)
                driver = cgc.kuzu_transaction_driver(self.manager, txn)
                raw.execute("BEGIN TRANSACTION")
                error: Optional[BaseException] = None
                self.transaction = txn
                try:
                    work(cgc.GraphWriter(driver, db_manager=self.manager))
                except BaseException as caught:  # decided below, then re-raised
                    error = caught
                finally:
                    self.transaction = None
                if txn.lost is None and error is None:
                    raw.execute("COMMIT")
                    self.unchecked = True  # see checkpoint
                    return {"attempts": attempts, "statements": txn.statements}
                if txn.lost is None:
                    raw.execute("ROLLBACK")
                if error is not None and not isinstance(error, TransactionLost) and txn.lost is None:
                    raise error
                # A statement we had not yet seen failing to bind: learned, and the whole update
                # runs again from a clean transaction.
                if txn.learned and attempts < 50:
                    log(f"transaction retried after a binder probe ({len(self.binder_failures)} known)")
                    continue
                raise RuntimeError(f"write transaction rolled back: {txn.lost or error}")


# cgc's _purge_dangling_pathless_nodes (its source fingerprinted in cgc_contract.COPIED_SOURCES), query for
# query, but for the Module and Parameter passes, which look
# only where a node can have lost its last referrer. On a graph with none dangling before (what a full index
# leaves), a Module loses its last IMPORTS or INCLUDES edge only when the file (or a class of the file) that
# had it is deleted, so only the modules those files pointed to can be dangling after (the engine asks the
# graph which, before the delete); a Parameter node carries its file's path and loses its HAS_PARAMETER edge
# only when that file's function is deleted, so only the changed files' can be. cgc's own passes scan every
# Module and every Parameter of the graph: most of an update's time at 1 000 files, and growing with it.
# The ExternalClass pass scans every ExternalClass (1.2 ms on FalkorDB at 5 000 files, 0.1 at 100): cgc 0.6.13
# makes such a node only with an INHERITS edge into it, from a row whose parent it could not resolve
# (EXTERNAL_PARENT), so one can lose its last edge only when the deleted files or the files whose links are
# written again had such a row (external_parents); otherwise the pass is skipped.
PURGE_QUERIES = (
    "UNWIND $modules AS name MATCH (m:Module {name: name}) WHERE NOT ()-[:IMPORTS|INCLUDES]->(m) "
    "WITH m LIMIT 5000 DETACH DELETE m RETURN count(m) AS deleted",
    "MATCH (n:ExternalClass) WHERE NOT ()-[]->(n) WITH n LIMIT 5000 DETACH DELETE n RETURN count(n) AS deleted",
    "MATCH (n:ExternalFunction) WHERE NOT ()-[]->(n) WITH n LIMIT 5000 DETACH DELETE n RETURN count(n) AS deleted",
    "MATCH (p:Parameter) WHERE p.path IN $paths AND NOT ()-[:HAS_PARAMETER]->(p) "
    "WITH p LIMIT 5000 DETACH DELETE p RETURN count(p) AS deleted",
)
# The same predicates for FalkorDB, which plans `NOT ()-[...]->(n)` as a walk over every node for each
# candidate (the Module pass: 22 ms at 1 000 files, growing with the graph), while indegree() reads the
# candidate's own edges (1.3 ms). Both FalkorDB Lite and the server have it (4.16); a FalkorDB without it
# gets the queries above.
PURGE_QUERIES_FALKORDB = (
    "UNWIND $modules AS name MATCH (m:Module {name: name}) WHERE indegree(m, 'IMPORTS', 'INCLUDES') = 0 "
    "WITH m LIMIT 5000 DETACH DELETE m RETURN count(m) AS deleted",
    "MATCH (n:ExternalClass) WHERE indegree(n) = 0 WITH n LIMIT 5000 DETACH DELETE n RETURN count(n) AS deleted",
    "MATCH (n:ExternalFunction) WHERE indegree(n) = 0 WITH n LIMIT 5000 DETACH DELETE n RETURN count(n) AS deleted",
    "MATCH (p:Parameter) WHERE p.path IN $paths AND indegree(p, 'HAS_PARAMETER') = 0 "
    "WITH p LIMIT 5000 DETACH DELETE p RETURN count(p) AS deleted",
)


def purge_dangling(writer: Any, paths: List[str], modules: List[str], backend: str,
                   external_classes: bool = True) -> None:
    """The dangling nodes an update can leave: `paths`' Parameters, `modules`' Module nodes, any External*
    (ExternalClass nodes only when `external_classes`: see PURGE_QUERIES)."""
    falkordb = backend in ("falkordb", "falkordb-remote") and RUN.degree_function
    for query in PURGE_QUERIES_FALKORDB if falkordb else PURGE_QUERIES:
        if "$modules" in query and not modules or "ExternalClass" in query and not external_classes:
            continue
        params = {name: value for name, value in (("paths", paths), ("modules", modules)) if f"${name}" in query}
        try:
            while True:
                with writer.driver.session() as session:
                    result = session.run(query, **params).single()
                if not result or not result["deleted"]:
                    break
        except Exception as error:  # as cgc: a label this backend never made
            if falkordb and "indegree" in str(error).lower() and RUN.degree_function:
                RUN.degree_function = False
                log(f"this FalkorDB has no indegree(): {error}")
                # again from the first pass: each is idempotent
                return purge_dangling(writer, paths, modules, backend, external_classes)
            if not cgc.is_binder_exception(error):
                raise
