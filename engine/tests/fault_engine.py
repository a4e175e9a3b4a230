#!/usr/bin/env python3
"""pi-cgc's engine with a fault planted, for the tests: the engine as pi-cgc runs it, plus one of these.

  python engine/tests/fault_engine.py [--narrow-fault] [--parse-gate PATH] [--save-gate PATH] serve|dump …

Each fault stands for something the real programs do that a test cannot bring about on demand:
  --narrow-fault     a wrong narrowing: an update resolves only the changed files again (what a bug in the
                     narrowing would do), to show that the engine's --check refuses it;
  --parse-gate PATH  cgc's parse of a file named parse_gated.py waits until PATH exists (having written
                     PATH.waiting), or raises once while PATH.fail exists, inside the try with which cgc turns a
                     parser's exception into the file's parse error: a large file's parse (seconds), and a file
                     read mid-write;
  --save-gate PATH   a save of the cache made aside waits until PATH exists, and takes it (writing its file
                     empty first): the save of a large state, which takes seconds.
"""

from __future__ import annotations

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


def main(argv: List[str]) -> int:
    rest = list(argv)
    while rest and rest[0].startswith("--"):
        flag = rest.pop(0)
        if flag == "--narrow-fault":
            plant_narrow_fault()
        elif flag == "--parse-gate":
            plant_parse_gate(rest.pop(0))
        elif flag == "--save-gate":
            plant_save_gate(rest.pop(0))
        else:
            raise SystemExit(f"fault_engine: unknown fault {flag}")
    return serve.main(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
