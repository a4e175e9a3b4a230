"""The engine's kept file extensions (link_rows.suffixes_after).

The files' extensions decide which repository-wide passes an update runs (C/C++ and Java have one). The engine
keeps them from update to update instead of reading every file's extension again: after any mix of files added
and removed they must be the extensions the files then have.
"""

from __future__ import annotations

import os
import random
from typing import Any, Dict, FrozenSet, List, Optional

from pi_cgc_engine.link_rows import suffixes_after

NAMES = ["a.py", "b.py", "c.java", "d.cpp", "e.h", "Makefile", "f.tar.gz", "g.py", "h.java", "pkg.v2/i"]


def test_kept_extensions_are_the_files_extensions_after_every_mix_of_files_added_and_removed() -> None:
    rng = random.Random(12)
    files: Dict[str, Any] = {}
    kept: Optional[FrozenSet[str]] = None
    wrong: List[Dict[str, Any]] = []
    mixed_steps = 0
    for step in range(400):
        added = {f"/r/{rng.randrange(20)}/{rng.choice(NAMES)}" for _ in range(rng.randrange(3))} - files.keys()
        removed = {p for p in files if rng.random() < 0.15}
        for p in removed:
            del files[p]
        for p in sorted(added):  # a set's order follows the process's string hashing; the steps must not
            files[p] = None
        kept = suffixes_after(kept, files, added, removed)
        whole = frozenset(os.path.splitext(p)[1] for p in files)
        if kept != whole:
            wrong.append({"step": step, "kept": sorted(kept), "whole": sorted(whole)})
        mixed_steps += len(whole) > 1
    assert wrong[:3] == []
    assert mixed_steps > 200  # the steps did mix extensions, so the check above had something to check
