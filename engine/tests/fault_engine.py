#!/usr/bin/env python3
"""pi-cgc's engine with a fault planted, for the tests: the engine as pi-cgc runs it, plus one of these.

  python engine/tests/fault_engine.py [FAULT…] serve|dump|index …   (the engine's own arguments follow the faults)

Each fault stands for something the real programs do that a test cannot bring about on demand:
  --narrow-fault     a wrong narrowing: an update resolves only the changed files again (what a bug in the
                     narrowing would do), to show that the engine's --check refuses it;
  --parse-gate PATH  cgc's parse of a file named parse_gated.py waits until PATH exists (having written
                     PATH.waiting), or raises once while PATH.fail exists, inside the try with which cgc turns a
                     parser's exception into the file's parse error: a large file's parse (seconds), and a file
                     read mid-write;
  --save-gate PATH   a save of the cache made aside waits until PATH exists, and takes it (writing its file
                     empty first): the save of a large state, which takes seconds;
  --kill-at PHASE    the index SIGKILLs itself in PHASE: `parse` (at its second file), `nodes` (after its first
                     node table was copied in), `edges` (after its first edge table): pi ending, the machine or the
                     OOM killer, at a moment a test cannot time from outside;
  --disk-full        the index's first bulk file fails to write with ENOSPC: a full disk;
  --kill-server-at PHASE:PID  the database server PID is SIGKILLed once the bulk Cypher load has written its
                     first batch of PHASE (`nodes` or `edges`): a FalkorDB or Neo4j server dying mid-load;
  --drop-edge-type TYPE  the bulk index's rows lose every edge of TYPE before they are loaded: a bug in
                     graph_rows' replay, which the index parity test must see;
  --replay-refuses   the bulk index's replay refuses the tree at its second file (NotReplicable): a value the
                     replay does not model (a type KùzuDB would cast, a NULL key), found only once the files are
                     being written.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, List, Optional, Set

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pi_cgc_engine import engine as engine_module  # noqa: E402
from pi_cgc_engine import serve  # noqa: E402
from pi_cgc_engine.cache import CacheKeeping  # noqa: E402


def wait_for(gate: Path) -> None:
    while not gate.exists():
        time.sleep(0.05)


def plant_narrow_fault() -> None:
    resolve_tree = engine_module.resolve_tree

    def narrowed_to_changed(prev: Any, files: Any, imports_map: Any, changed: Set[str], disk_changed: bool,
                            only: Optional[Set[str]] = None, **kwargs: Any) -> Any:
        if prev is not None and only is None:
            only = {key for key in changed if key in files}
        return resolve_tree(prev, files, imports_map, changed, disk_changed, only, **kwargs)

    engine_module.resolve_tree = narrowed_to_changed  # type: ignore[assignment]


def plant_parse_gate(gate: str) -> None:
    from codegraphcontext.tools.tree_sitter_parser import TreeSitterParser

    parse = TreeSitterParser.parse

    def gated(self: Any, path: Path, *args: Any, **kwargs: Any) -> Any:
        if Path(path).name == "parse_gated.py":
            fail = Path(gate + ".fail")
            if fail.exists():
                fail.unlink()
                raise RuntimeError("a parse that failed once (the test's parse gate)")
            Path(gate + ".waiting").write_text("", encoding="utf-8")
            wait_for(Path(gate))
        return parse(self, path, *args, **kwargs)

    TreeSitterParser.parse = gated  # type: ignore[method-assign]


def plant_save_gate(gate: str) -> None:
    write_cache_aside = CacheKeeping.write_cache_aside

    def gated(self: CacheKeeping, temp: Path) -> None:
        temp.write_bytes(b"")
        wait_for(Path(gate))
        Path(gate).unlink(missing_ok=True)
        write_cache_aside(self, temp)

    CacheKeeping.write_cache_aside = gated  # type: ignore[method-assign]


def plant_kill_at(phase: str) -> None:
    from pi_cgc_engine import bulk_kuzu
    from pi_cgc_engine.tree import Tree

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    if phase == "parse":
        parse = Tree.parse
        parsed = [0]

        def parse_then_die(self: Tree, *args: Any, **kwargs: Any) -> Any:
            parsed[0] += 1
            if parsed[0] == 2:
                die()
            return parse(self, *args, **kwargs)

        Tree.parse = parse_then_die  # type: ignore[method-assign]
        return
    connection_of = bulk_kuzu.connection_of
    loaded = {"nodes": 0, "edges": 0}

    class CopyThenDie:
        """The loader's connection, dying once the first node table (or edge table) was copied in."""

        def __init__(self, conn: Any) -> None:
            self.conn = conn

        def execute(self, query: str, *args: Any, **kwargs: Any) -> Any:
            result = self.conn.execute(query, *args, **kwargs)
            if query.startswith("COPY"):
                kind = "edges" if "(from=" in query else "nodes"
                loaded[kind] += 1
                if kind == phase and loaded[kind] == 1:
                    die()
            return result

    bulk_kuzu.connection_of = lambda target: CopyThenDie(connection_of(target))  # type: ignore[assignment]


