"""A new linked worktree's graph from its main checkout's: the main checkout's graph copied with its paths moved,
the engine's warm-start cache taken over with the same move, then the files that differ applied as one update.

  python pi-cgc-engine.py [--cache-dir D] index ROOT --context NAME --from-main MAIN --main-cache-dir D2

Used only where the main checkout's graph is current: its cache (in D2) is the graph's model (no untrusted or
dirty marker beside it, nothing wrote the graph after it), saved for the same cgc, layout and backend. Anything
else, and any failure before the copy commits, leaves the new context empty and pi-cgc's full index runs instead
(indexer.index_command); a failure after it has the copy deleted first. Nothing of the main checkout is written.

Steps, each timed on the last line:
1. Export (a forked copy of this process, forked before any database manager exists: cgc's managers are one per
   process). It opens the main checkout's database with cgc's manager and writes every node table and every
   (relationship, FROM, TO) table to a Parquet file in a private folder, with `path` and `uid` moved in the query
   itself. A uid is cgc's concatenation of name, path, line and occurrence; a node whose uid is not that shape
   (a missing part, cgc's fallback hash) makes the whole copy refused.
2. State (here, meanwhile). The cache's pickle with each string that is the main root, or starts with it and a
   slash, rewritten in the byte stream (its length and frame fixed), then loaded as the cache is. Every
   occurrence of the main root's bytes must be such a string, or the state is refused. About ten times faster
   than walking the loaded state (0.3 s against 3 s at 1 000 files).
3. Load: the new context's database must be empty; each file is `COPY`ed, in one transaction; then the
   Repository node gets the worktree's name, commit and stamp, as a full index sets them.
4. Update: the engine starts from the moved state, trusted (it is what the graph now holds), and applies every
   file of the worktree whose content differs from the state's (each file's content compared: what git calls
   changed, untracked files, and what git ignores but cgc indexes), plus the files that came or went. It also
   resolves again the files whose links depend on the folder's name (root_sensitive, below).
5. Checkpoint: KùzuDB's, and the call edges' `args` it moved between rows written again (kuzu_lists).

KùzuDB only: on the other backends the full index runs (said on stderr)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import struct
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from . import bulk_kuzu
from . import cgc_contract as cgc
from .cache import CACHE_FORMAT, WRITTEN_ELSEWHERE, not_private, private_loads
from .files import digest_of
from .graph_profiles import KUZU, KUZU_NODE_TABLES, KUZU_PRIMARY_KEYS, KUZU_REL_TABLES, KUZU_UID_PARTS
from .protocol import log, ms_since, plural

if TYPE_CHECKING:
    from .engine import Engine


class NotRelocatable(Exception):
    """The main checkout's graph or cache cannot be taken over: the full index runs instead."""


# -- the main checkout's cache ------------------------------------------------------------------------------------

def main_cache_file(main_root: Path, main_cache_dir: Path) -> Path:
    """The engine's cache file of `main_root` (Engine.cache_file's name)."""
    return main_cache_dir / (hashlib.sha1(main_root.as_posix().encode()).hexdigest() + ".pickle")


def read_main_cache(main_root: Path, main_cache_dir: Path) -> bytes:
    """The main checkout's cache, as bytes, if it is the graph's model; else NotRelocatable saying why."""
    cache = main_cache_file(main_root, main_cache_dir)
    if not cache.exists():
        raise NotRelocatable(f"the main checkout has no engine cache ({cache})")
    for path, kind in ((main_cache_dir, "folder"), (cache, "file")):
        why = not_private(path, kind)
        if why is not None:
            raise NotRelocatable(f"the main checkout's cache is not private: {why}")
    for marker, meaning in ((cache.with_suffix(".untrusted"), "may not be what its graph holds"),
                            (cache.with_suffix(".dirty"), "has an update of unknown outcome"),
                            (main_cache_dir / WRITTEN_ELSEWHERE, "was written by something else since")):
        if marker.exists():
            raise NotRelocatable(f"the main checkout's graph {meaning} ({marker.name})")
    return cache.read_bytes()


# -- the state: the pickle's strings moved -------------------------------------------------------------------------

_FRAME = 0x95
_UNFRAMED = {ord("X"): 4, 0x8D: 8, ord("B"): 4, 0x8E: 8, 0x96: 8}  # large payloads the pickler writes outside frames


