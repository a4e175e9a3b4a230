"""The command line and the serve loop: JSON-lines requests, the database let go when idle, saves when idle.

  python pi-cgc-engine.py serve --root R [--cache-dir D] [--hold-ms N] [--context NAME] [--check] [--debug] …
  python pi-cgc-engine.py dump  --root R [--out FILE] [--context NAME]
  python pi-cgc-engine.py cgc ARGS…   (cgc's own command line, e.g. `index --force R`, on FalkorDB Lite with
                                     the writes of zero_safe below; refused with exit 3 on another cgc version)

serve speaks JSON lines (stdout: protocol only; logs go to stderr). First line:
  {"event":"ready","cgcVersion","backend","files","startMs","warm","cached","trusted","diverged"}
  (trusted: started from a cache that is what the graph holds; otherwise the engine compares the graph with the
  tree it read before its first write: adopt)
  or {"event":"refused","reason"} and exit 3 (another cgc version, no importable cgc, unproven backend).
Requests, one per line, each answered by one line with the same id:
  {"id","op":"update","paths":[abs…]} → {"ok":true,"stampBefore","stampAfter","written","removed","ms","lockMs",
      "openMs","resolveMs","resolveCpuMs","checkMs","resolved","reresolved","rewritten","unsure","attempts","phases"}
      | {"ok":false,"code":"BUSY"|"FAILED"|"DIVERGED"|"NO_GRAPH"|"REBUILD","reason"}
      (REBUILD: nothing written; every file's links would be written again, which a full index does faster
      here: the caller rebuilds, then says "rebuilt")
      (NO_GRAPH: the graph has no Repository node for the root, so it holds no index of it: nothing written)
      (paths of an update that did not commit are retried with the next one; resolved = files in the
      tree, reresolved = files whose links were resolved again, unsure = changed paths whose old content
      the engine never held, phases = ms per step under the lock; stampBefore/After = the Repository's
      indexed_at before and after this write: a stampBefore the caller did not see last means another
      writer came between)
  {"id","op":"verify","paths":[…]} → {"ok":true,"reflected":[…],"unreflected":[…]}
  {"id","op":"possible","targets":[{"path","name","line"}…]} → {"ok":true,"sites":[[{"path","line","caller",
      "callerLine","why","rank"}…] per target]} (each target function's possible call sites from the engine's
      parse of the tree as it last read it: engine/pi_cgc_engine/possible_calls.py; the graph is not read)
  {"id","op":"dump","out":"/abs/file"[,"dangling":true]} → {"ok":true,"lines":N}
  {"id","op":"rebuilt","unknown":[abs…]} → the caller rebuilt the graph fully: re-read the tree from the
      disk, clear DIVERGED, trust the state (what the graph holds) but for the unknown paths (changed since
      the rebuild read them: the next update treats them as an untrusted engine does)
  {"id","op":"adopt"} → an engine that started without the graph's model compares the graph with a full index of
      the tree it read and writes only what differs (adopt.py): an update's answer with "adopted" (files written
      again, files whose links alone were, stale files, modules that differed), or {"ok":true,"adopted":null} where
      the engine holds the model already, or BUSY, NO_GRAPH, REBUILD (so much differs that a full index is faster
      on KùzuDB), UNSUPPORTED (a tree whose full index the engine does not replay). An untrusted engine's first
      update adopts the same way, the change among what differs.
  {"id","op":"shutdown"} → {"ok":true}, exit 0. stdin EOF, SIGINT and SIGTERM also exit 0.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from . import cgc_contract as cgc
from .context import RUN, Options
from .database import PROVEN_BACKENDS, Busy, Database, ZeroSafeDriver
from .dump import write_dump
from .engine import Engine, lean_kept
from .files import norm
from .indexer import add_index_parser, index_command
from .memory import RECLAIM_EVERY, SAVE_IDLE_S, SAVE_POLL_S, keep_heap, release_free_memory
from .parse_store import ParseStore
from .possible_calls import Views
from .protocol import REFUSED_EXIT, Stop, emit, log, refuse, take_stdout


def serve(args: argparse.Namespace, version: str) -> int:
    root = Path(args.root).resolve()
    engine = Engine(root, Path(args.cache_dir).resolve() if args.cache_dir else None, args.context, version)
    engine.read_cache()  # while cgc chooses the database (on FalkorDB Lite, its daemon starts and loads the graph)
    if engine.db.backend not in PROVEN_BACKENDS:
        refuse(f"backend {engine.db.backend} is not one the engine was proven on ({', '.join(sorted(PROVEN_BACKENDS))})")
    facts = engine.start(adopting=True)
    keep_heap()
    release_free_memory()
    emit({"event": "ready", "cgcVersion": version, "backend": engine.db.backend, **facts})
    if RUN.parse_store is not None:
        RUN.parse_store.sweep()  # what the start wrote counts against the bound

    stopping: List[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        # Once: pi-cgc's stop sends SIGINT, then SIGTERM after a grace period, and a second Stop raised into the
        # save below would leave the graph's model unsaved (the next session then starts untrusted).
        if not stopping:
            stopping.append(signum)
            raise Stop(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    stdin = sys.stdin.buffer.raw if hasattr(sys.stdin.buffer, "raw") else sys.stdin.buffer
    buffer = b""
    close_at: Optional[float] = None
    save_at: Optional[float] = None
    requests_since_reclaim = 0
    try:
        while True:
            deadlines = [at for at in (close_at, save_at) if at is not None]
            timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            if engine.saving is not None or engine.ending:
                timeout = SAVE_POLL_S if timeout is None else min(timeout, SAVE_POLL_S)
            elif engine.pages.pending:
                timeout = 0.0
            ready, _, _ = select.select([stdin], [], [], timeout)
            engine.finish_save()
            if not ready:
                engine.reap_ended()
                if engine.saving is None and engine.pages.pending:
                    engine.pages.step()
                now = time.monotonic()
                if close_at is not None and now >= close_at:
                    engine.db.close()
                    close_at = None
                    if requests_since_reclaim >= RECLAIM_EVERY:
                        keep_heap(reclaim=True)
                        requests_since_reclaim = 0
                    release_free_memory()
                if save_at is not None and now >= save_at:
                    save_at = None
                    if engine.cache_dirty:
                        engine.save_cache_aside()
                        if engine.ending:
                            save_at = now + SAVE_POLL_S  # not begun while an overtaken copy still ends
                continue
            chunk = os.read(stdin.fileno(), 1 << 16)
            if not chunk:
                return 0
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if not line.strip():
                    continue
                engine.overtake_save()
                engine.requests += 1
                if handle(engine, line) == "shutdown":
                    return 0
                keep_heap()
                requests_since_reclaim += 1
                close_at = time.monotonic() + args.hold_ms / 1000
                save_at = time.monotonic() + max(SAVE_IDLE_S, engine.last_save_s)
    except Stop as stop:
        log(f"stopping on {stop}")
        return 0
    finally:
        # The cache first, then the database: a committed update is the graph's whatever its close does, and
        # KùzuDB's close runs its checkpoint (over a minute at 5 000 files after an update), which pi-cgc's
        # stop (SIGKILL after twice its grace period) would otherwise end before the save.
        try:
            engine.finish_save(wait=True)  # a save of what the engine holds now is let finish
            engine.reap_ended(wait=True)
            if engine.cache_dirty:
                engine.save_cache()
        except Exception as error:  # a cache is never worth a failed exit
            log(f"cache not saved: {error}")
        engine.db.close()


def handle(engine: Engine, line: bytes) -> Optional[str]:
    request: Dict[str, Any] = {}
    try:
        request = json.loads(line)
        op = request.get("op")
        if op == "update":
            answer = engine.update(list(request.get("paths") or []))
            # Saved when idle, not before answering: pickling a large tree costs time the caller waits.
            engine.cache_dirty = engine.cache_dirty or bool(answer.get("ok"))
        elif op == "adopt":
            answer = adopt_request(engine)
        elif op == "possible":
            answer = engine.possible(list(request.get("targets") or []))
        elif op == "verify":
            answer = engine.verify(list(request.get("paths") or []))
        elif op == "dump":
            try:
                engine.db.open()
                answer = {"ok": True, "lines": write_dump(engine.db, engine.root, request["out"], bool(request.get("dangling")))}
            except Busy as error:
                answer = {"ok": False, "code": "BUSY", "reason": str(error)[:500]}
        elif op == "rebuilt":
            # The caller rebuilt the graph with a full index: the tree on disk is what the graph holds.
            marker = engine.dirty_marker()
            if marker is not None:
                marker.unlink(missing_ok=True)
            engine.pending.clear()
            facts = engine.start(from_disk=True)
            engine.trust()
            engine.unknown = {norm(p) for p in request.get("unknown") or []}
            engine.save_cache()
            answer = {"ok": True, **facts, "trusted": True, "unknown": len(engine.unknown)}
        elif op == "shutdown":
            emit({"id": request.get("id"), "ok": True})
            return "shutdown"
        else:
            answer = {"ok": False, "code": "FAILED", "reason": f"unknown op {op!r}"}
    except Stop:
        raise
    except Exception as error:  # one bad request is answered, not fatal
        log(f"request failed: {error!r}")
        answer = {"ok": False, "code": "FAILED", "reason": f"{error}"[:500]}
    emit({"id": request.get("id"), **answer})
    return None


def adopt_request(engine: Engine) -> Dict[str, Any]:
    """The graph adopted by difference where the engine started without the graph's model (Engine.adopt_graph)."""
    if not engine.adoptable:
        return {"ok": True, "trusted": engine.trusted, "adopted": None}
    answer = engine.adopt_graph()
    if answer is None:
        # Compared by nothing: the state goes lean, and the first update writes every file's links again.
        engine.adoptable = False
        lean_kept(engine.state)
        engine.drop_stash()
        return {"ok": False, "code": "UNSUPPORTED", "reason": "the full index of this tree is not one the engine replays"}
    return answer


