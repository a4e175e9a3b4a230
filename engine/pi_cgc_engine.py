#!/usr/bin/env python3
"""pi-cgc's incremental graph engine (ADR 0001, decision 1; issue 12).

Run by cgc's own interpreter with cwd = the workspace root. It imports cgc's library to parse, resolve
and write, and keeps the graph equal to what a fresh `cgc index --force <root>` of the same tree holds:
changed files are deleted and re-added with cgc's own GraphWriter, every link row (CALLS, INHERITS, …)
is re-resolved in memory over the whole tree, and only the rows that differ — plus the rows pointing
into replaced files, whose incoming edges the delete detached — are written again.

  python pi_cgc_engine.py serve --root R [--cache-dir D] [--hold-ms N] [--context NAME]
  python pi_cgc_engine.py dump  --root R [--out FILE] [--context NAME]

serve speaks JSON lines (stdout: protocol only; logs go to stderr). First line:
  {"event":"ready","cgcVersion","backend","files","startMs","warm","cached","diverged"}
  or {"event":"refused","reason"} and exit 3 (another cgc version, no importable cgc, unproven backend).
Requests, one per line, each answered by one line with the same id:
  {"id","op":"update","paths":[abs…]} → {"ok":true,"written","removed","ms","lockMs","openMs","resolveMs",
      "resolved","rewritten","attempts"} | {"ok":false,"code":"BUSY"|"FAILED"|"DIVERGED","reason"}
      (paths of an update that did not commit are retried with the next one)
  {"id","op":"verify","paths":[…]} → {"ok":true,"reflected":[…],"unreflected":[…]}
  {"id","op":"dump","out":"/abs/file"} → {"ok":true,"lines":N}
  {"id","op":"rebuilt"} → the caller rebuilt the graph fully: re-read the tree, clear DIVERGED
  {"id","op":"shutdown"} → {"ok":true}, exit 0. stdin EOF, SIGINT and SIGTERM also exit 0.
PI_CGC_ENGINE_SKIP_INCOMING=1 switches off the restore of edges coming into replaced files (to show
that the parity harness catches it).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import pickle
import queue
import select
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

PROVEN_VERSIONS = {"0.6.13"}
# Backends the parity harness ran on (FalkorDB Lite shares the server's engine and writer path).
# Neo4j, Nornic and LadybugDB are refused: their write semantics were never compared.
PROVEN_BACKENDS = {"kuzudb", "falkordb", "falkordb-remote"}
REFUSED_EXIT = 3
# The real lock messages of cgc 0.6.13 on KùzuDB (kuzu's own text, and cgc's CLI hint).
LOCK_MESSAGES = ("Could not set lock on file", "Another CGC process already has this embedded database open")
# Relationship types that only the post-pass link writers create; their edges are owned by the
# file of their source node.
LINK_TYPES = (
    "CALLS", "HEURISTIC_CALLS", "INHERITS", "IMPLEMENTS", "EMBEDS", "COMPANION_OF", "PARTIAL_OF",
    "PART_OF", "METACLASS", "DECORATED_BY", "BINDS", "PREVIEWS",
)
# (owner key, target key) of each link kind's rows, as cgc's resolution builds them.
LINK_KEYS: Dict[str, Tuple[str, str]] = {
    "inherits": ("path", "resolved_parent_file_path"),
    "implements": ("path", "resolved_parent_file_path"),
    "embeds": ("path", "resolved_parent_file_path"),
    "companion": ("companion_path", "owner_path"),
    "partial": ("path", "resolved_parent_file_path"),
    "part_of": ("child_path", "parent_path"),
    "metaclass": ("path", "resolved_parent_file_path"),
    "decorated": ("decorated_path", "decorator_path"),
    "binds": ("source_path", "target_path"),
    "previews": ("preview_path", "composable_path"),
    "calls": ("caller_file_path", "called_file_path"),
}
# The extensions write_cpp_class_function_links links functions of.
CPP_SOURCES = {".cpp", ".cc", ".cxx", ".c++", ".C"}
SKIP_INCOMING = os.environ.get("PI_CGC_ENGINE_SKIP_INCOMING") == "1"

# The protocol owns the real stdout; cgc's library may print, so fd 1 is pointed at stderr.
_PROTOCOL = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr


def log(message: str) -> None:
    print(f"[pi-cgc-engine] {message}", file=sys.stderr, flush=True)


def emit(obj: Dict[str, Any]) -> None:
    _PROTOCOL.write(json.dumps(obj) + "\n")
    _PROTOCOL.flush()


def ms_since(start: float) -> int:
    return round((time.monotonic() - start) * 1000)


def refuse(reason: str) -> None:
    emit({"event": "refused", "reason": reason})
    sys.exit(REFUSED_EXIT)


def cgc_version() -> str:
    from importlib.metadata import version

    return version("codegraphcontext")


def load_cgc() -> str:
    """The version gate: any other cgc, or a library that does not import, is refused."""
    try:
        found = cgc_version()
    except Exception as error:  # noqa: BLE001 - any failure to find cgc is a refusal
        refuse(f"codegraphcontext is not importable here: {error}")
    if found not in PROVEN_VERSIONS:
        refuse(f"cgc {found} is not a version the engine was proven on ({', '.join(sorted(PROVEN_VERSIONS))})")
    try:
        global GraphBuilder, GraphWriter, JobManager, discover_files_to_index, pre_scan_for_imports
        global build_function_call_groups, inh
        from codegraphcontext.core.jobs import JobManager
        from codegraphcontext.tools.graph_builder import GraphBuilder
        from codegraphcontext.tools.indexing import resolution as _resolution  # noqa: F401
        from codegraphcontext.tools.indexing.discovery import discover_files_to_index
        from codegraphcontext.tools.indexing.persistence.writer import GraphWriter
        from codegraphcontext.tools.indexing.pre_scan import pre_scan_for_imports
        from codegraphcontext.tools.indexing.resolution import inheritance as inh
        from codegraphcontext.tools.indexing.resolution.calls import build_function_call_groups
    except Exception as error:  # noqa: BLE001
        refuse(f"cgc {found} does not expose the library the engine needs: {error}")
    return found


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


class Database:
    def __init__(self, root: Path, context: Optional[str]):
        from codegraphcontext.cli.config_manager import resolve_context
        from codegraphcontext.core import get_database_manager

        ctx = resolve_context(context, cwd=root)
        # The same choice cgc's CLI makes (_initialize_services): the context's database is only a
        # default when no runtime override or DEFAULT_DATABASE is set.
        if ctx.database and not os.getenv("CGC_RUNTIME_DB_TYPE") and not os.getenv("DEFAULT_DATABASE"):
            os.environ["DEFAULT_DATABASE"] = ctx.database
        self.ctx = ctx
        self.manager = get_database_manager(db_path=os.getenv("CGC_RUNTIME_DB_PATH") or ctx.db_path)
        self.backend: str = self.manager.get_backend_type()
        self.embedded = self.backend in ("kuzudb", "ladybugdb")
        self.is_open = False
        self.binder_failures: Dict[str, str] = {}

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
            self.is_open = False
            self.manager.close_driver()

    def writer(self) -> Any:
        return GraphWriter(self.manager.get_driver(), db_manager=self.manager)

    def read(self, query: str, **params: Any) -> List[Any]:
        with self.manager.get_driver().session() as session:
            return list(session.run(query, **params))

    def write_transaction(self, work: Callable[[Any], None]) -> Dict[str, int]:
        """Runs work(writer) atomically where the backend allows it; returns statement counts."""
        if not self.embedded:
            work(self.writer())
            return {"attempts": 1}
        from codegraphcontext.core.database_embedded_kuzu import EmbeddedDriverWrapper

        manager = self.manager
        attempts = 0
        while True:
            attempts += 1
            raw = manager._pool.get(timeout=30)
            txn = TxnConnection(raw, self.binder_failures)
            single: "queue.Queue[Any]" = queue.Queue()
            single.put(txn)
            driver = EmbeddedDriverWrapper(
                manager._db, single, manager._write_lock, compat_state=type(manager)._compat_state,
                display_name=manager.BACKEND_SPEC.display_name, backend_id=manager.BACKEND_SPEC.backend_id,
            )
            try:
                raw.execute("BEGIN TRANSACTION")
                error: Optional[BaseException] = None
                try:
                    work(GraphWriter(driver, db_manager=manager))
                except BaseException as caught:  # noqa: BLE001 - decided below, then re-raised
                    error = caught
                if txn.lost is None and error is None:
                    raw.execute("COMMIT")
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
            finally:
                manager._pool.put(raw)


# ---------------------------------------------------------------------------------------------
# The tree: parsed files, the imports map, resolved link rows.


@dataclass
class FileEntry:
    size: int
    mtime_ns: int
    digest: str
    data: Dict[str, Any]
    imports: Dict[str, List[str]]


@dataclass
class TreeState:
    files: Dict[str, FileEntry] = field(default_factory=dict)
    imports_map: Dict[str, List[str]] = field(default_factory=dict)
    links: Dict[str, Any] = field(default_factory=dict)
    owned: Dict[str, List[str]] = field(default_factory=dict)  # link rows by owner file, for diffs


class _NoDatabase:
    """Parsing needs no database: GraphBuilder asks its manager for a driver it never uses."""

    def get_driver(self, graph_name: Optional[str] = None) -> None:
        return None

    def get_backend_type(self) -> str:
        return "none"


def parse_only_builder() -> Any:
    class ParseOnlyBuilder(GraphBuilder):  # type: ignore[misc, valid-type]
        def create_schema(self, graph_name: Optional[str] = None) -> None:
            return None

    return ParseOnlyBuilder(_NoDatabase(), JobManager(), None)


def file_ext(path: Path) -> str:
    return ".d.ts" if path.name.endswith(".d.ts") else path.suffix


def digest_of(path: Path) -> Tuple[int, int, str]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns, hashlib.sha1(path.read_bytes()).hexdigest()


class Tree:
    def __init__(self, root: Path, cgcignore_path: Optional[str]):
        self.root = root
        self.root_str = root.as_posix()
        self.cgcignore_path = cgcignore_path
        self.builder = parse_only_builder()

    def discover(self) -> List[Path]:
        files, _ = discover_files_to_index(self.root, self.cgcignore_path, supported_extensions=set(self.builder.parsers))
        return files

    def parse(self, path: Path, known: Tuple[int, int, str]) -> FileEntry:
        # The pipeline parses with repo_path = the resolved root; a pre-scan of one file is that
        # file's share of the imports map.
        data = self.builder.parse_file(self.root, path, False)
        imports = pre_scan_for_imports([path], self.builder.parsers.keys(), self.builder.get_parser)
        return FileEntry(known[0], known[1], known[2], data, imports)

    def merge_imports(self, files: Dict[str, FileEntry]) -> Dict[str, List[str]]:
        """pre_scan_for_imports over the whole tree: extension groups in order of first appearance
        in path order, files in path order, each name's paths deduplicated."""
        groups: Dict[str, List[str]] = {}
        for path in sorted(files):
            groups.setdefault(file_ext(Path(path)), []).append(path)
        merged: Dict[str, List[str]] = {}
        for paths in groups.values():
            for path in paths:
                for name, found in files[path].imports.items():
                    bucket = merged.setdefault(name, [])
                    for item in found:
                        if item not in bucket:
                            bucket.append(item)
        return merged

    @staticmethod
    def parsed(files: Dict[str, FileEntry]) -> List[Dict[str, Any]]:
        return [files[p].data for p in sorted(files) if "error" not in files[p].data]

    def resolve(self, files: Dict[str, FileEntry], imports_map: Dict[str, List[str]]) -> Dict[str, Any]:
        """Every link row a full index would write, in the pipeline's order."""
        data = self.parsed(files)
        inherits, _csharp = inh.build_inheritance_and_csharp_files(data, imports_map)
        implements = inh.build_go_implements_links(data)
        implements.extend(inh.build_haskell_implements_links(data))
        implements.extend(inh.build_elixir_implements_links(data))
        return {
            "inherits": inherits,
            "implements": implements,
            "embeds": inh.build_embeds_links(data),
            "companion": inh.build_companion_of_links(data),
            "partial": inh.build_partial_of_links(data),
            "part_of": inh.build_part_of_links(data),
            "metaclass": inh.build_metaclass_links(data, imports_map),
            "decorated": inh.build_decorated_by_links(data, imports_map),
            "binds": inh.build_binds_links(data, imports_map),
            "previews": inh.build_previews_links(data, imports_map),
            "calls": list(build_function_call_groups(data, imports_map, None)),
        }