def relocate_pickle(data: bytes, old: str, new: str) -> bytes:
    """The pickle `data` with every string equal to `old`, or starting with `old` + "/", starting with `new`
    instead. Walks the frames (protocol 4 and later), rewrites the string opcodes inside each, and fixes each frame's
    length. NotRelocatable when a frame is not where it should be, or when `old`'s bytes occur anywhere but at the
    start of such a string."""
    old_b, new_b = old.encode(), new.encode()
    if data[:1] != b"\x80" or len(data) < 2 or data[1] < 4:
        raise NotRelocatable("the cache is not a framed pickle")
    out = [data[:2]]
    moved = 0

    def move(chunk: bytes) -> bytes:
        """A frame's opcodes with the strings moved. A string's opcode is SHORT_BINUNICODE (0x8c, a length byte)
        or, inside a frame (under 64 KiB), BINUNICODE ('X', a 4-byte length whose upper two bytes are 0)."""
        nonlocal moved
        parts: List[bytes] = []
        last = 0
        for found in re.finditer(re.escape(old_b), chunk):
            at = found.start()
            if at >= 2 and chunk[at - 2] == 0x8C:
                head, length = at - 2, chunk[at - 1]
            elif at >= 5 and chunk[at - 5] == 0x58 and chunk[at - 2:at] == b"\0\0":
                head, length = at - 5, struct.unpack("<I", chunk[at - 4:at])[0]
            else:
                continue  # counted below as an occurrence not moved
            rest = length - len(old_b)
            if head < last or rest < 0 or (rest > 0 and chunk[found.end():found.end() + 1] != b"/"):
                continue
            size = rest + len(new_b)
            parts += [chunk[last:head], b"\x8c" + bytes([size]) if size < 256 else b"X" + struct.pack("<I", size), new_b]
            last = found.end()
            moved += 1
        parts.append(chunk[last:])
        return b"".join(parts)

    at = 2
    while at < len(data):
        opcode = data[at]
        if opcode == _FRAME:
            size = struct.unpack("<Q", data[at + 1:at + 9])[0]
            body = move(data[at + 9:at + 9 + size])
            out.append(bytes([_FRAME]) + struct.pack("<Q", len(body)) + body)
            at += 9 + size
        elif opcode in _UNFRAMED:
            width = _UNFRAMED[opcode]
            size = int.from_bytes(data[at + 1:at + 1 + width], "little")
            payload = data[at:at + 1 + width + size]
            if old_b in payload:
                raise NotRelocatable("a large value of the cache holds the main root")
            out.append(payload)
            at += 1 + width + size
        elif at == len(data) - 1 and opcode == ord("."):
            out.append(b".")
            at += 1
        else:
            raise NotRelocatable(f"the cache's pickle has opcode {opcode:#x} outside a frame at {at}")
    found = data.count(old_b)
    if moved != found:
        raise NotRelocatable(f"{found - moved} of {found} occurrences of the main root in the cache are not paths")
    return b"".join(out)


def moved_state(data: bytes, main_root: Path, root: Path, version: str, backend: str) -> Dict[str, Any]:
    """The cache blob of the main checkout, its paths moved to `root`, checked as load_cache checks a cache."""
    blob = private_loads(relocate_pickle(data, main_root.as_posix(), root.as_posix()))
    if not isinstance(blob, dict):
        raise NotRelocatable("the main checkout's cache holds no state")
    found = (blob.get("cgc"), blob.get("root"), blob.get("format"), blob.get("backend"))
    if found != (version, root.as_posix(), CACHE_FORMAT, backend):
        raise NotRelocatable(f"the main checkout's cache was saved for cgc {found[0]}, layout {found[2]}, backend "
                             f"{found[3]} (here: cgc {version}, layout {CACHE_FORMAT}, backend {backend})")
    prefix = root.as_posix() + "/"
    if not all(path.startswith(prefix) for path in blob["state"].files):
        raise NotRelocatable("a file of the main checkout's cache lies outside it")
    return blob


# -- the links that depend on where the tree lies ---------------------------------------------------------------
#
# cgc resolves some calls and parents by a substring test on the candidate's absolute path: an imported name, its
# dots made slashes, found in the path (calls.py tiers 6-7, inheritance.py). A short name found in the root's own
# path ("re" in ".../repos/...") matches every candidate, so the same tree resolves differently elsewhere. Only
# the importing file's own import names are tested, so a file whose names test alike under both roots has the
# same links at both; the others are resolved again at the worktree's root.

def _under(name: str, head: str) -> Tuple[int, ...]:
    """How `name in head + rel` depends on `head` (a root and its slash): (-1,) where it is found in head, else the
    lengths k at which name[:k] ends head, so that the test is true for a rel that starts with name[k:] (or for
    one that holds name). Two heads with the same answer give the same test for every rel."""
    if name in head:
        return (-1,)
    return tuple(k for k in range(1, len(name)) if head.endswith(name[:k]) and name[k] != "/")  # rel: no leading /


