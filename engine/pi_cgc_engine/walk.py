"""The kept walk: cgc's discovery run again only where the tree changed."""

from __future__ import annotations

import bisect
import ctypes
import itertools
import os
import re
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from .context import RUN

# ---------------------------------------------------------------------------------------------
# The kept walk: cgc's discovery run again only where the tree changed.
#
# Each update asks cgc's discover_files_to_index which files the tree has (new ones, deleted ones, ones a new
# ignore rule takes out). Most of that time (80-110 ms of CPU at 5 000 files) is cgc's filter of every file it
# lists (a Path, is_file, the path relative to the root, the ignore match), not the listing (14 ms). What a walk
# finds is a function of the ignore rules (cgc's matcher, its IGNORE_DIRS setting, the root) and of the entries
# of each directory it walks, and a directory's entries change only with its times: a file or folder created,
# deleted or renamed in it changes its modification time, a chmod its change time. So the engine keeps, for each
# directory cgc walked, its times, the subdirectories cgc walked on into (after its pruning), and the files cgc
# kept of those directly in it; and the next walk hands cgc (through the os.walk its safe_walk calls) only the
# directories whose times differ, that are new, that were listed too soon after their last change to tell
# (RACY_NS: a second change within one tick of the file system's clock leaves the times equal), or that hold a
# symbolic link (is_file and is_dir follow it to a target that may change anywhere). cgc prunes and filters what
# it is handed as in a whole walk; the other directories' files are the ones kept. Other rules or another
# setting walk everything. serve --check compares each kept walk with cgc's whole one (the parity
# replays run with it: moves, deletions, new folders, .cgcignore changes); serve --whole-walk keeps
# nothing (for comparisons).
#
# Looking at each directory's times is a stat per directory, 3-4 ms at 5 000 files (530 folders): the part of an
# update that grew most with the tree once the rest was kept. On Linux the kernel can say instead which folders
# changed (inotify): a watch is added on each directory before it is listed, so every later creation, deletion or
# rename of an entry, and every change of the folder's own attributes, is queued for it by the kernel before the
# call that made it returns, whoever made it. A walk first reads that queue, and a watched folder with nothing
# queued is as it was when listed (its times need not be read, and a second change within a clock tick is seen).
# A folder keeps the stat test where no watch was set: on a file system whose changes can come from elsewhere
# (NFS, SMB, FUSE: the kernel sees only its own), on another device than the root, past a share of the user's
# watch limit (other tools need theirs), or when the queue overflowed (then, for that walk, every folder).
# serve --no-dir-events keeps the stat test everywhere (for comparisons).
#
# With the queue trusted, a walk does not pass through every kept folder to ask the queue about each (about 1 µs a
# folder: 0.4-1 ms at 5 000 files, the last part of the walk that grew with the tree): it looks at the folders the
# queue names and those without a watch (by their times), and a kept folder no longer walked goes when its parent,
# whose entry went, is listed again (KeptWalk._changed_only).

RACY_NS = 2_000_000_000


# File systems whose every change goes through this kernel (so through its inotify), by /proc/self/mountinfo's name.
LOCAL_FILE_SYSTEMS = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs", "f2fs", "bcachefs",
                                "jfs", "reiserfs", "nilfs2", "ramfs"})
_IN_ATTRIB, _IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x4, 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_UNMOUNT, _IN_Q_OVERFLOW, _IN_IGNORED = 0x400, 0x800, 0x2000, 0x4000, 0x8000
_IN_ONLYDIR = 0x01000000
_IN_ENTRIES = _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE  # an entry of the folder came or went
_IN_SELF = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_UNMOUNT | _IN_IGNORED  # the folder itself went (or its watch)
_IN_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then len bytes of name)


def _file_system_of(path: str) -> Optional[Tuple[str, int]]:
    """(type, device) of the mount `path` is on, from /proc/self/mountinfo's longest mount point above it."""
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace").splitlines()
        path = os.path.realpath(path)  # mount points are real paths
        device = os.stat(path).st_dev
    except OSError:
        return None
    best: Optional[Tuple[int, str]] = None
    for line in lines:
        fields, _, rest = line.partition(" - ")
        parts, after = fields.split(), rest.split()
        if len(parts) < 5 or not after:
            continue
        # (the kernel writes a space, tab, newline or backslash in a mount point as an octal escape)
        point = re.sub(r"\\([0-7]{3})", lambda escape: chr(int(escape.group(1), 8)), parts[4])
        inside = path == point or path.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) > best[0]):
            best = (len(point), after[0])
    return None if best is None else (best[1], device)


