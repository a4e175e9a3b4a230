"""pi-cgc's own full index: cgc's discovery, parser (both cores) and resolution, run by the engine, the whole graph
written at once, and the engine's cache saved as the graph's model (the next engine starts warm and trusted).

  python pi-cgc-engine.py [--cache-dir D] index [--force] ROOT [--context NAME]

The same command line as `cgc index`. Where the engine cannot write this graph itself (a backend it was not
proven on) or where cgc's own index decides (a plain index of a repository the graph already has: cgc skips it or
resumes it), cgc's own command runs instead, in this process. Progress goes to stdout as `pi-cgc index: <phase>`
lines; errors and cgc's own output go to stderr. Exit 0 when the graph is whole, 1 otherwise.

The graph is written in bulk (graph_rows, then bulk_kuzu or bulk_cypher; docs/engine.md, ADR 0012). On KùzuDB
the load is one transaction: an index cut short leaves nothing of itself. Elsewhere, and where cgc's own writer
writes (file by file, in cgc's order: the trees the replay does not cover), an index cut short leaves a partial
graph, as cgc's does; pi-cgc's note of the unfinished run says so. A --force rebuild first deletes the root's old
graph with cgc's writer.
"""

from __future__ import annotations

import argparse
import gc
import re
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import bulk_cypher, bulk_kuzu, graph_rows, relocate
from . import cgc_contract as cgc
from .context import RUN
from .database import PROVEN_BACKENDS, Busy, ZeroSafeDriver
from .engine import Engine, lean_kept
from .files import norm
from .link_rows import CPP_SOURCES, assemble_links, choose_links, write_links
from .memory import release_free_memory
from .protocol import emit_text, log, ms_since, plural, stdout_given_back
from .tree_state import TreeState
from .update_write import write_file

# What follows the parse, in multiples of the time the tree took to read (discovery and parse), from the bench
# (bench/RESULTS.md, "Full index"): the resolution and the rows, then the load. The run re-estimates its whole
# time from its own rate at each phase; pi-cgc shows it as the estimate of the run under way.
AFTER_READING = {"resolving": 2.2, "writing": 1.1}


class Progress:
    """Prints each phase as `pi-cgc index: <phase>`, with ` · ~<s>s in all` once this run's own rate says."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.read_s: Optional[float] = None  # the tree's reading, once done (None: not yet, or all from the cache)

    def __call__(self, phase: str) -> None:
        now = time.monotonic()
        elapsed = now - self.started
        total: Optional[float] = None
        parsing = re.match(r"parsing (\d+)/(\d+)", phase)
        if parsing:
            done, count = int(parsing.group(1)), int(parsing.group(2))
            if done >= max(2, count // 20):
                reading = elapsed * count / done
                total = reading * (1 + sum(AFTER_READING.values()))
                if done == count:
                    self.read_s = elapsed
        elif self.read_s is not None:
            names = list(AFTER_READING)
            at = next((index for index, name in enumerate(names) if phase.startswith(name)), None)
            if at is not None:
                total = elapsed + self.read_s * sum(AFTER_READING[name] for name in names[at:])
        suffix = f" · ~{max(1, round(total))}s in all" if total is not None and total >= elapsed else ""
        emit_text(f"pi-cgc index: {phase}{suffix}\n")


def cgc_index(root: Path, force: bool, backend: str) -> int:
    """cgc's own index, in this process; on FalkorDB Lite with its zero lookup written around, as the engine
    script's cgc command runs it (serve.run_cgc_zero_safe)."""
    if backend == "falkordb":
        cgc.wrap_falkordb_drivers(ZeroSafeDriver)
    with stdout_given_back():
        return cgc.run_cli(["index", *(["--force"] if force else []), str(root)])


# cgc settings under which its index writes what the engine does not (SCIP's edges, embeddings, the vector and
# inheritance re-resolution passes, redacted values): with any of them on, cgc's own index runs.
CGC_OWN_INDEX_SETTINGS = ("SCIP_INDEXER", "ENABLE_VECTOR_RESOLVE", "ENABLE_INHERIT_RESOLVE", "REDACT_SECRETS")