def import_names(data: Dict[str, Any]) -> List[str]:
    """The strings cgc tests against candidate paths for a file: its imports' names and full names, as paths."""
    names = []
    for found in data.get("imports") or ():
        for key in ("name", "full_import_name"):
            value = found.get(key)
            if isinstance(value, str):
                names.append(value.replace(".", "/"))
    return names


def root_sensitive(files: Dict[str, Any], old_root: str, new_root: str) -> List[str]:
    """The files whose links cgc may resolve differently at `new_root` than at `old_root` (see above)."""
    heads = (old_root + "/", new_root + "/")
    differing: Dict[str, bool] = {}

    def differs(name: str) -> bool:
        if name not in differing:
            differing[name] = _under(name, heads[0]) != _under(name, heads[1])
        return differing[name]

    return sorted(path for path, entry in files.items() if any(differs(name) for name in import_names(entry.data)))


# -- the graph: exported from the main checkout's database, loaded into the new context's -----------------------

def _literal(text: str) -> str:
    if "'" in text or "\\" in text:
        raise NotRelocatable(f"the path {text!r} has a quote or a backslash")
    return f"'{text}'"


def _moved_path(expr: str, old: str, new: str) -> str:
    """Cypher: `expr` (a path) with `old` moved to `new` when it is `old` or under it."""
    o, n = _literal(old), _literal(new)
    return (f"CASE WHEN {expr} = {o} OR starts_with({expr}, {_literal(old + '/')}) "
            f"THEN concat({n}, substring({expr}, size({o}) + 1, size({expr}))) ELSE {expr} END")


def _moved_uid(var: str, old: str, new: str) -> str:
    """Cypher: a node's uid (its name, its path, then the rest) with its path moved."""
    rest = f"substring({var}.uid, size({var}.name) + size({var}.path) + 1, size({var}.uid))"
    return f"concat({var}.name, {_moved_path(f'{var}.path', old, new)}, {rest})"


def _key(var: str, label: str, old: str, new: str) -> str:
    pk = KUZU_PRIMARY_KEYS.get(label, "uid")
    if pk == "uid":
        return _moved_uid(var, old, new)
    if pk == "path":
        return _moved_path(f"{var}.path", old, new)
    return f"{var}.`{pk}`"


def _rows(result: Any) -> List[List[Any]]:
    out = []
    while result.has_next():
        out.append(result.get_next())
    return out


def export_graph(connection: Any, folder: Path, old: str, new: str) -> List[Dict[str, Any]]:
    """Every node and edge of the main checkout's KùzuDB graph into Parquet files in `folder`, paths moved.
    Returns the files in load order (node tables first), each with its table and, for an edge table, its pair."""
    files: List[Dict[str, Any]] = []
    for label, columns in KUZU_NODE_TABLES.items():
        count = _rows(connection.execute(f"MATCH (n:`{label}`) RETURN count(n)"))[0][0]
        if not count:
            continue
        if label in KUZU_UID_PARTS:
            # cgc's uid: name, path, line, occurrence concatenated; anything else cannot be moved by its path.
            rest = "substring(n.uid, size(n.name) + size(n.path) + 1, size(n.uid))"
            odd = _rows(connection.execute(
                f"MATCH (n:`{label}`) WHERE n.name IS NULL OR n.path IS NULL OR n.uid IS NULL "
                f"OR NOT starts_with(n.uid, concat(n.name, n.path)) OR contains({rest}, '__fallback_') "
                f"OR contains({rest}, '__missing_') RETURN count(n)"))[0][0]
            if odd:
                raise NotRelocatable(f"{plural(odd, label + ' node')} of the main checkout's graph have a uid that is "
                                     "not its name, path and position")
        values = []
        for column in columns:
            if column == "path":
                values.append(f"{_moved_path('n.path', old, new)} AS path")
            elif column == "uid":
                values.append(f"{_moved_uid('n', old, new)} AS uid")
            else:
                values.append(f"n.`{column}` AS `{column}`")
        target = folder / f"{len(files):03d}-{label}.parquet"
        connection.execute(f"COPY (MATCH (n:`{label}`) RETURN {', '.join(values)}) TO {_literal(str(target))}")
        files.append({"file": str(target), "table": label, "rows": count})
    for rel, (_pairs, columns) in KUZU_REL_TABLES.items():
        pairs = _rows(connection.execute(f"MATCH (a)-[r:`{rel}`]->(b) RETURN label(a), label(b), count(r)"))
        for a, b, count in pairs:
            values = [f"{_key('a', a, old, new)} AS `from`", f"{_key('b', b, old, new)} AS `to`"]
            values += [f"r.`{column}` AS `{column}`" for column in columns]
            target = folder / f"{len(files):03d}-{rel}-{a}-{b}.parquet"
            connection.execute(f"COPY (MATCH (a:`{a}`)-[r:`{rel}`]->(b:`{b}`) RETURN {', '.join(values)}) "
                               f"TO {_literal(str(target))}")
            files.append({"file": str(target), "table": rel, "pair": [a, b], "rows": count})
    return files