class DirEvents:
    """The directories changed since they were listed, as the kernel's inotify queued them (see the kept walk)."""

    def __init__(self, root: str):
        self.fd = -1
        self.device = -1
        self.count = 0
        self.limit = 0
        self.overflowed = False
        if not RUN.options.dir_events or not sys.platform.startswith("linux"):
            return
        found = _file_system_of(root)
        if found is None or found[0] not in LOCAL_FILE_SYSTEMS:
            return
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            init, add, rm = libc.inotify_init1, libc.inotify_add_watch, libc.inotify_rm_watch
            max_watches = int(Path("/proc/sys/fs/inotify/max_user_watches").read_text())
        except (OSError, AttributeError, ValueError):
            return
        add.argtypes, add.restype = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32], ctypes.c_int
        fd = init(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            return  # EMFILE: the user's inotify instances are taken; the stat test serves
        self.fd, self.device, self._add, self._rm = fd, found[1], add, rm
        # A quarter of the user's watch limit at most: editors and other watchers need theirs.
        self.limit = min(max_watches // 4, DIR_EVENTS_MAX)

    @property
    def on(self) -> bool:
        return self.fd >= 0

    def watch(self, path: str, device: int) -> int:
        """A watch on the directory (before it is listed); -1 where none is set (it keeps the stat test)."""
        if self.fd < 0 or device != self.device or self.count >= self.limit:
            return -1
        wd = self._add(self.fd, os.fsencode(path), _IN_ENTRIES | _IN_ATTRIB | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR)
        if wd >= 0:
            self.count += 1  # an upper bound: a folder listed again gets the watch it had (the same inode)
        return wd

    def drain(self) -> Set[int]:
        """The watches whose folder changed since the last drain; `overflowed` when the kernel dropped some."""
        dirty: Set[int] = set()
        self.overflowed = False
        while self.fd >= 0:
            try:
                buffer = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                self.overflowed = True
                break
            at = 0
            while at + _IN_EVENT.size <= len(buffer):
                wd, mask, _cookie, length = _IN_EVENT.unpack_from(buffer, at)
                at += _IN_EVENT.size + length
                if mask & _IN_Q_OVERFLOW:
                    self.overflowed = True
                elif mask & (_IN_ENTRIES | _IN_SELF) or mask & _IN_ATTRIB and not length:
                    dirty.add(wd)  # (a file's own attributes, reported with its name, change no listing)
        return dirty

    def forget(self, kept: Set[int], watched: Set[int]) -> None:
        """Removes the watches of folders no longer walked (`watched`: every watch set)."""
        for wd in watched - kept:
            self._rm(self.fd, wd)  # EINVAL for a folder gone (its watch went with it): nothing to do
        self.count = len(kept)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


DIR_EVENTS_MAX = 50_000


@dataclass
class _WalkedDir:
    times: Tuple[int, int, int, int]  # st_mtime_ns, st_ctime_ns, st_ino, st_dev, taken before the listing
    listed_ns: int  # the wall clock when it was listed
    subdirs: List[str]  # those cgc walked on into, as os.walk names them
    volatile: bool  # an entry is a symbolic link
    files: List[Path] = field(default_factory=list)  # what cgc kept of the files directly in it
    # Its listing: each non-directory's name (a regular file or not) and each directory's name, before cgc's pruning.
    names: Dict[str, bool] = field(default_factory=dict)
    dirnames: FrozenSet[str] = frozenset()
    wd: int = -1  # its inotify watch, set before the listing (-1: none, the stat test serves; see DirEvents)


def dir_times(path: str) -> Optional[Tuple[int, int, int, int]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


class KeptWalk:
    """One tree's walk, kept between updates (see above)."""

    def __init__(self) -> None:
        self.key: Optional[Tuple[Any, ...]] = None
        self.dirs: Dict[str, _WalkedDir] = {}
        # During a walk: the directories listed again, and those whose kept files stand.
        self.listed: Dict[str, _WalkedDir] = {}
        self.reused: List[str] = []
        self.whole = True
        self.walking = False  # inside cgc's safe_walk, with rules this walk can be kept under
        self.last = (0, 0)  # directories listed again and kept in the last walk
        self.handed = 0  # entries of the directories listed again that cgc judged (new since their last listing)
        # The last walk's answer in path order, and each file's path as it sorts (as_posix), side by side.
        self.result: Optional[List[Path]] = None
        self.result_keys: List[str] = []
        # The last walk's answer as a change from the one before: (that answer, paths gone, paths come), or None.
        self.delta: Optional[Tuple[List[Path], Set[str], List[str]]] = None
        # The kernel's word on which folders changed (see DirEvents): made at the first walk; during a walk the
        # watches with something queued, and whether the queue can be trusted (nothing dropped).
        self.events: Optional[DirEvents] = None
        self.dirty: Set[int] = set()
        self.trust_events = False
        self.watched: Set[int] = set()  # every watch set and not removed
        # During a walk with the queue trusted (see _changed_only): the kept folders looked at again.
        self.direct = False
        self.tried: List[str] = []
        self.visited: Set[str] = set()  # the folders listed in the walk under way

    def unchanged(self, path: str, kept: _WalkedDir) -> bool:
        if kept.volatile:
            return False
        if kept.wd >= 0 and self.trust_events:
            return kept.wd not in self.dirty
        return kept.listed_ns - max(kept.times[0], kept.times[1]) > RACY_NS and dir_times(path) == kept.times

    def close(self) -> None:
        if self.events is not None:
            self.events.close()

    def safe_walk(self, original: Callable[..., List[Path]], path: Path, spec: Any, ignore_dirs: Any,
                  ignore_root: Any) -> List[Path]:
        rules = getattr(spec, "rules", None) if spec is not None else ()
        key = None if rules is None or not path.is_dir() else (
            str(path), str(ignore_root), frozenset(ignore_dirs or ()),
            tuple((negated, rule.pattern, rule.flags) for negated, rule in rules) if rules else (),
        )
        self.whole = key is None or key != self.key or not self.dirs
        self.key = key
        self.listed, self.reused, self.handed = {}, [], 0
        self.direct, self.tried, self.visited = False, [], set()
        if key is None:
            self.dirs = {}
            return original(path, spec, ignore_dirs, ignore_root)
        if self.events is None:
            self.events = DirEvents(str(path))
        self.dirty = self.events.drain()  # (a whole walk lists every folder: the queue is emptied all the same)
        self.trust_events = self.events.on and not self.events.overflowed
        self.walking = True
        try:
            return original(path, spec, ignore_dirs, ignore_root)
        finally:
            self.walking = False

    def walk(self, top: str, onerror: Any) -> Iterator[Tuple[str, List[str], List[str]]]:
        """os.walk(top, topdown=True, onerror=onerror) as cgc's safe_walk calls it, less what is kept."""
        if self.whole:
            yield from self._visit(top, onerror)
        elif self.trust_events and top in self.dirs:
            yield from self._changed_only(onerror)
        else:
            yield from self._descend(top, onerror)

    def _changed_only(self, onerror: Any) -> Iterator[Tuple[str, List[str], List[str]]]:
        """With the kernel's queue trusted, the kept folders it names, and those it does not watch (by their times),
        are looked at; the others stand without a visit. A descent through every kept folder costs about 1 ms at
        5 000 files (530 folders), the part of an update's walk that grew with the tree. A folder no longer walked
        shows as a change of its parent (its entry went), whose new listing then drops it (_finish_changed)."""
        self.direct = True
        # (in path order: a folder before those under it, which its listing may have visited already)
        named = sorted(path for path, kept in self.dirs.items() if kept.volatile or kept.wd < 0 or kept.wd in self.dirty)
        for path in named:
            if path not in self.visited and not self.unchanged(path, self.dirs[path]):
                self.tried.append(path)
                yield from self._visit(path, onerror)

    def _descend(self, path: str, onerror: Any) -> Iterator[Tuple[str, List[str], List[str]]]:
        kept = self.dirs.get(path)
        if kept is not None and self.unchanged(path, kept):
            self.reused.append(path)
            for sub in kept.subdirs:
                yield from self._descend(sub, onerror)
        else:
            yield from self._visit(path, onerror)

    def _visit(self, path: str, onerror: Any, fresh: bool = False) -> Iterator[Tuple[str, List[str], List[str]]]:
        """Lists a folder again. `fresh`: it is under a folder replaced by another of its name, so what is kept under
        its path (a folder that went with the old one, whose watch saw nothing) is no guide."""
        self.visited.add(path)
        times = dir_times(path)
        wd = self.events.watch(path, times[3]) if self.events is not None and times is not None else -1
        if wd >= 0:
            self.watched.add(wd)
        listed_ns = time.time_ns()
        level = next(os.walk(path, topdown=True, onerror=onerror), None)  # os.walk's own listing
        if level is None:
            return  # unreadable: os.walk told onerror and yields nothing for it
        top, dirs, nondirs = level
        regular: Dict[str, bool] = {}
        try:
            with os.scandir(path) as entries:
                volatile = False
                for entry in entries:
                    volatile = volatile or entry.is_symlink()
                    regular[entry.name] = entry.is_file(follow_symlinks=False)
        except OSError:
            volatile = True
        names = {name: regular.get(name, False) for name in nondirs}
        dirnames = frozenset(dirs)  # before cgc prunes them
        # A directory listed again (an entry came or went): cgc's verdict on an entry is a function of its path, its
        # kind and the rules, so only the entries its last listing did not have are handed to cgc to prune and
        # filter (a new file in a folder of 170 costs 5 ms less); the others keep the verdict they had.
        before = None if self.whole or volatile or fresh else self.dirs.get(top)
        # Another folder of the same path (the old one moved away, this one made or moved in): its entries are new.
        replaced = before is not None and times is not None and before.times[2:] != times[2:]
        if replaced:
            before = None
        if before is None or before.volatile:
            self.handed += len(dirs) + len(nondirs)
            yield top, dirs, nondirs  # cgc prunes dirs in place
            walked = dirs
            carried: List[Path] = []
        else:
            new_dirs = [name for name in dirs if name not in before.dirnames]
            new_files = [name for name in nondirs if before.names.get(name) is not names[name]]
            self.handed += len(new_dirs) + len(new_files)
            yield top, new_dirs, new_files
            walked_on = {os.path.basename(sub) for sub in before.subdirs}
            walked_on.update(new_dirs)  # what cgc left of them
            walked = [name for name in dirs if name in walked_on]
            carried = [file for file in before.files if before.names.get(file.name) is names.get(file.name)]
        subdirs = [os.path.join(top, name) for name in walked]
        subdirs = [sub for sub in subdirs if not os.path.islink(sub)]  # as os.walk: links are not entered
        if times is not None:
            self.listed[top] = _WalkedDir(times, listed_ns, subdirs, volatile, list(carried), names, dirnames, wd)
        for sub in subdirs:
            if fresh or replaced:
                yield from self._visit(sub, onerror, fresh=True)
            elif self.whole or self.direct and sub not in self.dirs:
                yield from self._visit(sub, onerror)  # (a kept one under a folder listed directly was judged above)
            elif not self.direct:
                yield from self._descend(sub, onerror)

    def finish(self, found: List[Path]) -> List[Path]:
        """cgc's answer for the directories listed, with the kept files of the others: the whole walk's."""
        self.delta = None
        if self.key is None:
            self.result = None
            return found
        for file in found:
            listed = self.listed.get(os.path.dirname(str(file)))
            if listed is not None:
                listed.files.append(file)
        if self.direct:
            return self._finish_changed()
        before, last = self.dirs, self.result
        dirs = dict(self.listed)
        reused = set(self.reused)
        for path in self.reused:
            dirs[path] = self.dirs[path]
        self.dirs = dirs
        self.last = (len(self.listed), len(self.reused))
        if self.listed and self.events is not None and self.events.on:
            # The watches of folders no longer walked (gone, now left out by a rule) go.
            kept = {walked.wd for walked in dirs.values() if walked.wd >= 0}
            self.events.forget(kept, self.watched)
            self.watched = kept
        self.listed, self.reused = {}, []
        # The last answer less the files the directories listed again no longer have, with those new in them
        # (few: a sort of every file costs 2-4 ms at 5 000); the whole walk's, sorted, otherwise.
        went = came = None
        listed_files = [file for path, kept in dirs.items() if path not in reused for file in kept.files]
        if last is not None and not self.whole:
            had = {file.as_posix() for path, kept in before.items() if path not in reused for file in kept.files}
            has = {file.as_posix(): file for file in listed_files}
            went, came = had - has.keys(), [(key, file) for key, file in has.items() if key not in had]
        if last is not None and went is not None and came is not None and len(went) + len(came) <= 256:
            files, keys = self._spliced(last, went, came)
        else:
            files = listed_files
            for path in reused:
                files.extend(dirs[path].files)
            files.sort(key=lambda file: file.as_posix())
            keys = [file.as_posix() for file in files]
        self.result, self.result_keys = files, keys
        return files

    def _spliced(self, last: List[Path], went: Set[str], came: List[Tuple[str, Path]]) -> Tuple[List[Path], List[str]]:
        """The last answer less the files gone, with those come, each where it sorts; the change kept as `delta`."""
        files, keys = list(last), list(self.result_keys)
        for key in went:
            at = bisect.bisect_left(keys, key)
            if at < len(keys) and keys[at] == key:
                del keys[at], files[at]
        for key, file in came:
            at = bisect.bisect_left(keys, key)
            keys.insert(at, key)
            files.insert(at, file)
        self.delta = (last, went, [key for key, _ in came])
        return files, keys

    def _finish_changed(self) -> List[Path]:
        """finish after _changed_only: the kept folders are changed in place, and only where the walk looked."""
        dirs, listed, last = self.dirs, self.listed, self.result
        # Folders no longer walked: those looked at that could not be listed, and those a folder listed again
        # no longer walks on into (deleted, moved, now a link), each with what was kept or listed under it.
        dropped = [path for path in self.tried if path not in listed]
        for path, walked in listed.items():
            kept = dirs.get(path)
            if kept is not None and kept.subdirs != walked.subdirs:
                now = set(walked.subdirs)
                dropped.extend(sub for sub in kept.subdirs if sub not in now)
        removed: Set[str] = set()
        while dropped:
            path = dropped.pop()
            if path not in removed:
                removed.add(path)
                for source in (dirs, listed):
                    under = source.get(path)
                    if under is not None:
                        dropped.extend(under.subdirs)
        had = {file.as_posix() for path in itertools.chain(listed, removed) if path in dirs for file in dirs[path].files}
        has = {file.as_posix(): file for path, walked in listed.items() if path not in removed for file in walked.files}
        went, came = had - has.keys(), [(key, file) for key, file in has.items() if key not in had]
        # The watches of the folders gone (kept or just listed), and a folder's old one where another of its path came.
        stale = {entry.wd for path in removed for entry in (dirs.get(path), listed.get(path))
                 if entry is not None and entry.wd >= 0}
        stale.update(dirs[path].wd for path, walked in listed.items()
                     if path in dirs and dirs[path].wd >= 0 and dirs[path].wd != walked.wd)
        for path in removed:
            dirs.pop(path, None)
        for path, walked in listed.items():
            if path not in removed:
                dirs[path] = walked
        if self.events is not None and self.events.on:
            if stale:
                stale -= {walked.wd for walked in dirs.values()}  # unless a folder kept has it (rare: folders went)
                self.events.forget(self.watched - stale, self.watched)
                self.watched -= stale
            self.events.count = len(self.watched)  # (watch counts a folder listed again as a new watch)
        relisted = sum(path not in removed for path in listed)
        self.last = (relisted, len(dirs) - relisted)
        self.listed, self.tried, self.direct = {}, [], False
        if last is not None and len(went) + len(came) <= 256:
            files, keys = self._spliced(last, went, came)
        else:
            files = sorted((file for walked in dirs.values() for file in walked.files), key=lambda file: file.as_posix())
            keys = [file.as_posix() for file in files]
        self.result, self.result_keys = files, keys
        return files