def index_command(args: argparse.Namespace, version: str) -> int:
    # A new worktree's graph from its main checkout's (relocate.py): the export forks before any database opens.
    from_main = getattr(args, "from_main", None)
    export = relocate.Export(Path(from_main).resolve(), Path(args.path).resolve()) \
        if from_main and args.main_cache_dir and not args.force else None
    try:
        return _index_command(args, version, export)
    finally:
        if export is not None:
            export.cancel()


def _index_command(args: argparse.Namespace, version: str, export: Optional[relocate.Export]) -> int:
    root = Path(args.path).resolve()
    cache_dir = Path(args.index_cache_dir).resolve() if args.index_cache_dir else None
    engine = Engine(root, cache_dir, args.context, version)
    backend = engine.db.backend
    own = [name for name in CGC_OWN_INDEX_SETTINGS if cgc.config_on(name)]
    if own:
        log(f"cgc's own index runs: {', '.join(own)} is on, and the engine does not write what that adds")
        return cgc_index(root, args.force, backend)
    if backend not in PROVEN_BACKENDS:
        log(f"backend {backend} is not one the engine was proven on: cgc's own index runs")
        return cgc_index(root, args.force, backend)
    try:
        engine.db.open()
        present, _ = engine.repository_stamp()
    except Busy as error:
        log(str(error))
        return 1
    if present and not args.force:
        engine.db.close()
        return cgc_index(root, False, backend)
    if export is not None:
        done, present = relocate.index_from_main(engine, export, Path(args.main_cache_dir).resolve(), version, Progress())
        if done:
            return 0
        engine.db.open()
    started = time.monotonic()
    shown = Progress()
    engine.start(from_disk=True, progress=shown, save=False, writing=True)
    read_ms = ms_since(started)
    # Files the backend cannot take whole (graph_rows.write_fails): named on the last line, which pi-cgc reads.
    unwritable = sorted(Path(path).relative_to(root).as_posix()
                        for path, entry in engine.state.files.items() if entry.data.get("write_failed"))
    in_part = (f"; {plural(len(unwritable), 'file')} only in part ({backend} cannot take a NUL character in a "
               f"docstring): {', '.join(unwritable[:5])}{', …' if len(unwritable) > 5 else ''}") if unwritable else ""
    files = len(engine.state.files)
    # On KùzuDB, where cgc's delete of the old graph alone outlasts a cold index. On FalkorDB Lite the graph cgc's
    # index leaves can hold functions no file contains, which pi-cgc's sync reads back after the whole write.
    adopted = adopted_by_difference(engine, shown) if present and engine.db.embedded else None
    how = adopted or write_whole(engine, present, shown)
    store = RUN.parse_store
    stored = (f", {plural(store.hits, 'parse')} from the parse store, {store.misses} not in it"
              if store is not None else "")
    if store is not None:
        store.sweep()  # what this index wrote counts against the bound
    shown(f"{plural(files, 'file')} written in {ms_since(started) / 1000:.1f} s "
          f"(read and resolved in {read_ms / 1000:.1f} s{stored}{in_part}; written with {how})")
    return 0


def write_whole(engine: Engine, present: bool, shown: Callable[[str], None]) -> str:
    """The whole graph of the engine's state written (the root's old graph deleted first where `present`), and the
    cache saved as its model. Returns how it was written."""
    # This process only writes the state and saves it: what the cache does not keep goes before the rows are made.
    engine.state.shed_unsaved()
    gc.collect()
    release_free_memory()
    aside = StateSetAside(engine)
    try:
        try:
            how = write_graph(engine, delete_first=present, progress=shown, set_aside=aside)
        finally:
            engine.db.close()
            engine.drop_stash()
        marker = engine.dirty_marker()
        if marker is not None:
            marker.unlink(missing_ok=True)  # an earlier update's unknown outcome: the graph is whole again
        engine.trust()
        if how == "bulk" and aside.saved is not None:
            engine.install_cache(aside.saved, True)
            aside.saved = None
        elif how != "bulk":
            lean_kept(engine.state)
            engine.save_cache()
    finally:
        if aside.saved is not None:
            aside.saved.unlink(missing_ok=True)  # not the graph's model: the load failed, or the state was read again
    return how


