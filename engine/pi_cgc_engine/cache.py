"""The engine's warm-start cache: its state pickled beside pi's agent folder, saved when idle (aside, in a
forked copy, where memory allows), and the markers that say whether the saved state is what the graph holds.

The cache is private and checked: its folder is 0700 and its files 0600; a cache is loaded only from
a folder and a file the user owns that neither the group nor others can write (anything else is a cold start,
said once as "cache ignored: …"); and the load makes only the engine's own classes and plain containers, never
calls anything else a file names (`PrivateUnpickler`), so a garbled or planted file fails to load instead of
running code. Pickle stays, with that loader: on 1 000 files' state (83 MB; it names only TreeState, FileEntry and
ImportsMap) a load took 1.08-1.19 s with pickle's own loader and 1.18-1.24 s with PrivateUnpickler (one
process, alternated, a loaded 2-core machine), so the restriction costs nothing measurable; a format that cannot
name code at all would need a converter for every class of the state, on the load the warm start exists for."""

from __future__ import annotations

import builtins
import collections
import io
import os
import pickle
import signal
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set, Tuple

from .files import FileEntry
from .memory import SAVE_IDLE_S, PageReclaim, collector_paused, spare_memory_for_a_copy
from .protocol import log, process_alive

if TYPE_CHECKING:
    from .database import Database
    from .tree_state import TreeState

# A file in the cache directory that says something else wrote the graph after the cache was saved (pi-cgc
# writes it before every full index it runs: src/lifecycle/interrupted.ts), so the cache is not the graph's model.
WRITTEN_ELSEWHERE = "graph-written-elsewhere"
# The warm-start cache's layout, the names of the classes it pickles included (7: recording's ImportsMap lost its
# leading underscore); a cache of another layout is a cold start.
CACHE_FORMAT = 7

# What a cache may name besides the engine's own classes: plain containers and the types a defaultdict is made
# with. Nothing here runs anything but its constructor on the data the file holds.
PLAIN_GLOBALS = {
    ("builtins", name): getattr(builtins, name)
    for name in ("set", "frozenset", "list", "dict", "tuple", "int", "str", "bytes", "bytearray", "float", "bool",
                 "complex")
}
PLAIN_GLOBALS.update({("collections", name): getattr(collections, name)
                      for name in ("defaultdict", "OrderedDict", "deque", "Counter")})
PACKAGE = __name__.rsplit(".", 1)[0]


class PrivateUnpickler(pickle.Unpickler):
    """Makes only the engine's own classes (of its package) and PLAIN_GLOBALS: a pickle naming anything else
    (os.system, builtins.eval, a function of the engine, …) fails before it is called."""

    def find_class(self, module: str, name: str) -> Any:
        plain = PLAIN_GLOBALS.get((module, name))
        if plain is not None:
            return plain
        if module == PACKAGE or module.startswith(PACKAGE + "."):
            found = super().find_class(module, name)
            if isinstance(found, type) and found.__module__ == module:
                return found
        raise pickle.UnpicklingError(f"the cache names {module}.{name}, which is not one of the engine's own classes")


def private_load(handle: Any) -> Any:
    return PrivateUnpickler(handle).load()


def private_loads(data: bytes) -> Any:
    return private_load(io.BytesIO(data))


