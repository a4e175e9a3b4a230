"""The engine's memory after a save aside (memory.PageReclaim; ADR 0011).

After the cache's save aside (a fork) the engine takes its memory back for writing while idle: otherwise every
page the forked copy shared stays write-protected, and the next update pays a page fault for each one it writes
first. What the user would notice is CPU: an update that costs more after each save, or an engine that burns
seconds going through KùzuDB's 8 TB reservation while the agent pauses. Page faults are counted, not timed: the
kernel's own count.
"""

from __future__ import annotations

import os
import resource
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from pi_cgc_engine.memory import PageReclaim

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the reclaim and its page counts are Linux's")


def test_memory_is_writable_again_once_reclaimed_and_kuzus_reservation_is_not_gone_through(tmp_path: Path) -> None:
    kuzu = pytest.importorskip("kuzu")
    # objects an update reads (and so writes)
    state: List[Dict[str, Any]] = [{"name": str(i), "lines": [i, i + 1]} for i in range(300_000)]
    database = kuzu.Database(str(tmp_path / "db"))  # open: KùzuDB's reservation is mapped
    connection = kuzu.Connection(database)

    def faults_of_a_pass() -> int:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        total = 0
        for entry in state:
            total += entry["lines"][0]
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    def fork_and_end() -> None:  # what a save aside leaves: a copy that shared every page, gone
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)

    faults_of_a_pass()
    settled = faults_of_a_pass()
    fork_and_end()
    after_a_fork = faults_of_a_pass()
    fork_and_end()
    pages = PageReclaim()
    pages.begin()
    span = sum(high - low for low, high in pages.ranges)
    resident = int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    while pages.pending:
        pages.step()
    after_the_reclaim = faults_of_a_pass()
    connection.close()
    database.close()
    # The fault being fixed is real here: without the reclaim, a pass after a fork faults on its pages.
    assert after_a_fork > 1_000
    assert after_the_reclaim <= settled + 10
    # What the reclaim went through is about what the process holds, not the 8 TB KùzuDB maps.
    assert span < 2 * resident + (256 << 20)