def adopted_by_difference(engine: Engine, progress: Callable[[str], None]) -> Optional[str]:
    """A forced index of a graph that holds the root: the graph compared with the full index of the tree and only
    what differs written (Engine.adopt_graph), where cgc's writer would delete the whole graph first (on KùzuDB
    that delete alone outlasts a cold index at 1 000 files) and write it all again. Returns how it was written; None
    where the comparison cannot be made or so much differs that the whole write is the faster: the caller writes the
    whole graph."""
    progress("comparing the graph with the tree")
    try:
        answer = engine.adopt_graph()
    except Exception as error:  # the whole write below makes the graph whatever this left
        log(f"the graph could not be compared with the tree ({str(error)[:300]}): it is written whole")
        return None
    if answer is None or not answer.get("ok"):
        if answer is not None:
            log(f"the graph is written whole: {answer.get('code')}: {str(answer.get('reason'))[:300]}")
        return None
    # Stamped as every index stamps the Repository: the graph is a full index of the tree as of now (pi-cgc's sync
    # reads the stamp back to know the rebuild happened).
    engine.db.write_transaction(lambda writer: writer.add_repository_to_graph(engine.root, False))
    found = answer.get("adopted") or {}
    differed = sum(int(found.get(key) or 0) for key in ("files", "links", "stale"))
    engine.db.close()
    engine.save_cache()
    return (f"adoption: {plural(differed, 'file')} differed from the graph" if differed
            else "adoption: nothing differed from the graph")


