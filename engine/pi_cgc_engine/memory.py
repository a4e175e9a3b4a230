"""The engine's memory: the cycle collector kept off its state, and pages taken back after a fork."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import gc
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Iterator, List, Optional, Tuple

from .context import RUN
from .protocol import log

# How often the loop looks whether a save made aside is done, while one is running.
SAVE_POLL_S = 0.25
# How long the engine must have had no request before it saves its cache: this, or as long as its last save
# took, whichever is longer. A save forks this process, and after a fork each page the engine writes first
# costs it a fault (and a copy while the copy lives): at 5 000 files, where a save takes about 10 s, an update
# during a save took about 600 ms of CPU instead of about 260 (ADR 0011). So a large tree is saved
# when the agent's edits pause about as long as a save takes, a small one after a second, as before.
SAVE_IDLE_S = 1.0


def spare_memory_for_a_copy() -> bool:
    """Linux, and more memory available than this process holds (a save aside may copy all of it)."""
    if sys.platform != "linux":
        return False
    try:
        rss_kb = next(int(line.split()[1]) for line in Path("/proc/self/status").read_text().splitlines()
                      if line.startswith("VmRSS:"))
        available_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                            if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return False
    return available_kb > 2 * rss_kb


class PageReclaim:
    """Gives this process its memory back for writing after a fork. The cache's save aside forks the engine;
    every page the two processes shared stays write-protected after the copy ends, so the first write to each
    costs a page fault, and an update writes to nearly every page it reads (reference counts): a pass over
    3 M small dicts took 4x its CPU once after a fork. At 5 000 files (a 4 GB state) that was the update's
    extra CPU in the engine over the same plan profiled without saves (ADR 0011). So once the copy is gone,
    the engine faults in its resident writable memory while idle, a step at a time, with
    madvise(MADV_POPULATE_WRITE) (Linux 5.14 on; no data changes). Only pages already resident (their
    present bit in /proc/self/pagemap), in mappings not mostly empty (/proc/self/smaps): a reserved range
    nothing used yet stays unallocated, and a vast one is not gone through."""

    MADV_POPULATE_WRITE = 23
    STEP_BYTES = 64 << 20

    def __init__(self) -> None:
        self.ranges: List[Tuple[int, int]] = []
        self.supported = sys.platform == "linux"
        self.page = os.sysconf("SC_PAGE_SIZE") if self.supported else 4096
        self._madvise: Any = None
        self.done_bytes = 0
        self.cpu_s = 0.0

    def begin(self) -> None:
        """After a fork's copy ended: the ranges to go through (read now: the mappings change as the engine works)."""
        if not self.supported:
            return
        self.ranges = []
        self.done_bytes = 0
        self.cpu_s = 0.0
        candidate: Optional[Tuple[int, int]] = None
        try:
            mappings = Path("/proc/self/smaps").read_text().splitlines()
        except OSError as error:
            log(f"page reclaim off: {error}")
            self.supported = False
            return
        for line in mappings:
            fields = line.split()
            if not fields:
                continue
            if not fields[0].endswith(":"):  # a mapping's first line, as in /proc/self/maps
                # Private writable memory of no file: the heap, Python's arenas, anonymous mappings.
                private = len(fields) >= 2 and fields[1] == "rw-p" and (len(fields) < 6 or fields[5] == "[heap]")
                low_text, _, high_text = fields[0].partition("-")
                candidate = (int(low_text, 16), int(high_text, 16)) if private else None
            elif fields[0] == "Rss:" and candidate is not None:
                low, high = candidate
                resident = int(fields[1]) * 1024
                # Not a reservation that is mostly empty: KùzuDB maps 8 TB while its database is open, and going
                # through its page map would cost seconds for nothing.
                if resident and (high - low <= SPARSE_BYTES or resident * 2 >= high - low):
                    self.ranges.append(candidate)
                candidate = None

    @property
    def pending(self) -> bool:
        return bool(self.ranges)

    def step(self) -> None:
        """Faults in the resident pages of up to STEP_BYTES of address space (a few ms of CPU), so a request
        arriving meanwhile waits no longer than that."""
        if not self.ranges:
            return
        started = time.process_time()
        try:
            self._step()
        finally:
            self.cpu_s += time.process_time() - started
        if not self.ranges and RUN.options.debug:
            log(f"pages taken back after a fork: {self.done_bytes >> 20} MB in {round(self.cpu_s * 1000)} CPU ms")

    def _step(self) -> None:
        low, high = self.ranges.pop()
        if high - low > self.STEP_BYTES:
            self.ranges.append((low + self.STEP_BYTES, high))
            high = low + self.STEP_BYTES
        try:
            with open("/proc/self/pagemap", "rb", buffering=0) as pagemap:
                pagemap.seek(low // self.page * 8)
                entries = pagemap.read((high - low) // self.page * 8)
        except OSError as error:
            log(f"page reclaim off: {error}")
            self.supported = False
            self.ranges = []
            return
        # Bit 63 of each 64-bit entry (the high bit of its most significant byte): the page is present.
        present = entries[7 if sys.byteorder == "little" else 0::8].translate(_PRESENT_BYTES)
        for run in re.finditer(b"1+", present):
            length = (run.end() - run.start()) * self.page
            if not self._populate(low + run.start() * self.page, length):
                return
            self.done_bytes += length

    def _populate(self, start: int, length: int) -> bool:
        if self._madvise is None:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
            self._madvise = libc.madvise
        if self._madvise(start, length, self.MADV_POPULATE_WRITE) == 0:
            return True
        if ctypes.get_errno() == errno.EINVAL:  # a kernel before 5.14: no such advice
            self.supported = False
            self.ranges = []
            return False
        return True  # a range unmapped since it was read (ENOMEM, EFAULT): nothing there to give back


# A private writable mapping larger than this is gone through only when at least half of it is resident.
SPARSE_BYTES = 1 << 30
_PRESENT_BYTES = bytes(ord("1") if byte & 0x80 else ord("0") for byte in range(256))


# Requests between two idle-time collections of what keep_heap froze (each costs ~0.5 s of CPU at 1 000
# files and found 10-75 unreachable objects after an update: cycles are rare in the engine's state).
RECLAIM_EVERY = 100


def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL(None).malloc_trim  # glibc's; another C library has none, and keeps what it keeps
    except (AttributeError, OSError):
        return None


MALLOC_TRIM = _malloc_trim() if sys.platform == "linux" else None


def release_free_memory() -> None:
    """Gives the memory the C allocator holds free back to the system. What the cache's load and a database
    session freed stays resident otherwise: at 5 000 files about 90 MB after the warm start, and about 200 MB
    after KùzuDB was opened and closed again (glibc keeps freed pages for reuse). Called when the engine starts
    and when it lets go of the database, so what it holds between requests is what it uses."""
    if MALLOC_TRIM is not None:
        MALLOC_TRIM(0)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while the engine builds its state (a start, from the cache or the disk). The
    state is millions of containers, each allocation counts towards a collection, and each full collection walks
    all that exist so far: at 5 000 files loading the cache took 9.8 s with the collector on, 2.5 s off. Cycles
    are rare in the state (see keep_heap); what the start leaves of them is collected with the rest later."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def keep_heap(reclaim: bool = False) -> None:
    """Keeps Python's cycle collector off the engine's state. At 1 000 files the state is ~700 000
    long-lived objects, and cgc's resolution allocates enough to trigger a full collection, which walks
    all of them, in most updates: 0.5-1 s of CPU in an update of ~1.4 s. Frozen objects are still freed
    by reference counting when dropped; only garbage cycles among them wait for `reclaim`, done while the
    engine is idle."""
    if reclaim:
        started = time.process_time()
        gc.unfreeze()
        found = gc.collect()
        if RUN.options.debug:
            log(f"idle collection: {found} unreachable, {round((time.process_time() - started) * 1000)} CPU ms")
    gc.freeze()