@functools.lru_cache(maxsize=1 << 16)
def _resolved(path: str) -> str:
    return Path(path).resolve().as_posix()


def norm(path: Any) -> str:
    return _resolved(str(path)) if path else ""


def link_rows(links: Dict[str, Any]) -> Iterable[Tuple[str, int, Dict[str, Any]]]:
    """(kind, call group index or -1, row) in write order."""
    for kind in LINK_KEYS:
        if kind == "calls":
            for index, group in enumerate(links.get("calls", [])):
                for row in group:
                    yield kind, index, row
        else:
            for row in links.get(kind, []):
                yield kind, -1, row


def rows_by_owner(links: Dict[str, Any]) -> Dict[str, List[str]]:
    owned: Dict[str, List[str]] = {}
    for kind, index, row in link_rows(links):
        owner = norm(row.get(LINK_KEYS[kind][0]))
        owned.setdefault(owner, []).append(f"{kind}:{index}:{json.dumps(row, sort_keys=True, default=str)}")
    return owned


def write_links(writer: Any, links: Dict[str, Any], imports_map: Dict[str, Any], keep: Callable[[str, Dict[str, Any]], bool]) -> int:
    """cgc's own link writers, in the pipeline's order, given only the rows `keep` accepts."""
    chosen = {kind: [r for r in links.get(kind, []) if keep(kind, r)] for kind in LINK_KEYS if kind != "calls"}
    groups = [[r for r in group if keep("calls", r)] for group in links.get("calls", [])]
    if chosen["inherits"]:
        writer.write_inheritance_links(chosen["inherits"], [], imports_map)
    writer.write_implements_links(chosen["implements"])
    writer.write_embeds_links(chosen["embeds"])
    writer.write_companion_of_links(chosen["companion"])
    writer.write_partial_of_links(chosen["partial"])
    writer.write_part_of_links(chosen["part_of"])
    writer.write_metaclass_links(chosen["metaclass"])
    writer.write_decorated_by_links(chosen["decorated"])
    writer.write_binds_links(chosen["binds"])
    writer.write_previews_links(chosen["previews"])
    if any(groups):
        writer.write_function_call_groups(*groups)
    return sum(len(v) for v in chosen.values()) + sum(len(g) for g in groups)