def load_graph(connection: Any, files: List[Dict[str, Any]], root: Path, commit_hash: Optional[str]) -> Dict[str, int]:
    """The exported files into the new context's empty database, in one transaction; then the Repository node
    as a full index of `root` leaves it (its name, its commit, a stamp of now)."""
    bulk_kuzu.check_target(connection, KUZU)
    counts = {"nodes": 0, "edges": 0}
    connection.execute("BEGIN TRANSACTION")
    committed = False
    try:
        for entry in files:
            pair = entry.get("pair")
            options = f" (from='{pair[0]}', to='{pair[1]}')" if pair else ""
            connection.execute(f"COPY `{entry['table']}` FROM {_literal(entry['file'])}{options}")
            counts["edges" if pair else "nodes"] += entry["rows"]
        from datetime import datetime, timezone
        found = _rows(connection.execute(
            "MATCH (r:Repository {path: $path}) SET r.name = $name, r.indexed_at = $at, r.commit_hash = $commit "
            "RETURN count(r)", {"path": root.as_posix(), "name": root.name,
                                "at": datetime.now(timezone.utc).isoformat(), "commit": commit_hash}))
        if not found or found[0][0] != 1:
            raise NotRelocatable("the main checkout's graph has no Repository node of its root")
        connection.execute("COMMIT")
        committed = True
    finally:
        if not committed:
            try:
                connection.execute("ROLLBACK")
            except Exception:  # a transaction the failure already ended
                pass
    return counts