def not_private(path: Path, kind: str) -> Optional[str]:
    """Why `path` (a folder or a file, not followed if a link) is not the user's own and private; None if it is."""
    info = path.lstat()
    if kind == "file" and not stat.S_ISREG(info.st_mode):
        return f"{path} is not a regular file"
    if kind == "folder" and not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a folder"
    if info.st_uid != os.getuid():
        return f"{path} is owned by uid {info.st_uid}, not this user ({os.getuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} is writable by {'its group' if info.st_mode & stat.S_IWGRP else 'others'} (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def private_folder(folder: Path) -> None:
    """The cache folder, made 0700 (and its parents as the user's umask makes them)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    info = folder.lstat()
    if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) != 0o700:
        folder.chmod(0o700)


def write_private(path: Path, text: str) -> None:
    """A marker file, 0600, in the private folder."""
    private_folder(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(text)


class CacheKeeping:
    """The cache half of the Engine: what it saves, when, and whether the saved state can be trusted."""

    root: Path
    version: str
    db: "Database"
    state: "TreeState"
    cache_file: Optional[Path]
    cache_dirty: bool
    cached_state: Optional["TreeState"]
    # The cache as read_cache read it, until load_cache takes it, and when that read began (None: not read yet).
    cache_blob: Optional[Any] = None
    cache_read_at: Optional[float] = None
    saving: Optional[Tuple[int, int, Path, bool]]
    ending: List[Tuple[int, Path]]
    save_started: float
    last_save_s: float
    pages: PageReclaim
    requests: int
    trusted: bool
    unknown: Set[str]

    def dirty_marker(self) -> Optional[Path]:
        return self.cache_file.with_suffix(".dirty") if self.cache_file else None

    def untrusted_marker(self) -> Optional[Path]:
        """Present while the saved cache may not be what the graph holds: from an update's commit until the
        cache that describes it is saved, and for a cache saved from a state read off the disk."""
        return self.cache_file.with_suffix(".untrusted") if self.cache_file else None

    def distrusted(self) -> bool:
        """The saved cache may not be what the graph holds (its marker), or something else wrote the graph
        after (a full index pi-cgc ran: WRITTEN_ELSEWHERE)."""
        marker = self.untrusted_marker()
        if self.cache_file is None or marker is None:
            return True
        return marker.exists() or (self.cache_file.parent / WRITTEN_ELSEWHERE).exists()

    def distrust(self) -> None:
        """Another process holds the database: it may be writing it, and a writer such as `cgc watch` leaves
        no stamp on the graph for an incremental change (it stamps the Repository only at its first scan), so
        what the graph holds from now on is not known to be the state. The next update writes every file's
        links again, as after a start from the disk; the saved cache is not trusted either."""
        self.trusted = False
        marker = self.untrusted_marker()
        if marker is not None:
            write_private(marker, "another process held the database: it may have written the graph\n")

    def trust(self) -> None:
        """The state is what the graph holds now (after an update or a rebuild)."""
        self.trusted = True
        self.unknown = set()
        if self.cache_file is not None:
            (self.cache_file.parent / WRITTEN_ELSEWHERE).unlink(missing_ok=True)

    def read_cache(self) -> None:
        """Reads the saved cache, if any, without looking at what it was saved for (see load_cache). Apart so that
        serve can read it while cgc's choice of database runs (Database), then refuse an unproven backend."""
        if self.cache_read_at is not None:
            return
        self.cache_read_at = time.monotonic()
        self.cache_blob = None
        if self.cache_file is None:
            return
        folder = self.cache_file.parent
        # The folder's state before it is made private: a cache that others could have replaced is not loaded.
        unsafe = not_private(folder, "folder") if os.path.lexists(folder) else None
        private_folder(folder)  # made 0700 where it is the user's own folder, for the saves to come
        for left in folder.glob(self.cache_file.stem + ".*.saving"):
            # A save stopped before it was done (its engine, or an index, was killed); not one under way.
            owner = left.name[len(self.cache_file.stem) + 1:].split("-", 1)[0]
            if not (owner.isdigit() and int(owner) != os.getpid() and process_alive(int(owner))):
                left.unlink(missing_ok=True)
        if not os.path.lexists(self.cache_file):
            return
        unsafe = unsafe or not_private(self.cache_file, "file")
        if unsafe is not None:
            log(f"cache ignored: {unsafe}")
            return
        try:
            with self.cache_file.open("rb") as handle, collector_paused():  # millions of containers (see there)
                self.cache_blob = private_load(handle)
        except Exception as error:  # a bad cache is a cold start, never a failure
            log(f"cache ignored: {error}")

    def load_cache(self) -> Dict[str, FileEntry]:
        """The cache's files when it was saved for this cgc, root, layout and backend (then cached_state is its
        state); else none."""
        self.read_cache()
        blob, self.cache_blob = self.cache_blob, None
        if not isinstance(blob, dict):
            return {}
        try:
            # The backend too: a parse is marked by what the backend cannot write (graph_rows.write_fails).
            if (blob.get("cgc"), blob.get("root"), blob.get("format"), blob.get("backend")) == (
                    self.version, self.root.as_posix(), CACHE_FORMAT, self.db.backend):
                self.db.binder_failures.update(blob.get("binder_failures", {}))
                self.cached_state = blob.get("state")
                return blob["state"].files
        except Exception as error:  # a bad cache is a cold start, never a failure
            log(f"cache ignored: {error}")
        return {}

    def save_cache(self) -> None:
        self.abandon_save()
        self.cache_dirty = False
        if self.cache_file is None:
            return
        temp = self.cache_file.with_suffix(".tmp")
        started = time.monotonic()
        self.write_cache(temp)
        # A cache with paths of unknown content in the graph is not its model either (the set is not saved).
        self.install_cache(temp, self.trusted and not self.unknown)
        self.last_save_s = time.monotonic() - started

    def write_pending_cache(self) -> Optional[Path]:
        """The state written to a file of its own, to be installed (install_cache) once the graph holds it: the
        full index saves its state before the load, and lets go of it while the database's memory grows. A file
        left by a killed index is removed with the other unfinished saves when the next engine loads the cache."""
        if self.cache_file is None:
            return None
        temp = self.cache_file.with_suffix(f".{os.getpid()}-index.saving")
        self.write_cache(temp)
        return temp

    def write_cache_aside(self, temp: Path) -> None:
        """The save, in the forked copy (its own method: the tests' engine wraps it to hold a save open)."""
        self.write_cache(temp)

    def write_cache(self, temp: Path) -> None:
        private_folder(temp.parent)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o600)
            pickle.dump({"cgc": self.version, "root": self.root.as_posix(), "format": CACHE_FORMAT,
                         "backend": self.db.backend, "state": self.state, "binder_failures": self.db.binder_failures},
                        handle, protocol=pickle.HIGHEST_PROTOCOL)

    def save_cache_aside(self) -> None:
        """Saves the cache from a forked copy of this process, so that a request arriving meanwhile is answered
        at once: pickling the state takes 1.4 s at 1 000 files and about 10 s at 5 000, and saved in this
        process after each idle second it held up the agent's next edit by as much. The copy shares the
        memory until it writes it (pickling touches every object: up to the state's size again, for the
        save's duration), so it is forked only on Linux and when the machine has that much to spare;
        otherwise the save is done here. The file is installed by this process (install_cache), and only if
        no request came since the fork (finish_save ends a copy a request overtook)."""
        if self.cache_file is None or self.saving is not None:
            return
        if self.reap_ended():
            return  # an overtaken copy still ends: its memory is not spare yet (the loop tries again soon)
        if not spare_memory_for_a_copy():
            self.save_cache()
            return
        temp = self.cache_file.with_suffix(f".{os.getpid()}-{self.requests}.saving")
        private_folder(temp.parent)
        model = self.trusted and not self.unknown
        pid = os.fork()
        if pid == 0:  # the copy: writes the file and leaves without running anything of its parent's
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # a stop reaches the parent, which ends the copy
                self.write_cache_aside(temp)
                code = 0
            finally:
                os._exit(code)
        self.cache_dirty = False
        self.saving = (pid, self.requests, temp, model)
        self.save_started = time.monotonic()

    def finish_save(self, wait: bool = False) -> None:
        """Installs the file of a save made aside once its process is done."""
        if self.saving is None:
            return
        pid, requests, temp, model = self.saving
        if requests != self.requests:
            self.overtake_save()
            return
        done, status = os.waitpid(pid, 0 if wait else os.WNOHANG)
        if done == 0:
            return
        self.saving = None
        self.pages.begin()
        if os.waitstatus_to_exitcode(status) == 0:
            self.install_cache(temp, model)
            self.last_save_s = time.monotonic() - self.save_started
            return
        temp.unlink(missing_ok=True)
        log(f"the cache was not saved (the saving process ended with {os.waitstatus_to_exitcode(status)})")

    def overtake_save(self) -> None:
        """A request came while a save runs aside: the state may move on, so the copy (and the memory it holds)
        goes before the request is handled, and the next idle time saves again -- after twice the wait (at
        least as long as this one ran). An update beside a live copy pays a page fault and a copy for each
        page it writes first (its CPU doubled at 5 000 files), and while edits come faster than a save takes,
        a save forked at each pause would cost every update that, for nothing kept."""
        if self.saving is None:
            return
        self.last_save_s = max(2 * max(self.last_save_s, SAVE_IDLE_S), time.monotonic() - self.save_started)
        self.abandon_save(wait=False)
        self.cache_dirty = True

    def abandon_save(self, wait: bool = True) -> None:
        """Ends the copy of a save under way. Without `wait` (a request is waiting) it is only killed: waiting
        for the kernel to take down a copy of a large process, then reading this one's memory map for the page
        reclaim, held the request up (35-60 ms with a 1.2 GB heap); both are done when idle (reap_ended)."""
        if self.saving is not None:
            pid, _, temp, _ = self.saving
            self.saving = None
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.ending.append((pid, temp))
        self.reap_ended(wait)

    def reap_ended(self, wait: bool = False) -> bool:
        """Reaps the killed copies that are gone (all of them with `wait`), and once none is left begins the page
        reclaim. Whether one still ends."""
        if not self.ending:
            return False
        still: List[Tuple[int, Path]] = []
        for pid, temp in self.ending:
            try:
                done, _ = os.waitpid(pid, 0 if wait else os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done == 0:
                still.append((pid, temp))
            else:
                temp.unlink(missing_ok=True)
        self.ending = still
        if not still and self.saving is None:
            self.pages.begin()
        return bool(still)

    def install_cache(self, temp: Path, model: bool) -> None:
        assert self.cache_file is not None
        marker = self.untrusted_marker()
        if marker is not None and not model:
            write_private(marker, "this cache is not known to be what the graph holds\n")
        temp.replace(self.cache_file)
        if marker is not None and model:
            marker.unlink(missing_ok=True)