class StateSetAside:
    """The state saved (to a file installed as the cache once the graph holds it) and let go of, but for what the
    graph's rows are made from: each file's data, which the replay lets go of file by file, and the call rows.
    The state and the rows together were most of the index's memory (at 5 000 files, 2.9 GB at its peak)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.saved: Optional[Path] = None

    def __call__(self) -> Tuple[List[Dict[str, Any]], Dict[str, List[str]], Dict[str, Any]]:
        """(the files' data, the imports map, the links) for graph_rows.build_graph."""
        state = self.engine.state
        lean_kept(state)
        self.saved = self.engine.write_pending_cache()
        made = ([entry.data for entry in state.files.values()], state.imports_map, assemble_links(state, lazy_calls=True))
        self.engine.state = TreeState()
        del state
        gc.collect()
        release_free_memory()
        return made


def write_graph(engine: Engine, delete_first: bool, progress: Callable[[str], None], set_aside: StateSetAside) -> str:
    """The whole graph of the engine's state, as cgc's full index writes it: in bulk where the backend has a bulk
    writer and the tree is one graph_rows replicates, else with cgc's own writer, file by file. Returns how.
    set_aside: the state is let go of while the rows are made (see StateSetAside; read again from the disk for
    cgc's writer if the replay refuses the tree half-way)."""
    if delete_first:
        progress("deleting the old graph")
        engine.db.write_transaction(lambda writer: writer.delete_repository_from_graph(engine.root.as_posix()))
    why = write_in_bulk(engine, progress, set_aside)
    if why is None:
        return "bulk"
    log(f"written with cgc's own writer: {why}")
    write_with_cgc_writer(engine, progress)
    return "cgc's writer"


def write_in_bulk(engine: Engine, progress: Callable[[str], None], set_aside: StateSetAside) -> Optional[str]:
    """The graph written in bulk; None when written, else why not (nothing written then, and the engine's state
    is whole again)."""
    profile = graph_rows.PROFILES.get(engine.db.backend)
    if profile is None:
        return f"no bulk writer for {engine.db.backend}"
    # Found here, a refusal costs nothing: the state is still whole for cgc's writer (found in the replay, after
    # the state was let go of, it costs a second reading of the tree).
    why = graph_rows.refusal([entry.data for entry in engine.state.files.values()], profile=profile)
    if why is not None:
        return f"this tree is not one the bulk writer replicates ({why})"
    # What sends the write to cgc's writer is known before anything is let go of: a database that holds other
    # nodes (another repository), or tables not as the rows assume.
    try:
        if profile is graph_rows.KUZU:
            with cgc.kuzu_connection(engine.db.manager) as connection:
                bulk_kuzu.check_target(connection, profile)
        else:
            bulk_cypher.check_target(engine.db.manager.get_driver())
    except (bulk_kuzu.NotEmpty, bulk_kuzu.SchemaMismatch, bulk_cypher.NotEmpty) as error:
        return str(error)
    commit_hash = cgc.repo_commit_hash(engine.root)
    file_data, imports_map, links = set_aside()
    try:
        rows = graph_rows.build_graph(engine.root, file_data, imports_map, links, profile=profile,
                                      normalize=cgc.normalize_path, commit_hash=commit_hash, whole=engine.whole_data,
                                      consume=True)
    except graph_rows.NotReplicable as error:
        del file_data, links
        progress("reading the tree again for cgc's writer")
        engine.drop_stash()
        engine.start(from_disk=True, progress=progress, save=False, writing=True)
        return f"this tree is not one the bulk writer replicates ({error})"
    del file_data, imports_map, links  # the call rows they read: the load's memory comes after
    progress(f"writing {plural(sum(map(len, rows.nodes.values())), 'node')} and "
             f"{plural(sum(map(len, rows.edges.values())), 'edge')}")
    if profile is graph_rows.KUZU:
        with cgc.kuzu_connection(engine.db.manager) as connection:
            bulk_kuzu.load(connection, rows)
        return None
    # FalkorDB (Lite or a server) and Neo4j: cgc's own indexes and constraints first, as cgc's index makes them
    # (GraphBuilder creates them before it writes), then the rows by Cypher.
    cgc.create_graph_schema(engine.db.manager)
    bulk_cypher.load(engine.db.manager.get_driver(), rows)
    return None


def write_with_cgc_writer(engine: Engine, progress: Callable[[str], None]) -> None:
    """The whole graph with cgc's own writer, file by file, in cgc's order. On FalkorDB (Lite or a server) and
    Neo4j cgc's indexes and constraints first, as cgc's index makes them (GraphBuilder creates them before it
    writes; each statement is IF NOT EXISTS, so a bulk attempt that made them already changes nothing)."""
    state, root = engine.state, engine.root
    root_str = root.as_posix()
    if engine.db.backend != graph_rows.KUZU.name:
        cgc.create_graph_schema(engine.db.manager)

    def work(writer: Any) -> None:
        writer.add_repository_to_graph(root, False)
        progress(f"writing the nodes of {plural(len(state.files), 'file')}")
        for path in sorted(state.files):
            write_file(writer, path, engine.whole_data(state.files[path].data), state.imports_map, root)
        progress("writing the edges")
        chosen = choose_links(state, {norm(p) for p in state.files}, set(), set(state.files))
        write_links(writer, chosen, state.imports_map)
        if state.suffixes and state.suffixes & CPP_SOURCES:
            writer.write_cpp_class_function_links(root_str)
        if state.suffixes and ".java" in state.suffixes:
            engine.rewrite_java_passes(writer, state)

    engine.db.write_transaction(work)


def add_index_parser(sub: Any) -> None:
    index_p = sub.add_parser("index", help="pi-cgc's own full index of ROOT (cgc index's command line)")
    index_p.add_argument("path", metavar="ROOT")
    index_p.add_argument("--force", "-f", action="store_true", help="delete the root's graph first and index it again")
    index_p.add_argument("--context")
    index_p.add_argument("--from-main", metavar="MAIN", help="a new worktree's graph from its main checkout MAIN's, "
                         "where that graph is current (relocate.py); else the full index")
    index_p.add_argument("--main-cache-dir", metavar="D", help="the main checkout's engine cache folder")