def possible_command(root: Path, context: Optional[str], version: str) -> int:
    """The tree parsed as the engine parses it, and each function's possible call sites (the graph not read)."""
    engine = Engine(root, None, context, version)
    files, _ = engine.read_tree({}, None)
    index = Views(root.as_posix()).index(files)
    for view in index.files.values():
        for (name, line) in view.functions:
            for site in index.sites(view.path, name, line):
                emit({"target": {"path": view.path, "name": name, "line": line}, **site.as_json()})
    return 0


def options_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pi-cgc-engine")
    # Before the command, so that `index`'s own arguments are cgc index's (pi-cgc puts this in front of them).
    parser.add_argument("--cache-dir", dest="index_cache_dir", help="index: the engine's cache folder, left warm")
    parser.add_argument("--parse-store", help="serve and index: the folder of each file's parse kept by its content")
    parser.add_argument("--parse-store-mb", type=int, default=1024, help="the parse store's bound (0: not used)")
    sub = parser.add_subparsers(dest="command", required=True)
    serve_p = sub.add_parser("serve", help="the incremental engine, speaking JSON lines on stdin and stdout")
    serve_p.add_argument("--root", required=True)
    serve_p.add_argument("--cache-dir")
    serve_p.add_argument("--hold-ms", type=int, default=1000, help="let go of the database after this long idle")
    serve_p.add_argument("--context")
    # For the parity harness and for comparisons (bench/): none changes what the engine writes.
    serve_p.add_argument("--check", action="store_true", help="compare every narrowed step with cgc's whole one")
    serve_p.add_argument("--debug", action="store_true", help="log CPU ms per phase")
    serve_p.add_argument("--full-indices", action="store_true", help="cgc builds its indices from every file")
    serve_p.add_argument("--parse-order-as-parsed", action="store_true", help="keep the parser's order of entries")
    serve_p.add_argument("--whole-walk", action="store_true", help="walk the whole tree at every update")
    serve_p.add_argument("--no-dir-events", action="store_true", help="read folder times instead of inotify")
    serve_p.add_argument("--order-at-once", action="store_true", help="put every owed key order right at once")
    serve_p.add_argument("--copy-state", action="store_true", help="copy the last state instead of a journal")
    serve_p.add_argument("--bulk", choices=("auto", "always", "never"), default="auto",
                         help="on KùzuDB, write an update's rows in bulk where it pays, always, or never")
    add_index_parser(sub)
    dump_p = sub.add_parser("dump", help="the canonical dump of the graph of --root")
    dump_p.add_argument("--root", required=True)
    dump_p.add_argument("--out")
    dump_p.add_argument("--dangling", action="store_true", help="also pathless nodes with no edge (a graph of this repository alone)")
    dump_p.add_argument("--context")
    possible_p = sub.add_parser("possible", help="every function's possible call sites, a JSON line each (the truth harness)")
    possible_p.add_argument("--root", required=True)
    possible_p.add_argument("--context")
    return parser


