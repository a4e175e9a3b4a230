"""Parsing many files with both cores: cgc's parser in forked workers (the engine's hooks and compiled queries
come with the fork), the results pickled back in the order asked.

A worker's parse of a Python file takes 5-15 ms; sending its entry back costs a fraction of that, so a pool pays
from a few dozen files on. Below that, or where fork is not there, the files are parsed here.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, List, Optional, Tuple

if TYPE_CHECKING:
    from .files import FileEntry
    from .tree import Tree

# Fewer files than this are parsed in this process (a pool's start costs about what 30 parses do).
POOL_FROM = 64
# Files a worker takes at a time: few enough that progress moves, many enough that the queue is not the cost.
CHUNK = 16

_tree: Optional["Tree"] = None  # the tree the forked workers parse with (set before the fork)


def _parse(item: Tuple[Path, Tuple[int, int, str]]) -> "FileEntry":
    assert _tree is not None
    entry = _tree.parse(*item)
    entry.parsed = None  # not sent back: rebuilt where it is used
    return entry


def _worker_start() -> None:
    # A forked worker comes with serve's handlers, which raise Stop once on SIGTERM or SIGINT: the pool's terminate
    # then left a worker blocked on the task queue's lock, and the update waited on it for good. A worker ends on
    # SIGTERM, and leaves a Ctrl-C to the engine, which ends the pool.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def workers() -> int:
    return max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1, 8))


def parse_all(tree: "Tree", items: List[Tuple[Path, Tuple[int, int, str]]],
              done: Optional[Callable[[int], None]] = None) -> Iterator["FileEntry"]:
    """The entries of `items` (path, its size, mtime and digest), in their order; `done(n)` after each."""
    global _tree
    count = workers()
    if len(items) < POOL_FROM or count < 2 or "fork" not in multiprocessing.get_all_start_methods():
        for at, item in enumerate(items, 1):
            entry = tree.parse(*item)
            if done is not None:
                done(at)
            yield entry
        return
    _tree = tree
    try:
        with multiprocessing.get_context("fork").Pool(count, initializer=_worker_start) as pool:
            for at, entry in enumerate(pool.imap(_parse, items, CHUNK), 1):
                if done is not None:
                    done(at)
                yield entry
            # Every file parsed: the workers end at the queue's end (the pool's exit terminates them otherwise).
            pool.close()
            pool.join()
    finally:
        _tree = None