class Export:
    """The export, run by a forked copy of this process (see the module's docstring): fork() before anything opens a
    database manager, wait() for its files."""

    def __init__(self, main_root: Path, root: Path):
        self.main_root, self.root = main_root, root
        self.started = time.monotonic()
        self.folder = Path(tempfile.mkdtemp(prefix=f"{bulk_kuzu.FOLDER_PREFIX}{os.getpid()}-worktree-"))
        os.chmod(self.folder, 0o700)
        self.manifest = self.folder / "manifest.json"
        self.pid = os.fork()
        if self.pid == 0:
            code = 1
            try:
                code = self._child()
            finally:
                os._exit(code)

    def _child(self) -> int:
        from .database import Busy, Database
        try:
            db = Database(self.main_root, None)
            if db.backend != KUZU.name:
                raise NotRelocatable(f"the main checkout's graph is on {db.backend}: copied only on KùzuDB so far")
            db.open()
            try:
                with cgc.kuzu_connection(db.manager) as connection:
                    files = export_graph(connection, self.folder, self.main_root.as_posix(), self.root.as_posix())
            finally:
                db.close()
            self.manifest.write_text(json.dumps({"backend": db.backend, "files": files}), encoding="utf-8")
            return 0
        except (NotRelocatable, Busy) as error:
            self.manifest.write_text(json.dumps({"error": str(error)}), encoding="utf-8")
        except Exception as error:  # said by the parent, which falls back to the full index
            self.manifest.write_text(json.dumps({"error": f"the export failed: {error!r}"[:500]}), encoding="utf-8")
        return 1

    def wait(self) -> Tuple[List[Dict[str, Any]], int]:
        """The exported files and how long the export took (ms); NotRelocatable if it failed."""
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        took = ms_since(self.started)
        try:
            manifest = json.loads(self.manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise NotRelocatable(f"the export ended with {os.waitstatus_to_exitcode(status)} and no answer") from None
        if "error" in manifest:
            raise NotRelocatable(manifest["error"])
        return manifest["files"], took

    def cancel(self) -> None:
        """The export stopped if it still runs, and its files removed (idempotent)."""
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = 0
        shutil.rmtree(self.folder, ignore_errors=True)


def differing(engine: "Engine") -> List[str]:
    """The worktree's files whose content differs from the moved state's, and the state's files the worktree lacks
    (the plan finds files that came by its own discovery)."""
    state = engine.state.files
    found = {path.as_posix(): path for path in engine.tree.discover()}
    paths = [key for key in state if key not in found]
    for key, path in found.items():
        entry = state.get(key)
        if entry is None:
            paths.append(key)
            continue
        size, _, digest = digest_of(path)
        if size != entry.size or digest != entry.digest:
            paths.append(key)
    return sorted(paths)


def index_from_main(engine: "Engine", export: Export, main_cache: Path, version: str,
                    progress: Callable[[str], None]) -> Tuple[bool, bool]:
    """The worktree's graph from the main checkout's. Returns (done, wrote): done, the graph and the cache are the
    worktree's; else `wrote` says whether the copy is in the graph (the caller deletes it before its full index)."""
    started = time.monotonic()
    root, main_root = engine.root, export.main_root
    wrote = False
    try:
        if engine.db.backend != KUZU.name:
            raise NotRelocatable(f"the graph is on {engine.db.backend}: copied only on KùzuDB so far")
        if engine.cache_file is None:
            raise NotRelocatable("no cache folder for the worktree's engine")
        progress("from the main checkout's graph: reading its state")
        blob = moved_state(read_main_cache(main_root, main_cache), main_root, root, version, engine.db.backend)
        state_ms = ms_since(started)
        files, export_ms = export.wait()
        progress(f"from the main checkout's graph: copying {plural(sum(f['rows'] for f in files), 'row')}")
        load_start = time.monotonic()
        with cgc.kuzu_connection(engine.db.manager) as connection:
            counts = load_graph(connection, files, root, cgc.repo_commit_hash(root))
        wrote = True
        load_ms = ms_since(load_start)
        engine.db.close()
        # The copy is the graph now, and the moved state its model: the engine starts from it warm and trusted.
        engine.trust()
        engine.cache_blob, engine.cache_read_at = blob, time.monotonic()
        del blob
        engine.start()
        changed = differing(engine)
        engine.foreign_rows = frozenset(root_sensitive(engine.state.files, main_root.as_posix(), root.as_posix()))
        again = len(engine.foreign_rows)
        progress(f"from the main checkout's graph: {plural(len(changed), 'file')} differ, "
                 f"{plural(again, 'file')} to resolve again where the root's name counts")
        update_start = time.monotonic()
        answer = engine.update(changed) if changed or engine.foreign_rows else {"ok": True}
        if not answer.get("ok"):
            raise NotRelocatable(f"the update of the files that differ ended {answer.get('code')}: {answer.get('reason')}")
        update_ms = ms_since(update_start)
        mend_start = time.monotonic()
        engine.db.open()
        mended = engine.db.checkpoint()
        mend_ms = ms_since(mend_start)
        engine.db.close()
        marker = engine.dirty_marker()
        if marker is not None:
            marker.unlink(missing_ok=True)
        engine.trust()
        engine.save_cache()
        progress(f"{plural(len(engine.state.files), 'file')} from the main checkout's graph in "
                 f"{ms_since(started) / 1000:.1f} s ({counts['nodes']} nodes and {counts['edges']} edges copied; "
                 f"{plural(len(changed), 'file')} that differ applied, {again} resolved again; state {state_ms} ms, "
                 f"export {export_ms} ms, load {load_ms} ms, update {update_ms} ms ({_update_facts(answer)}), "
                 f"checkpoint {mend_ms} ms{f', {mended} call edges mended' if mended else ''})")
        return True, True
    except Exception as error:  # never data loss: the full index runs, over the copy if one was written
        why = str(error) if isinstance(error, NotRelocatable) else repr(error)
        log(f"the main checkout's graph was not taken over: {why}; pi-cgc's full index runs")
        return False, wrote and not emptied(engine)
    finally:
        export.cancel()


def _update_facts(answer: Dict[str, Any]) -> str:
    """Where the update's time went, from its answer."""
    facts = [f"{answer.get('reresolved', 0)} files resolved in {answer.get('resolveMs', 0)} ms"]
    if answer.get("bulk"):
        facts.append(f"replay {answer.get('replayMs', 0)} ms, written in bulk")
    facts.append(f"write {answer.get('lockMs', 0)} ms")
    return "; ".join(facts)


def emptied(engine: "Engine") -> bool:
    """The new context's database emptied again after a copy that was not finished (it held nothing before: the
    load checked). False if that failed too: the caller deletes the repository's graph with cgc's writer."""
    try:
        engine.db.open()
        with cgc.kuzu_connection(engine.db.manager) as connection:
            connection.execute("MATCH (n) DETACH DELETE n")
        return True
    except Exception as error:
        log(f"the copy could not be emptied ({error!r})")
        return False
