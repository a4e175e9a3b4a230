#!/usr/bin/env python3
"""How many files `cgc index <root>` would read, by cgc's own discovery and ignore rules (the cost
stated before consent). Run by cgc's own interpreter; prints one JSON line:
  {"files": N, "bytes": B, "byExtension": {".py": n, ...}}  (B: the files' total size, what the time grows with)
cgc writes a default .cgcignore into the workspace when it finds none; asked before the user agreed to any
index, this must write nothing, so the default cgc would write is read from a temporary file instead.
Any failure prints {"error": "..."} and exits 1: the confirmation then goes without a count. So does a cgc that
breaks the part of the engine's contract this script relies on (cgc_contract.load_discovery: a proven version, the
names used, find_cgcignore patchable as it is patched).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

# The engine's package beside this file (pi-cgc runs cgc's Python with PYTHONSAFEPATH=1): its cgc_contract holds
# every reach into cgc, this script's patch of cgc's ignore-file lookup among them, and checks it before the count.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from pi_cgc_engine import cgc_contract  # noqa: E402


def main(root: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="pi-cgc-discover-") as scratch:
        return count(root, Path(scratch))


def count(root: Path, scratch: Path) -> int:
    cgc_contract.load_discovery()
    # What ensure_default_cgcignore would write into the workspace goes to the scratch folder instead.
    with cgc_contract.cgcignore_found_elsewhere(scratch / ".cgcignore"):
        ctx = cgc_contract.resolve_context(None, cwd=root)
        builder: Any = cgc_contract.parse_only_builder()  # no database: only the parser table is wanted
        files, _ = cgc_contract.discover_files_to_index(root, ctx.cgcignore_path, supported_extensions=set(builder.parsers))
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


if __name__ == "__main__":
    try:
        sys.exit(main(Path(sys.argv[1]).resolve()))
    except Exception as error:  # one line for the caller, never a traceback
        print(json.dumps({"error": f"{type(error).__name__}: {error}"[:500]}))
        sys.exit(1)
