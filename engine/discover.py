#!/usr/bin/env python3
"""How many files `cgc index <root>` would read, by cgc's own discovery and ignore rules (the cost
stated before consent). Run by cgc's own interpreter; prints one JSON line:
  {"files": N, "bytes": B, "byExtension": {".py": n, ...}}  (B: the files' total size, what the time grows with)
cgc writes a default .cgcignore into the workspace when it finds none; asked before the user agreed to any
index, this must write nothing, so the default cgc would write is read from a temporary file instead.
Any failure prints {"error": "..."} and exits 1: the confirmation then goes without a count.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional


class _NoDatabase:
    """GraphBuilder asks its manager for a driver it never uses to list its parsers."""

    def get_driver(self, graph_name: Optional[str] = None) -> None:
        return None

    def get_backend_type(self) -> str:
        return "none"


def main(root: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="pi-cgc-discover-") as scratch:
        return count(root, Path(scratch))


def count(root: Path, scratch: Path) -> int:
    import codegraphcontext.core.cgcignore as cgcignore
    from codegraphcontext.cli.config_manager import resolve_context
    from codegraphcontext.core.jobs import JobManager
    from codegraphcontext.tools.graph_builder import GraphBuilder
    from codegraphcontext.tools.indexing.discovery import discover_files_to_index

    find = cgcignore.find_cgcignore

    def find_without_writing(ignore_root: Path, explicit_path: Optional[str] = None) -> Optional[Path]:
        found = find(ignore_root, explicit_path)
        if found is not None:
            return found
        stand_in = scratch / ".cgcignore"  # what ensure_default_cgcignore would write, elsewhere
        if not stand_in.exists():
            cgcignore.ensure_default_cgcignore(stand_in, _default_patterns())
        return stand_in

    cgcignore.find_cgcignore = find_without_writing
    ctx = resolve_context(None, cwd=root)
    class ParseOnly(GraphBuilder):  # type: ignore[misc, valid-type]
        def create_schema(self, graph_name: Optional[str] = None) -> None:
            return None  # no database: only the parser table is wanted

    builder: Any = ParseOnly(_NoDatabase(), JobManager(), None)
    files, _ = discover_files_to_index(root, ctx.cgcignore_path, supported_extensions=set(builder.parsers))
    by_extension: dict[str, int] = {}
    total_bytes = 0
    for path in files:
        try:
            total_bytes += path.stat().st_size
        except OSError:
            pass  # gone since the walk: cgc would not read it either
        suffix = ".d.ts" if path.name.endswith(".d.ts") else path.suffix
        by_extension[suffix] = by_extension.get(suffix, 0) + 1
    print(json.dumps({"files": len(files), "bytes": total_bytes, "byExtension": dict(sorted(by_extension.items()))}))
    return 0


def _default_patterns() -> list[str]:
    from codegraphcontext.tools.indexing.constants import DEFAULT_IGNORE_PATTERNS

    return list(DEFAULT_IGNORE_PATTERNS)


if __name__ == "__main__":
    try:
        sys.exit(main(Path(sys.argv[1]).resolve()))
    except Exception as error:  # noqa: BLE001 - one line for the caller, never a traceback
        print(json.dumps({"error": f"{type(error).__name__}: {error}"[:500]}))
        sys.exit(1)