def plant_kill_server_at(value: str) -> None:
    from pi_cgc_engine import bulk_cypher

    phase, pid = value.split(":")
    run = bulk_cypher.Writer.run
    written = {"nodes": 0, "edges": 0}

    def run_then_kill(self: Any, query: str, **params: Any) -> Any:
        answer = run(self, query, **params)
        if "UNWIND $rows" in query:
            kind = "edges" if ")-[" in query else "nodes"
            written[kind] += 1
            if kind == phase and written[kind] == 1:
                os.kill(int(pid), signal.SIGKILL)
        return answer

    bulk_cypher.Writer.run = run_then_kill  # type: ignore[method-assign]


def plant_disk_full() -> None:
    from pi_cgc_engine import bulk_kuzu

    def no_space(path: str, header: Any, records: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)

    bulk_kuzu.write_csv = no_space  # type: ignore[assignment]


def plant_drop_edge_type(rel: str) -> None:
    from pi_cgc_engine import graph_rows

    build_graph = graph_rows.build_graph

    def without(*args: Any, **kwargs: Any) -> Any:
        rows = build_graph(*args, **kwargs)
        rows.edges.pop(rel, None)
        return rows

    graph_rows.build_graph = without  # type: ignore[assignment]


def plant_replay_refusal() -> None:
    from pi_cgc_engine import graph_rows

    build_graph = graph_rows.build_graph

    def refusing(*args: Any, **kwargs: Any) -> Any:
        whole = kwargs.get("whole", lambda fd: fd)
        asked = [0]

        def whole_then_refuse(fd: Any) -> Any:
            asked[0] += 1
            if asked[0] == 2:
                raise graph_rows.NotReplicable("a value the replay does not model (the test's fault)")
            return whole(fd)

        return build_graph(*args, **{**kwargs, "whole": whole_then_refuse})

    graph_rows.build_graph = refusing  # type: ignore[assignment]


def main(argv: List[str]) -> int:
    rest = list(argv)
    faults = {"--narrow-fault": 0, "--parse-gate": 1, "--save-gate": 1, "--kill-at": 1, "--disk-full": 0,
              "--drop-edge-type": 1, "--kill-server-at": 1, "--replay-refuses": 0}
    while rest and rest[0] in faults:
        flag = rest.pop(0)
        value = rest.pop(0) if faults[flag] else ""
        if flag == "--narrow-fault":
            plant_narrow_fault()
        elif flag == "--parse-gate":
            plant_parse_gate(value)
        elif flag == "--save-gate":
            plant_save_gate(value)
        elif flag == "--kill-at":
            plant_kill_at(value)
        elif flag == "--drop-edge-type":
            plant_drop_edge_type(value)
        elif flag == "--kill-server-at":
            plant_kill_server_at(value)
        elif flag == "--replay-refuses":
            plant_replay_refusal()
        else:
            plant_disk_full()
    return serve.main(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