def options_of(args: argparse.Namespace) -> Options:
    return Options(check=args.check, debug=args.debug, full_indices=args.full_indices,
                   parse_order_as_parsed=args.parse_order_as_parsed, whole_walk=args.whole_walk,
                   dir_events=not args.no_dir_events, order_at_once=args.order_at_once, in_place=not args.copy_state,
                   bulk=args.bulk)


def run_cgc_zero_safe(argv: List[str]) -> int:
    """cgc's own command, in this process, with FalkorDB Lite's drivers answering through zero_safe: its index
    then links what Lite's range index would leave unlinked, and is otherwise cgc's index as it is."""
    try:
        cgc.load()
    except cgc.ContractBroken as error:
        log(f"refused: {error}")
        return REFUSED_EXIT
    cgc.wrap_falkordb_drivers(ZeroSafeDriver)
    return cgc.run_cli(argv)


def main(argv: List[str]) -> int:
    if argv[:1] == ["cgc"]:
        return run_cgc_zero_safe(argv[1:])  # cgc's own output, on stdout as when cgc runs alone
    take_stdout()
    args = options_parser().parse_args(argv)
    try:
        version = cgc.load()
    except cgc.ContractBroken as error:
        refuse(str(error))
    if args.parse_store and args.parse_store_mb > 0 and args.command in ("serve", "index"):
        RUN.parse_store = ParseStore(Path(args.parse_store).resolve(), args.parse_store_mb << 20, version,
                                     cgc.config_on("INDEX_SOURCE"))
    if args.command == "serve":
        RUN.options = options_of(args)
        return serve(args, version)
    if args.command == "index":
        return index_command(args, version)
    root = Path(args.root).resolve()
    if args.command == "possible":
        return possible_command(root, args.context, version)
    db = Database(root, args.context)
    try:
        db.open()
        count = write_dump(db, root, args.out, args.dangling)
        log(f"{count} lines")
        return 0
    except Busy as error:
        log(f"BUSY: {error}")
        return 2
    finally:
        db.close()
