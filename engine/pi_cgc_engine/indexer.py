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
from typing import Any, Callable, Optional

from . import bulk_cypher, bulk_kuzu, graph_rows
from . import cgc_contract as cgc
from .database import PROVEN_BACKENDS, Busy, ZeroSafeDriver
from .engine import Engine, lean_kept
from .files import compact_lists, norm
from .link_rows import CPP_SOURCES, assemble_links, choose_links, write_links
from .memory import release_free_memory
from .protocol import emit_text, log, ms_since, plural, stdout_given_back
from .tree_state import TreeState

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
    started = time.monotonic()
    shown = Progress()
    engine.start(from_disk=True, progress=shown, save=False, writing=True)
    read_ms = ms_since(started)
    files = len(engine.state.files)
    # This process only writes the state and saves it: what the cache does not keep goes before the rows are made,
    # and the files' long lists are made compact (every field kept: the rows read them all), so that the rows
    # take the place their dicts held. Compact from the parse on, cgc's resolution took half as long again.
    engine.state.shed_unsaved()
    for entry in engine.state.files.values():
        compact_lists(entry)
    gc.collect()
    release_free_memory()
    aside = StateSetAside(engine)
    try:
        try:
            how = write_graph(engine, delete_first=present, progress=shown, before_load=aside)
        finally:
            engine.db.close()
            engine.drop_stash()
        marker = engine.dirty_marker()
        if marker is not None:
            marker.unlink(missing_ok=True)  # an earlier update's unknown outcome: the graph is whole again
        engine.trust()
        if aside.saved is not None:
            engine.install_cache(aside.saved, True)
            aside.saved = None
        elif not aside.done:
            lean_kept(engine.state)
            engine.save_cache()
    finally:
        if aside.saved is not None:
            aside.saved.unlink(missing_ok=True)  # the load failed: the graph does not hold this state
    shown(f"{plural(files, 'file')} written in {ms_since(started) / 1000:.1f} s "
          f"(read and resolved in {read_ms / 1000:.1f} s; written with {how})")
    return 0


class StateSetAside:
    """What a bulk loader calls once its checks passed, before the database's memory grows: the state is saved
    (to a file installed as the cache once the graph holds it) and let go of. The rows hold what the load needs;
    at 5 000 files the state and the rows together are most of the index's memory."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.done = False
        self.saved: Optional[Path] = None

    def __call__(self) -> None:
        lean_kept(self.engine.state)
        self.saved = self.engine.write_pending_cache()
        self.engine.state = TreeState()
        self.done = True
        gc.collect()
        release_free_memory()


def write_graph(engine: Engine, delete_first: bool, progress: Callable[[str], None],
                before_load: Optional[Callable[[], None]] = None) -> str:
    """The whole graph of the engine's state, as cgc's full index writes it: in bulk where the backend has a bulk
    writer and the tree is one graph_rows replicates, else with cgc's own writer, file by file. Returns how.
    before_load: run by a bulk loader once nothing can send the write to cgc's writer any more."""
    if delete_first:
        progress("deleting the old graph")
        engine.db.write_transaction(lambda writer: writer.delete_repository_from_graph(engine.root.as_posix()))
    why = write_in_bulk(engine, progress, before_load)
    if why is None:
        return "bulk"
    log(f"written with cgc's own writer: {why}")
    write_with_cgc_writer(engine, progress)
    return "cgc's writer"


def write_in_bulk(engine: Engine, progress: Callable[[str], None],
                  before_load: Optional[Callable[[], None]] = None) -> Optional[str]:
    """The graph written in bulk; None when written, else why not (nothing written then)."""
    profile = graph_rows.PROFILES.get(engine.db.backend)
    if profile is None:
        return f"no bulk writer for {engine.db.backend}"
    state = engine.state
    try:
        rows = graph_rows.build_graph(engine.root, [entry.data for entry in state.files.values()], state.imports_map,
                                      assemble_links(state, lazy_calls=True), profile=profile, normalize=cgc.normalize_path,
                                      commit_hash=cgc.repo_commit_hash(engine.root), whole=engine.whole_data)
    except graph_rows.NotReplicable as error:
        return f"this tree is not one the bulk writer replicates ({error})"
    del state
    progress(f"writing {plural(sum(map(len, rows.nodes.values())), 'node')} and "
             f"{plural(sum(map(len, rows.edges.values())), 'edge')}")
    if profile is graph_rows.KUZU:
        try:
            with cgc.kuzu_connection(engine.db.manager) as connection:
                bulk_kuzu.load(connection, rows, before_copy=before_load)
        except (bulk_kuzu.NotEmpty, bulk_kuzu.SchemaMismatch) as error:
            return str(error)
        return None
    # FalkorDB (Lite or a server) and Neo4j: cgc's own indexes and constraints first, as cgc's index makes them
    # (GraphBuilder creates them before it writes), then the rows by Cypher.
    cgc.create_graph_schema(engine.db.manager)
    try:
        bulk_cypher.load(engine.db.manager.get_driver(), rows, before_load=before_load)
    except bulk_cypher.NotEmpty as error:
        return str(error)
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
            data = state.files[path].data
            if "error" not in data:
                data = engine.whole_data(data)
                writer.add_file_to_graph(data, root.name, state.imports_map, repo_path_str=root_str)
            elif not data.get("unsupported"):
                writer.add_minimal_file_node(Path(path), root, False)
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