def module_import_rows(data: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The rows add_file_to_graph MERGEs into Module nodes with coalesce(lang, full_import_name),
    built exactly as cgc 0.6.13's writer builds them (JS/TS imports set no Module metadata)."""
    from codegraphcontext.tools.indexing.persistence.writer import sort_import_rows_for_metadata

    lang = data.get("lang")
    if lang in {"javascript", "typescript", "tsx"}:
        return []
    rows = []
    for imp in data.get("imports", []):
        if lang == "python" and imp.get("source"):
            name = imp.get("source")
        else:
            name = imp.get("name") or imp.get("source") or imp.get("full_import_name")
        if not name:
            continue
        rows.append({
            "name": name,
            "full_import_name": imp.get("full_import_name") or imp.get("source") or name,
            "imported_name": imp.get("imported_name") or imp.get("name") or name,
            "alias": imp.get("alias"),
            "line_number": imp.get("line_number") or 0,
            "lang": imp.get("lang") or lang,
        })
    return sort_import_rows_for_metadata(rows)


def module_metadata(files: Dict[str, FileEntry], names: Set[str], row_by_row: bool) -> Dict[str, Tuple[Any, Any]]:
    """What a full index leaves on each Module: files are written in path order, and the first file
    that sets a value keeps it (coalesce). Within one file it depends on the backend: cgc's Kùzu
    adapter runs that UNWIND row by row, so the file's first row wins; FalkorDB evaluates the batch
    against the value before the query, so the file's last row wins."""
    result: Dict[str, List[Any]] = {name: [None, None] for name in names}
    for path in sorted(files):
        data = files[path].data
        if "error" in data:
            continue
        before = {name: list(slot) for name, slot in result.items()}
        for row in module_import_rows(data):
            slot = result.get(row["name"])
            if slot is None:
                continue
            for index, key in ((0, "lang"), (1, "full_import_name")):
                if row_by_row:
                    slot[index] = slot[index] if slot[index] is not None else row[key]
                elif before[row["name"]][index] is None:
                    slot[index] = row[key]
    return {name: (v[0], v[1]) for name, v in result.items()}


# ---------------------------------------------------------------------------------------------
# The engine.


class Engine:
    def __init__(self, root: Path, cache_dir: Optional[Path], context: Optional[str], version: str):
        self.root = root
        self.version = version
        self.db = Database(root, context)
        self.tree = Tree(root, self.db.ctx.cgcignore_path)
        self.state = TreeState()
        self.cache_file = (cache_dir / (hashlib.sha1(root.as_posix().encode()).hexdigest() + ".pickle")) if cache_dir else None
        self.diverged = False
        self.pending: Set[str] = set()
        self.cache_dirty = False
        self.cached_state: Optional[TreeState] = None

    # -- start --------------------------------------------------------------------------------
    def start(self) -> Dict[str, Any]:
        start = time.monotonic()
        cached = self.load_cache()
        files: Dict[str, FileEntry] = {}
        hits = 0
        for path in self.tree.discover():
            known = digest_of(path)
            hit = cached.get(path.as_posix())
            if hit is not None and (hit.size, hit.mtime_ns, hit.digest) == known:
                files[path.as_posix()] = hit
                hits += 1
            else:
                files[path.as_posix()] = self.tree.parse(path, known)
        if self.cached_state is not None and self.cached_state.files.keys() == files.keys() and all(
            self.cached_state.files[p].digest == e.digest for p, e in files.items()
        ):
            # Same tree, same contents: the resolved rows saved with it are what resolving would give.
            self.state = TreeState(files, self.cached_state.imports_map, self.cached_state.links, self.cached_state.owned)
        else:
            imports_map = self.tree.merge_imports(files)
            links = self.tree.resolve(files, imports_map)
            self.state = TreeState(files, imports_map, links, rows_by_owner(links))
        self.cached_state = None
        self.save_cache()
        marker = self.dirty_marker()
        self.diverged = marker is not None and marker.exists()
        return {"files": len(files), "startMs": ms_since(start), "warm": hits > 0, "cached": hits,
                "diverged": self.diverged}

    def dirty_marker(self) -> Optional[Path]:
        return self.cache_file.with_suffix(".dirty") if self.cache_file else None

    def load_cache(self) -> Dict[str, FileEntry]:
        if self.cache_file is None or not self.cache_file.exists():
            return {}
        try:
            with self.cache_file.open("rb") as handle:
                blob = pickle.load(handle)
            if blob.get("cgc") == self.version and blob.get("root") == self.root.as_posix():
                self.db.binder_failures.update(blob.get("binder_failures", {}))
                self.cached_state = blob.get("state")
                return blob["state"].files
        except Exception as error:  # noqa: BLE001 - a bad cache is a cold start, never a failure
            log(f"cache ignored: {error}")
        return {}

    def save_cache(self) -> None:
        self.cache_dirty = False
        if self.cache_file is None:
            return
        self.cache_file.parent.mkdir(parents=True, exist_ok=True)
        temp = self.cache_file.with_suffix(".tmp")
        with temp.open("wb") as handle:
            pickle.dump({"cgc": self.version, "root": self.root.as_posix(), "state": self.state,
                         "binder_failures": self.db.binder_failures}, handle, protocol=pickle.HIGHEST_PROTOCOL)
        temp.replace(self.cache_file)

    # -- update -------------------------------------------------------------------------------
    def plan(self, paths: List[str]) -> Tuple[TreeState, Set[str], Set[str], Set[str]]:
        """The tree after the change, from the disk: (new state, changed, removed, added)."""
        old = self.state.files
        current = {p.as_posix(): p for p in self.tree.discover()}
        requested = [norm(p) for p in paths]
        dirs = [p for p in requested if Path(p).is_dir()]
        removed = set(old) - set(current)
        added = set(current) - set(old)
        modified: Set[str] = set()
        files = {p: e for p, e in old.items() if p in current}
        # A requested path is rewritten even when its content equals what the engine holds: the engine may
        # have read it after the change (it started after it, or the change raced its start), so what it
        # holds says nothing about what the graph holds.
        for path in set(current) & set(old):
            if path in requested or any(path.startswith(d + "/") for d in dirs):
                known = digest_of(current[path])
                entry = old[path]
                modified.add(path)
                if known[2] != entry.digest:
                    files[path] = self.tree.parse(current[path], known)
                elif known[:2] != (entry.size, entry.mtime_ns):
                    files[path] = FileEntry(known[0], known[1], known[2], entry.data, entry.imports)
        # Likewise a requested path gone from the disk that the engine never held: the graph may still have it.
        removed |= {p for p in requested if p not in current and p not in old and not Path(p).is_dir()}
        for path in added:
            files[path] = self.tree.parse(current[path], digest_of(current[path]))
        changed = removed | added | modified
        if not changed:
            return TreeState(files, self.state.imports_map, self.state.links, self.state.owned), changed, removed, added
        imports_map = self.tree.merge_imports(files)
        links = self.tree.resolve(files, imports_map)
        return TreeState(files, imports_map, links, rows_by_owner(links)), changed, removed, added

    def update(self, paths: List[str]) -> Dict[str, Any]:
        # Paths of an update that did not commit (BUSY, FAILED) are kept and tried again with the next.
        self.pending.update(paths)
        answer = self.apply_update(sorted(self.pending))
        if answer.get("ok"):
            self.pending.clear()
        return answer

    def apply_update(self, paths: List[str]) -> Dict[str, Any]:
        if self.diverged:
            return {"ok": False, "code": "DIVERGED", "reason": "an earlier update left the graph unknown; rebuild"}
        start = time.monotonic()
        new, changed, removed, added = self.plan(paths)
        resolve_ms = ms_since(start)
        if not changed:
            self.state = new
            return {"ok": True, "written": [], "removed": [], "ms": ms_since(start), "lockMs": 0, "openMs": 0,
                    "resolveMs": resolve_ms, "resolved": 0}
        old_owned, new_owned = self.state.owned, new.owned
        rewritten = {f for f in new.files if f not in changed and old_owned.get(f) != new_owned.get(f)}
        present_changed = sorted(changed & set(new.files))
        names: Set[str] = set()
        for path in changed:
            for entry in (self.state.files.get(path), new.files.get(path)):
                if entry is not None and "error" not in entry.data:
                    names.update(row["name"] for row in module_import_rows(entry.data))
        metadata = module_metadata(new.files, names, row_by_row=self.db.embedded)
        repo_name = self.root.name
        root_str = self.root.as_posix()

        def keep(kind: str, row: Dict[str, Any]) -> bool:
            owner_key, target_key = LINK_KEYS[kind]
            owner = norm(row.get(owner_key))
            if owner in changed or owner in rewritten:
                return True
            return not SKIP_INCOMING and norm(row.get(target_key)) in changed

        def work(writer: Any) -> None:
            writer.add_repository_to_graph(self.root, False)
            # Files whose link edges in the graph point into a changed file: their rows may have pointed
            # there before and point elsewhere now, which the rows the engine holds cannot tell.
            rewritten.update(self.linked_into(writer, sorted(changed), set(new.files)) - changed)
            for path in sorted(changed & (set(self.state.files) | removed)):
                writer.delete_file_from_graph(path)
            for path in present_changed:
                data = new.files[path].data
                if "error" not in data:
                    writer.add_file_to_graph(data, repo_name, new.imports_map, repo_path_str=root_str)
                elif not data.get("unsupported"):
                    writer.add_minimal_file_node(Path(path), self.root, False)
            self.delete_outgoing_links(writer, sorted(rewritten))
            write_links(writer, new.links, new.imports_map, keep)
            self.reset_modules(writer, metadata)
            # These repo-wide passes match classes by name in any file, so any change can add an
            # edge to them: they run again whenever the tree has what they link (MERGE, idempotent).
            if any(Path(p).suffix in CPP_SOURCES for p in new.files):
                writer.write_cpp_class_function_links(root_str)
            if any(Path(p).suffix == ".java" for p in new.files):
                self.rewrite_java_passes(writer, new)

        def purge(writer: Any) -> None:
            writer._purge_dangling_pathless_nodes()

        try:
            open_ms = self.db.open()
        except Busy as error:
            return {"ok": False, "code": "BUSY", "reason": str(error)[:500]}
        lock_start = time.monotonic()
        # Without transactions (FalkorDB) an update stopped halfway leaves the graph unknown; the
        # marker outlives this process so the next session says so ("diverged" in its ready line).
        marker = self.dirty_marker()
        if marker is not None and not self.db.embedded:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("an update did not finish\n", encoding="utf-8")
        try:
            info = self.db.write_transaction(work)
        except Exception as error:  # noqa: BLE001 - answered, and the state says what it knows
            if not self.db.embedded:
                self.diverged = True
                return {"ok": False, "code": "DIVERGED", "reason": f"{error}"[:500]}
            return {"ok": False, "code": "FAILED", "reason": f"{error}"[:500]}  # rolled back
        self.state = new
        try:
            # cgc's purge of unreferenced Module/ExternalClass nodes runs in its own transaction: inside
            # the one that deleted and re-created their incoming edges, Kùzu 0.11.3's
            # `NOT ()-[]->(n)` still saw them as unreferenced and deleted live nodes.
            self.db.write_transaction(purge)
        except Exception as error:  # noqa: BLE001 - the update is in; what is left over is not known
            self.diverged = True
            return {"ok": False, "code": "DIVERGED", "reason": f"purge failed: {error}"[:500]}
        lock_ms = ms_since(lock_start)
        if marker is not None and not self.db.embedded:
            marker.unlink(missing_ok=True)
        return {
            "ok": True,
            "written": present_changed,
            "removed": sorted(removed),
            "ms": ms_since(start),
            "lockMs": lock_ms,
            "openMs": open_ms,
            "resolveMs": resolve_ms,
            "resolved": len(new.files),
            "rewritten": len(rewritten),
            "attempts": info.get("attempts", 1),
        }

    @staticmethod
    def linked_into(writer: Any, paths: List[str], known: Set[str]) -> Set[str]:
        """Files owning a link edge (CALLS, INHERITS, ...) that ends in one of `paths`, as the graph has them."""
        owners: Set[str] = set()
        if not paths:
            return owners
        with writer.driver.session() as session:
            for rel in LINK_TYPES:
                try:
                    rows = session.run(
                        f"UNWIND $paths AS p MATCH (a)-[r:{rel}]->(b) WHERE b.path = p RETURN DISTINCT a.path AS owner",
                        paths=paths,
                    )
                    owners.update(norm(row["owner"]) for row in rows if row["owner"])
                except Exception as error:  # noqa: BLE001 - a type the schema lacks has no such edges
                    if "not exist" not in str(error) and "Binder" not in str(error):
                        raise
        return owners & known

    @staticmethod
    def delete_outgoing_links(writer: Any, paths: List[str]) -> None:
        if not paths:
            return
        with writer.driver.session() as session:
            for rel in LINK_TYPES:
                session.run(f"UNWIND $paths AS p MATCH (a)-[r:{rel}]->() WHERE a.path = p DELETE r", paths=paths)

    @staticmethod
    def reset_modules(writer: Any, metadata: Dict[str, Tuple[Any, Any]]) -> None:
        with writer.driver.session() as session:
            for name, (lang, full) in sorted(metadata.items()):
                sets = []
                params: Dict[str, Any] = {"name": name}
                for prop, value in (("lang", lang), ("full_import_name", full)):
                    if value is None:
                        sets.append(f"m.{prop} = NULL")
                    else:
                        sets.append(f"m.{prop} = ${prop}")
                        params[prop] = value
                session.run(f"MATCH (m:Module {{name: $name}}) SET {', '.join(sets)}", **params)

    @staticmethod
    def rewrite_java_passes(writer: Any, state: TreeState) -> None:
        """The pipeline's Spring and ORM passes match by name across files: run them whole again."""
        data = Tree.parsed(state.files)
        injections = [i for fd in data for i in fd.get("spring_injections") or []]
        if injections:
            writer.write_spring_inject_links(injections)
        endpoints = [
            {"func_name": fn["name"], "path": fn["path"], "line_number": fn["line_number"],
             "http_method": fn.get("http_method"), "http_path": fn.get("http_path")}
            for fd in data for fn in fd.get("functions", []) if fn.get("http_method")
        ]
        if endpoints:
            writer.write_spring_endpoint_properties(endpoints)
        orm = [m for fd in data for m in fd.get("orm_mappings") or []]
        if orm:
            writer.write_orm_mappings(orm)
            writer.write_query_links(orm)
            writer.write_spring_data_repo_links(orm)

    # -- verify -------------------------------------------------------------------------------
    def verify(self, paths: List[str]) -> Dict[str, Any]:
        try:
            self.db.open()
        except Busy as error:
            return {"ok": False, "code": "BUSY", "reason": str(error)[:500]}
        current = {p.as_posix() for p in self.tree.discover()}
        reflected, unreflected = [], []
        for path in (norm(p) for p in paths):
            entry = self.state.files.get(path)
            indexable = path in current and entry is not None and not entry.data.get("unsupported")
            exists = bool(self.db.read("MATCH (f:File {path: $p}) RETURN f.path AS p", p=path))
            ok = exists == indexable
            if ok and indexable and Path(path).is_file() and digest_of(Path(path))[2] != entry.digest:
                ok = False  # the disk moved on since the engine last saw it
            if ok and indexable:
                for label, key in (("Function", "functions"), ("Class", "classes")):
                    graph = sorted(r["n"] for r in self.db.read(
                        f"MATCH (f:File {{path: $p}})-[:CONTAINS]->(x:{label}) RETURN x.name AS n", p=path))
                    disk = sorted(item["name"] for item in entry.data.get(key, []))
                    ok = ok and graph == disk
            (reflected if ok else unreflected).append(path)
        return {"ok": True, "reflected": reflected, "unreflected": unreflected}


# ---------------------------------------------------------------------------------------------
# The canonical dump: the repository's subgraph, one sorted line per node and per edge.

VOLATILE = {"_id", "_label", "_src", "_dst", "uid", "indexed_at"}
IDENTITY = ("path", "name", "line_number", "occurrence_index", "function_line_number")


def _props(value: Any) -> Tuple[str, Dict[str, Any]]:
    if isinstance(value, dict):  # KùzuDB
        return str(value.get("_label")), {k: v for k, v in value.items() if k not in VOLATILE and v is not None}
    labels = getattr(value, "labels", None)  # FalkorDB node
    label = labels[0] if labels else getattr(value, "relation", "?")
    return str(label), {k: v for k, v in (value.properties or {}).items() if k not in VOLATILE and v is not None}


def canonical_dump(db: Database, root: Path) -> List[str]:
    """Nodes and edges are rendered from their properties only. Internal ids are not used even to
    join: right after a write transaction Kùzu 0.11.3 answered `MATCH (n) RETURN n` and
    `MATCH (a)-[e]->(b)` with ids that did not agree, in the same process."""
    root_str = root.as_posix()

    def render(props: Dict[str, Any]) -> str:
        return json.dumps(props, sort_keys=True, default=str, ensure_ascii=False).replace(root_str, "<root>")

    def in_repo(props: Dict[str, Any]) -> bool:
        path = props.get("path")
        return isinstance(path, str) and (path == root_str or path.startswith(root_str + "/"))

    def ident(label: str, props: Dict[str, Any]) -> str:
        return f"{label}{render({k: props[k] for k in IDENTITY if k in props})}"

    lines: List[str] = []
    for record in db.read("MATCH (n) RETURN n"):
        label, props = _props(record["n"])
        if in_repo(props):
            lines.append(f"N {label} {render(props)}")
    pathless: Set[str] = set()
    for record in db.read("MATCH (a)-[e]->(b) RETURN a, e, b"):
        (a_label, a), (e_label, e), (b_label, b) = _props(record["a"]), _props(record["e"]), _props(record["b"])
        if not (in_repo(a) or in_repo(b)):
            continue
        lines.append(f"E {e_label} {ident(a_label, a)} -> {ident(b_label, b)} {render(e)}")
        for label, props in ((a_label, a), (b_label, b)):
            if "path" not in props:
                pathless.add(f"N {label} {render(props)}")
    return sorted(lines + sorted(pathless))


def write_dump(db: Database, root: Path, out: Optional[str]) -> int:
    lines = canonical_dump(db, root)
    text = "".join(line + "\n" for line in lines)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        _PROTOCOL.write(text)
        _PROTOCOL.flush()
    return len(lines)


# ---------------------------------------------------------------------------------------------
# serve: the JSON-lines loop, letting go of the database when idle.


class Stop(Exception):
    pass


def serve(args: argparse.Namespace, version: str) -> int:
    root = Path(args.root).resolve()
    engine = Engine(root, Path(args.cache_dir).resolve() if args.cache_dir else None, args.context, version)
    if engine.db.backend not in PROVEN_BACKENDS:
        refuse(f"backend {engine.db.backend} is not one the engine was proven on ({', '.join(sorted(PROVEN_BACKENDS))})")
    facts = engine.start()
    emit({"event": "ready", "cgcVersion": version, "backend": engine.db.backend, **facts})

    def on_signal(signum: int, _frame: Any) -> None:
        raise Stop(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    stdin = sys.stdin.buffer.raw if hasattr(sys.stdin.buffer, "raw") else sys.stdin.buffer
    buffer = b""
    close_at: Optional[float] = None
    try:
        while True:
            timeout = None if close_at is None else max(0.0, close_at - time.monotonic())
            ready, _, _ = select.select([stdin], [], [], timeout)
            if not ready:
                engine.db.close()
                close_at = None
                if engine.cache_dirty:
                    engine.save_cache()
                continue
            chunk = os.read(stdin.fileno(), 1 << 16)
            if not chunk:
                return 0
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if not line.strip():
                    continue
                if handle(engine, line) == "shutdown":
                    return 0
                close_at = time.monotonic() + args.hold_ms / 1000
    except Stop as stop:
        log(f"stopping on {stop}")
        return 0
    finally:
        engine.db.close()
        try:
            engine.save_cache()
        except Exception as error:  # noqa: BLE001 - a cache is never worth a failed exit
            log(f"cache not saved: {error}")


def handle(engine: Engine, line: bytes) -> Optional[str]:
    request: Dict[str, Any] = {}
    try:
        request = json.loads(line)
        op = request.get("op")
        if op == "update":
            answer = engine.update(list(request.get("paths") or []))
            # Saved when idle, not before answering: pickling a large tree costs time the caller waits.
            engine.cache_dirty = engine.cache_dirty or bool(answer.get("ok"))
        elif op == "verify":
            answer = engine.verify(list(request.get("paths") or []))
        elif op == "dump":
            try:
                engine.db.open()
                answer = {"ok": True, "lines": write_dump(engine.db, engine.root, request["out"])}
            except Busy as error:
                answer = {"ok": False, "code": "BUSY", "reason": str(error)[:500]}
        elif op == "rebuilt":
            # The caller rebuilt the graph with a full index: the tree on disk is the truth again.
            marker = engine.dirty_marker()
            if marker is not None:
                marker.unlink(missing_ok=True)
            engine.pending.clear()
            answer = {"ok": True, **engine.start()}
        elif op == "shutdown":
            emit({"id": request.get("id"), "ok": True})
            return "shutdown"
        else:
            answer = {"ok": False, "code": "FAILED", "reason": f"unknown op {op!r}"}
    except Stop:
        raise
    except Exception as error:  # noqa: BLE001 - one bad request is answered, not fatal
        log(f"request failed: {error!r}")
        answer = {"ok": False, "code": "FAILED", "reason": f"{error}"[:500]}
    emit({"id": request.get("id"), **answer})
    return None


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="pi_cgc_engine")
    sub = parser.add_subparsers(dest="command", required=True)
    serve_p = sub.add_parser("serve")
    serve_p.add_argument("--root", required=True)
    serve_p.add_argument("--cache-dir")
    serve_p.add_argument("--hold-ms", type=int, default=1000)
    serve_p.add_argument("--context")
    dump_p = sub.add_parser("dump")
    dump_p.add_argument("--root", required=True)
    dump_p.add_argument("--out")
    dump_p.add_argument("--context")
    args = parser.parse_args(argv)
    version = load_cgc()
    if args.command == "serve":
        return serve(args, version)
    root = Path(args.root).resolve()
    db = Database(root, args.context)
    try:
        db.open()
        count = write_dump(db, root, args.out)
        log(f"{count} lines")
        return 0
    except Busy as error:
        log(f"BUSY: {error}")
        return 2
    finally:
        db.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
