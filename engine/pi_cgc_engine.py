#!/usr/bin/env python3
"""pi-cgc's incremental graph engine (ADR 0001, decision 1; issue 12).

Run by cgc's own interpreter with cwd = the workspace root. It imports cgc's library to parse, resolve
and write, and keeps the graph equal to what a fresh `cgc index --force <root>` of the same tree holds:
changed files are deleted and re-added with cgc's own GraphWriter, the link rows (CALLS, INHERITS, …)
of every file the change can affect are re-resolved in memory by cgc's own resolution (see "Narrowed
resolution" below: the files whose resolution read something that changed), and only the rows that
differ — plus the rows pointing into replaced files, whose incoming edges the delete detached — are
written again.

  python pi_cgc_engine.py serve --root R [--cache-dir D] [--hold-ms N] [--context NAME]
  python pi_cgc_engine.py dump  --root R [--out FILE] [--context NAME]
  python pi_cgc_engine.py cgc ARGS…   (cgc's own command line, e.g. `index --force R`, on FalkorDB Lite with
                                     the writes of zero_safe below; refused with exit 3 on another cgc version)

serve speaks JSON lines (stdout: protocol only; logs go to stderr). First line:
  {"event":"ready","cgcVersion","backend","files","startMs","warm","cached","trusted","diverged"}
  (trusted: started from a cache that is what the graph holds; otherwise the first update rewrites every
  file's links, since the engine read the tree after changes whose old content it never held)
  or {"event":"refused","reason"} and exit 3 (another cgc version, no importable cgc, unproven backend).
Requests, one per line, each answered by one line with the same id:
  {"id","op":"update","paths":[abs…]} → {"ok":true,"stampBefore","stampAfter","written","removed","ms","lockMs",
      "openMs","resolveMs","resolveCpuMs","checkMs","resolved","reresolved","rewritten","unsure","attempts","phases"}
      | {"ok":false,"code":"BUSY"|"FAILED"|"DIVERGED"|"NO_GRAPH","reason"}
      (NO_GRAPH: the graph has no Repository node for the root, so it holds no index of it: nothing written)
      (paths of an update that did not commit are retried with the next one; resolved = files in the
      tree, reresolved = files whose links were resolved again, unsure = changed paths whose old content
      the engine never held, phases = ms per step under the lock; stampBefore/After = the Repository's
      indexed_at before and after this write: a stampBefore the caller did not see last means another
      writer came between)
  {"id","op":"verify","paths":[…]} → {"ok":true,"reflected":[…],"unreflected":[…]}
  {"id","op":"dump","out":"/abs/file"[,"dangling":true]} → {"ok":true,"lines":N}
  {"id","op":"rebuilt","unknown":[abs…]} → the caller rebuilt the graph fully: re-read the tree from the
      disk, clear DIVERGED, trust the state (what the graph holds) but for the unknown paths (changed since
      the rebuild read them: the next update treats them as an untrusted engine does)
  {"id","op":"shutdown"} → {"ok":true}, exit 0. stdin EOF, SIGINT and SIGTERM also exit 0.
PI_CGC_ENGINE_SKIP_INCOMING=1 switches off the restore of edges coming into replaced files (to show
that the parity harness catches it). PI_CGC_ENGINE_CHECK=1 resolves the whole tree after each narrowed
resolution and answers FAILED (nothing written) when any row differs, or when a kept index, the kept imports
map or a kept per-language view differs from cgc's own build from every file (values or key order); the
differences go to stderr. PI_CGC_ENGINE_FULL_INDICES=1 has cgc build its indices from every file at every
update, as before they were kept, and PI_CGC_ENGINE_PARSE_ORDER=as-parsed keeps the order in which cgc's parser
lists a file's entries (both for comparisons: bench/engine-profile.py).
PI_CGC_ENGINE_NARROW_FAULT=1 plants a wrong narrowing (only the changed files resolved again), to show
that the check catches it.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import contextlib
import ctypes
import dataclasses
import errno
import functools
import gc
import hashlib
import itertools
import json
import operator
import os
import pickle
import queue
import re
import select
import signal
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

PROVEN_VERSIONS = {"0.6.13"}
# Backends the parity harness ran on (FalkorDB Lite shares the server's engine and writer path).
# Neo4j ran it on two servers (one database each). Nornic and LadybugDB are refused: never compared.
PROVEN_BACKENDS = {"kuzudb", "falkordb", "falkordb-remote", "neo4j"}
REFUSED_EXIT = 3
# The real lock messages of cgc 0.6.13 on KùzuDB (kuzu's own text, and cgc's CLI hint).
LOCK_MESSAGES = ("Could not set lock on file", "Another CGC process already has this embedded database open")
# Relationship types that only the post-pass link writers create; their edges are owned by the
# file of their source node.
LINK_TYPES = (
    "CALLS", "HEURISTIC_CALLS", "INHERITS", "IMPLEMENTS", "EMBEDS", "COMPANION_OF", "PARTIAL_OF",
    "PART_OF", "METACLASS", "DECORATED_BY", "BINDS", "PREVIEWS",
)
# (owner key, target key) of each link kind's rows, as cgc's resolution builds them.
LINK_KEYS: Dict[str, Tuple[str, str]] = {
    "inherits": ("path", "resolved_parent_file_path"),
    "implements": ("path", "resolved_parent_file_path"),
    "embeds": ("path", "resolved_parent_file_path"),
    "companion": ("companion_path", "owner_path"),
    "partial": ("path", "resolved_parent_file_path"),
    "part_of": ("child_path", "parent_path"),
    "metaclass": ("path", "resolved_parent_file_path"),
    "decorated": ("decorated_path", "decorator_path"),
    "binds": ("source_path", "target_path"),
    "previews": ("preview_path", "composable_path"),
    "calls": ("caller_file_path", "called_file_path"),
}
# The extensions write_cpp_class_function_links links functions of.
CPP_SOURCES = {".cpp", ".cc", ".cxx", ".c++", ".C"}
SKIP_INCOMING = os.environ.get("PI_CGC_ENGINE_SKIP_INCOMING") == "1"
# A file in the cache directory that says something else wrote the graph after the cache was saved (pi-cgc
# writes it before every full index it runs: src/lifecycle/interrupted.ts), so the cache is not the graph's model.
WRITTEN_ELSEWHERE = "graph-written-elsewhere"
# The warm-start cache's layout; a cache of another layout is a cold start.
CACHE_FORMAT = 2

# The protocol owns the real stdout; cgc's library may print, so fd 1 is pointed at stderr.
_PROTOCOL = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr


def log(message: str) -> None:
    print(f"[pi-cgc-engine] {message}", file=sys.stderr, flush=True)


def emit(obj: Dict[str, Any]) -> None:
    _PROTOCOL.write(json.dumps(obj) + "\n")
    _PROTOCOL.flush()


def ms_since(start: float) -> int:
    return round((time.monotonic() - start) * 1000)


def refuse(reason: str) -> None:
    emit({"event": "refused", "reason": reason})
    sys.exit(REFUSED_EXIT)


def cgc_version() -> str:
    from importlib.metadata import version

    return version("codegraphcontext")


def load_cgc() -> str:
    """The version gate: any other cgc, or a library that does not import, is refused."""
    try:
        found = cgc_version()
    except Exception as error:  # noqa: BLE001 - any failure to find cgc is a refusal
        refuse(f"codegraphcontext is not importable here: {error}")
    if found not in PROVEN_VERSIONS:
        refuse(f"cgc {found} is not a version the engine was proven on ({', '.join(sorted(PROVEN_VERSIONS))})")
    try:
        global GraphBuilder, GraphWriter, JobManager, discover_files_to_index, pre_scan_for_imports
        global build_function_call_groups, inh, _calls_module, _ORIGINAL_LABEL_INDEX
        from codegraphcontext.core.jobs import JobManager
        from codegraphcontext.tools.graph_builder import GraphBuilder
        from codegraphcontext.tools.indexing import resolution as _resolution  # noqa: F401
        from codegraphcontext.tools.indexing import discovery as _discovery
        from codegraphcontext.tools.indexing.discovery import discover_files_to_index
        from codegraphcontext.tools.indexing.persistence.writer import GraphWriter
        from codegraphcontext.tools.indexing.pre_scan import pre_scan_for_imports
        from codegraphcontext.tools.indexing.resolution import inheritance as inh
        from codegraphcontext.tools.indexing.resolution import calls as _calls_module
        from codegraphcontext.tools.indexing.resolution.calls import build_function_call_groups

        _ORIGINAL_LABEL_INDEX = inh._build_node_label_index
    except Exception as error:  # noqa: BLE001
        refuse(f"cgc {found} does not expose the library the engine needs: {error}")
    # The narrowed resolution's hook (see resolve_tree): passes every call through unless a run of
    # the engine's is under way and cgc's loop enumerates the engine's own list.
    _calls_module.enumerate = _enumerate_hook
    _LOOP_ROLES.update(find_loop_roles())
    _discovery.build_ignore_spec = _remembering_ignore_spec(_discovery.build_ignore_spec)
    from codegraphcontext.utils import tree_sitter_manager as _queries

    _queries._execute_query_locked = _remembering_queries(_queries._execute_query_locked)
    _discovery.safe_walk = _kept_safe_walk(_discovery.safe_walk)
    if type(getattr(_discovery, "os", None)) is type(os):
        _discovery.os = _DiscoveryOs()
    return found


def _remembering_queries(run: Callable[..., Any]) -> Callable[..., Any]:
    """cgc's parsers compile each tree-sitter query again for every file (execute_query: 7 queries, ~8 ms of a
    Python file's 10-14 ms parse, whatever its size). A compiled query is a function of the language and the
    query's text, and cgc only reads it (it disables no pattern or capture), so it is compiled once; each run
    still gets its own cursor. A language that cannot be a key is compiled as cgc does."""
    compiled: Dict[Tuple[Any, str], Any] = {}

    def remembered(query_type: Any, language: Any, query_string: str, node: Any) -> Any:
        try:
            key = (language, query_string)
            query = compiled.get(key)
        except TypeError:
            return run(query_type, language, query_string, node)
        if query is None:
            try:
                query = query_type(language, query_string)
            except Exception:  # noqa: BLE001 - cgc's own fallback (an older tree-sitter) and its errors
                return run(query_type, language, query_string, node)
            compiled[key] = query
        return run(lambda _language, _text: query, language, query_string, node)

    remembered.__wrapped__ = run  # type: ignore[attr-defined]  # cgc's own, for the test that compares them
    return remembered


def _remembering_ignore_spec(build: Callable[..., Any]) -> Callable[..., Any]:
    """cgc's discovery builds its ignore matcher anew on each walk and matches every directory and file
    against every pattern: most of a walk's time (130 ms at 1 000 files, 1.9 s at 5 000; `npm run bench --
    --only engine-discovery`), twice per update with its read-back. A match is a function of the patterns and
    the path's text alone, so the answers are kept per pattern list: the same patterns answer the same."""
    answers_by_patterns: Dict[Tuple[Any, ...], Dict[str, bool]] = {}

    def remembering(*args: Any, **kwargs: Any) -> Any:
        matcher, found = build(*args, **kwargs)
        rules = getattr(matcher, "rules", None)
        if not isinstance(rules, list):
            return matcher, found  # not the matcher this was written against: used as it is
        key = (str(matcher.root_dir), tuple((negated, rule.pattern, rule.flags) for negated, rule in rules))
        if key not in answers_by_patterns and len(answers_by_patterns) >= 4:
            answers_by_patterns.clear()  # ignore files that keep changing: only recent pattern lists are kept
        answers = answers_by_patterns.setdefault(key, {})
        original = matcher.match_file

        def match_file(file_path: Any) -> bool:
            if not isinstance(file_path, str):
                return original(file_path)  # an absolute Path is made relative first: not remembered
            known = answers.get(file_path)
            if known is None:
                known = answers[file_path] = original(file_path)
            return known

        matcher.match_file = match_file
        return matcher, found

    return remembering


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
# setting walk everything. PI_CGC_ENGINE_CHECK=1 compares each kept walk with cgc's whole one (the parity
# replays run with it: moves, deletions, new folders, .cgcignore changes); PI_CGC_ENGINE_WHOLE_WALK=1 keeps
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
# PI_CGC_ENGINE_DIR_EVENTS=0 keeps the stat test everywhere (for comparisons).
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
        if os.environ.get("PI_CGC_ENGINE_DIR_EVENTS") == "0" or not sys.platform.startswith("linux"):
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


def _dir_times(path: str) -> Optional[Tuple[int, int, int, int]]:
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
        return kept.listed_ns - max(kept.times[0], kept.times[1]) > RACY_NS and _dir_times(path) == kept.times

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
        times = _dir_times(path)
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


class _DiscoveryOs:
    """The `os` module as cgc's discovery module sees it: its walk goes through the kept walk under way."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    @staticmethod
    def walk(top: Any, topdown: bool = True, onerror: Any = None, followlinks: bool = False) -> Any:
        kept = _KEEPING[0]
        if kept is None or not kept.walking or not topdown or followlinks:
            return os.walk(top, topdown=topdown, onerror=onerror, followlinks=followlinks)
        return kept.walk(str(top), onerror)


def _kept_safe_walk(original: Callable[..., List[Path]]) -> Callable[..., List[Path]]:
    def safe_walk(path: Path, spec: Any = None, ignore_dirs: Any = None, ignore_root: Any = None) -> List[Path]:
        kept = _KEEPING[0]
        if kept is None:
            return original(path, spec, ignore_dirs, ignore_root)
        return kept.safe_walk(original, path, spec, ignore_dirs, ignore_root)

    return safe_walk


_KEEPING: List[Optional[KeptWalk]] = [None]  # the tree whose discovery is under way, if it keeps its walk


def whole_walk_only() -> bool:
    return os.environ.get("PI_CGC_ENGINE_WHOLE_WALK") == "1"


# ---------------------------------------------------------------------------------------------
# A file's deletion on FalkorDB: its nodes' edges first, then the nodes.
#
# cgc's GraphWriter.delete_file_from_graph removes a file's nodes with one `DETACH DELETE f, element, p`. On a
# FalkorDB graph cgc has just indexed, whose matrices still hold changes FalkorDB has not merged (it merges a
# matrix's pending changes when they reach its DELTA_MAX_PENDING_CHANGES, or when it saves a snapshot), the edges a
# DETACH takes with its nodes cost 26-30 ms for a one-function file on a 5 000-file graph, update after update,
# against 2-4 ms once the changes are merged (bench/RESULTS.md, "the deletion after cgc's index"). The same edges
# deleted as edges (each node's outgoing ones, then its incoming ones) and then the nodes, no longer attached:
# 7 ms in either state. The nodes are the ones cgc's statement matches; the graph after is the same. (FalkorDB 4.16's
# plain DELETE of a node takes its remaining edges too, so the parity harness cannot tell the incoming step's
# absence; it is there so that no edge is left for the node's deletion to take.) Both directions in one statement
# (`MATCH (n)-[r]-() WITH DISTINCT r`) measured no faster: these statements cost what they delete, about 2.5 ms
# for a one-function file at 5 000 files against 1.3 at 100 (FalkorDB's own time).
# PI_CGC_ENGINE_DETACH=1 uses cgc's own statement (for comparisons).


def detach_on_falkordb() -> bool:
    return os.environ.get("PI_CGC_ENGINE_DETACH") == "1"


_FILE_NODES = (
    "MATCH (f:File {path: $path}) OPTIONAL MATCH (f)-[:CONTAINS]->(element) "
    "OPTIONAL MATCH (element)-[:HAS_PARAMETER]->(p:Parameter) "
    "WITH collect(DISTINCT f) + collect(DISTINCT element) + collect(DISTINCT p) AS doomed "
    "UNWIND doomed AS n RETURN DISTINCT id(n) AS id"
)


def delete_file_edges_first(writer: Any, path: str) -> None:
    """GraphWriter.delete_file_from_graph of cgc 0.6.13, statement for statement, but for its DETACH DELETE."""
    from codegraphcontext.tools.indexing.persistence.writer import _normalize_path

    file_path = _normalize_path(path)
    with writer.driver.session() as session:
        parents = [row["path"] for row in session.run(
            "MATCH (f:File {path: $path})<-[:CONTAINS*]-(d:Directory) RETURN d.path as path ORDER BY d.path DESC",
            path=file_path)]
        session.run("MATCH (f:File {path: $path})-[r:CONTAINS]->(:Module) DELETE r", path=file_path)
        ids = [row["id"] for row in session.run(_FILE_NODES, path=file_path)]
        if ids:
            session.run("UNWIND $ids AS i MATCH (n) WHERE id(n) = i MATCH (n)-[r]->() DELETE r", ids=ids)
            session.run("UNWIND $ids AS i MATCH (n) WHERE id(n) = i MATCH ()-[r]->(n) DELETE r", ids=ids)
            session.run("UNWIND $ids AS i MATCH (n) WHERE id(n) = i DELETE n", ids=ids)
        for parent in parents:
            session.run("MATCH (d:Directory {path: $path}) WHERE NOT (d)-[:CONTAINS]->() DETACH DELETE d", path=parent)


# ---------------------------------------------------------------------------------------------
# The database: opened for an operation, closed when idle (KùzuDB's lock is exclusive).


class Busy(Exception):
    pass


class TransactionLost(Exception):
    """KùzuDB rolls a manual transaction back on any failed statement, binder errors included."""


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__


class TxnConnection:
    """A kuzu.Connection inside one explicit transaction.

    cgc's writer probes labels by letting queries fail with a binder error and moving on; inside a
    Kùzu transaction that failure rolls everything back. So a statement that once failed to bind is
    remembered (by text and parameter shape) and answered with the same error without reaching Kùzu,
    and a transaction that was lost anyway is noticed (`lost`) so the caller retries it whole.
    """

    def __init__(self, conn: Any, known_binder_failures: Dict[str, str]):
        self.conn = conn
        self.known = known_binder_failures
        self.lost: Optional[str] = None
        self.learned = False
        self.statements = 0

    def execute(self, query: str, parameters: Optional[Dict[str, Any]] = None) -> Any:
        key = query + "\0" + json.dumps(_shape(parameters or {}), sort_keys=True)
        if key in self.known:
            raise RuntimeError(self.known[key])
        if self.lost is not None:
            raise TransactionLost("pi-cgc: the write transaction was rolled back; nothing more is sent")
        self.statements += 1
        try:
            return self.conn.execute(query, parameters or {})
        except Exception as error:
            text = str(error)
            self.lost = text
            if "binder exception" in text.lower():
                self.known[key] = text
                self.learned = True
            raise TransactionLost(f"pi-cgc: the write transaction was rolled back ({text[:200]})") from None


# FalkorDB Lite (falkordblite 0.9.0) answers a range-index lookup of the number 0 with nothing: `MATCH (n:Function
# {occurrence_index: 0})` finds no node though every node of a file without two same-named symbols on one line has
# that value (1 is found; a FalkorDB server answers right; docs/cgc-compat.md). cgc's writer links each function,
# class … to its file, and each parameter to its function, by such a lookup, so on Lite those edges were never
# written. The engine's writes there take the occurrence_index out of the lookup's map and compare it in a WHERE
# the planner cannot answer from the index (`+ 0`); every other key is matched as cgc wrote it.
_ZERO_LOOKUP = re.compile(r"MATCH \((\w+):(\w+) \{([^{}]*?), occurrence_index: row\.occurrence_index\}\)")


def zero_safe(query: str) -> str:
    return _ZERO_LOOKUP.sub(r"MATCH (\1:\2 {\3}) WHERE \1.occurrence_index + 0 = row.occurrence_index", query)


class _ZeroSafeSession:
    """A driver session whose queries go through zero_safe."""

    def __init__(self, session: Any):
        self._session = session

    def run(self, query: str, *args: Any, **kwargs: Any) -> Any:
        return self._session.run(zero_safe(query), *args, **kwargs)

    def __enter__(self) -> "_ZeroSafeSession":
        self._session.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._session.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


class _ZeroSafeDriver:
    """cgc's FalkorDB Lite driver, its sessions' queries through zero_safe."""

    def __init__(self, driver: Any):
        self._driver = driver

    def session(self, *args: Any, **kwargs: Any) -> _ZeroSafeSession:
        return _ZeroSafeSession(self._driver.session(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)


def run_cgc_zero_safe(argv: List[str]) -> int:
    """cgc's own command, in this process, with FalkorDB Lite's drivers answering through zero_safe: its index
    then links what Lite's range index would leave unlinked, and is otherwise cgc's index as it is."""
    try:
        found = cgc_version()
    except Exception as error:  # noqa: BLE001 - any failure to find cgc is a refusal
        log(f"refused: codegraphcontext is not importable here: {error}")
        return REFUSED_EXIT
    if found not in PROVEN_VERSIONS:
        log(f"refused: cgc {found} is not a version the engine was proven on ({', '.join(sorted(PROVEN_VERSIONS))})")
        return REFUSED_EXIT
    from codegraphcontext.cli.main import app
    from codegraphcontext.core.database_falkordb import FalkorDBManager

    get_driver = FalkorDBManager.get_driver
    FalkorDBManager.get_driver = lambda self, *args, **kwargs: _ZeroSafeDriver(get_driver(self, *args, **kwargs))
    try:
        app(args=argv, prog_name="cgc")
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return 0


class Database:
    def __init__(self, root: Path, context: Optional[str]):
        from codegraphcontext.cli.config_manager import resolve_context
        from codegraphcontext.core import get_database_manager

        ctx = resolve_context(context, cwd=root)
        # The same choice cgc's CLI makes (_initialize_services): the context's database is only a
        # default when no runtime override or DEFAULT_DATABASE is set.
        if ctx.database and not os.getenv("CGC_RUNTIME_DB_TYPE") and not os.getenv("DEFAULT_DATABASE"):
            os.environ["DEFAULT_DATABASE"] = ctx.database
        self.ctx = ctx
        self.manager = get_database_manager(db_path=os.getenv("CGC_RUNTIME_DB_PATH") or ctx.db_path)
        self.backend: str = self.manager.get_backend_type()
        self.embedded = self.backend in ("kuzudb", "ladybugdb")
        self.falkordb = self.backend in ("falkordb", "falkordb-remote")  # Lite or a server
        self.is_open = False
        self.binder_failures: Dict[str, str] = {}

    def open(self) -> int:
        """Opens the database if closed; returns the ms it took. Raises Busy on a held lock."""
        if self.is_open:
            return 0
        start = time.monotonic()
        try:
            self.manager.get_driver()
        except Exception as error:
            text = str(error)
            if any(message.lower() in text.lower() for message in LOCK_MESSAGES):
                raise Busy(text) from None
            raise
        self.is_open = True
        return ms_since(start)

    def close(self) -> None:
        if self.is_open:
            self.is_open = False
            self.manager.close_driver()

    def writer(self) -> Any:
        driver = self.manager.get_driver()
        return GraphWriter(_ZeroSafeDriver(driver) if self.backend == "falkordb" else driver, db_manager=self.manager)

    def read(self, query: str, **params: Any) -> List[Any]:
        with self.manager.get_driver().session() as session:
            return list(session.run(query, **params))

    def write_transaction(self, work: Callable[[Any], None]) -> Dict[str, int]:
        """Runs work(writer) atomically where the backend allows it; returns statement counts."""
        if not self.embedded:
            work(self.writer())
            return {"attempts": 1}
        from codegraphcontext.core.database_embedded_kuzu import EmbeddedDriverWrapper

        manager = self.manager
        attempts = 0
        while True:
            attempts += 1
            raw = manager._pool.get(timeout=30)
            txn = TxnConnection(raw, self.binder_failures)
            single: "queue.Queue[Any]" = queue.Queue()
            single.put(txn)
            driver = EmbeddedDriverWrapper(
                manager._db, single, manager._write_lock, compat_state=type(manager)._compat_state,
                display_name=manager.BACKEND_SPEC.display_name, backend_id=manager.BACKEND_SPEC.backend_id,
            )
            try:
                raw.execute("BEGIN TRANSACTION")
                error: Optional[BaseException] = None
                try:
                    work(GraphWriter(driver, db_manager=manager))
                except BaseException as caught:  # noqa: BLE001 - decided below, then re-raised
                    error = caught
                if txn.lost is None and error is None:
                    raw.execute("COMMIT")
                    return {"attempts": attempts, "statements": txn.statements}
                if txn.lost is None:
                    raw.execute("ROLLBACK")
                if error is not None and not isinstance(error, TransactionLost) and txn.lost is None:
                    raise error
                # A statement we had not yet seen failing to bind: learned, and the whole update
                # runs again from a clean transaction.
                if txn.learned and attempts < 50:
                    log(f"transaction retried after a binder probe ({len(self.binder_failures)} known)")
                    continue
                raise RuntimeError(f"write transaction rolled back: {txn.lost or error}")
            finally:
                manager._pool.put(raw)


# ---------------------------------------------------------------------------------------------
# The tree: parsed files, the imports map, resolved link rows.


@dataclass
class FileEntry:
    size: int
    mtime_ns: int
    digest: str
    data: Dict[str, Any]
    imports: Dict[str, List[str]]
    # Derived from data when first needed: identifier argument -> names of the calls passing it.
    callargs: Optional[Dict[str, Set[str]]] = None
    # Derived likewise: the names of the calls passing a bare name (what the callback pre-pass matches),
    # and the names of the Module nodes the file's imports write metadata to (module_import_rows).
    callnames: Optional[FrozenSet[str]] = None
    # And the positions in data's function_calls of the calls passing a bare name, by the call's name.
    callpos: Optional[Dict[str, Tuple[int, ...]]] = None
    modnames: Optional[FrozenSet[str]] = None
    # The copy of data given to cgc's resolution (a _Parsed; not cached on disk).
    parsed: Optional[Any] = field(default=None, compare=False, repr=False)

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("parsed", None)
        return state


@dataclass
class TreeState:
    files: Dict[str, FileEntry] = field(default_factory=dict)
    imports_map: Dict[str, List[str]] = field(default_factory=dict)
    # Per parsed file (the keys of `files`): its own rows of the kinds resolved file by file, "calls"
    # being the ten call groups; every full list is these concatenated in path order.
    rows: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    # The kinds resolved over the whole tree at every update (cheap: each skips other languages first).
    whole: Dict[str, List[Dict[str, Any]]] = field(default_factory=dict)
    # What each file's resolution read from the tree-wide indices: (index, key) pairs.
    deps: Dict[str, Set[Tuple[str, Any]]] = field(default_factory=dict)
    # Per parsed file: cgc's node label index entry of the file (name -> labels), by normalized path.
    labels: Dict[str, Dict[str, Set[str]]] = field(default_factory=dict)
    # The same entries by path: the node label index cgc's inheritance passes read (not cached; kept between
    # updates: its key order is not path order, and need not be, as cgc only looks keys up in it).
    label_index: Optional[Dict[str, Dict[str, Set[str]]]] = None
    # Per parsed file: the normalized files its rows point to.
    targets: Dict[str, FrozenSet[str]] = field(default_factory=dict)
    # cgc's tree-wide indices as the last resolution built them (not cached on disk: rebuilt at start).
    indices: Optional[Dict[str, Dict[Any, Any]]] = None
    skip_external: Optional[bool] = None
    # cgc's per-language views of the imports map, as the last resolution built them (not cached).
    lang_views: Optional[Dict[str, Dict[str, List[str]]]] = None
    # Per parsed file, what it contributed to cgc's indices, by loop (see "Kept indices"; not cached), and
    # per kept index the files contributing to each key (in path order). None: the indices were built whole.
    contrib: Optional[Dict[str, Dict[str, Any]]] = None
    contributors: Optional[Dict[str, Dict[Any, Tuple[str, ...]]]] = None
    # The kept indices in `indices` whose key order is owed (see _Keeper.settle; not cached, as the indices),
    # and the views in `lang_views` whose order is (see _CallRun.settle_view; not cached either).
    order_owed: FrozenSet[str] = frozenset()
    views_owed: FrozenSet[str] = frozenset()
    # With PI_CGC_ENGINE_CHECK=1: where the kept indices differ from cgc's own build from every file.
    index_check: Optional[List[str]] = None
    # Each imports map name's files, in merge order, and the extension groups' order (not cached).
    import_owners: Optional[Dict[str, Tuple[str, ...]]] = None
    import_groups: Optional[List[str]] = None
    # Per large list of rows ((file, kind, call group)): the list and its rows' positions by target (see
    # rows_by_target; not cached). Carried to the next state for the files it did not resolve again.
    row_positions: Dict[Tuple[str, str, int], Tuple[List[Dict[str, Any]], Dict[Any, List[int]]]] = field(default_factory=dict)
    # Where an update finds the few files it must look at by name (see CandidateIndex; not cached).
    candidates: Optional[Dict[str, "CandidateIndex"]] = None
    # The files' extensions (what the repo-wide passes of apply_update look for), once known.
    suffixes: Optional[FrozenSet[str]] = None
    # The parsed files (their parse did not fail), in path order: the files resolution sees (not cached).
    keys: Optional[List[str]] = None
    # Their parsed copies given to cgc, in the same order (not cached), and whether one is a Kotlin file.
    parsed_list: Optional[List[Any]] = None
    kotlin: Optional[bool] = None

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        for name in ("indices", "label_index", "lang_views", "contrib", "contributors", "index_check", "import_owners", "import_groups",
                     "candidates", "keys", "parsed_list", "kotlin"):
            state[name] = None
        state["row_positions"] = {}
        state["order_owed"] = state["views_owed"] = frozenset()
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        # A cache saved by an engine before a field was added lacks it: the field's default.
        defaults = {f.name: f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default  # type: ignore[misc]
                    for f in dataclasses.fields(self)}
        self.__dict__.update({**defaults, **state})

    @property
    def links(self) -> Dict[str, Any]:
        return assemble_links(self)


class _NoDatabase:
    """Parsing needs no database: GraphBuilder asks its manager for a driver it never uses."""

    def get_driver(self, graph_name: Optional[str] = None) -> None:
        return None

    def get_backend_type(self) -> str:
        return "none"


# A fault for tests, in cgc's own parse of a file named parse_gated.py (inside the try with which cgc turns a
# parser's exception into the file's parse error): with <gate>.fail present, the parse raises once, as reading a
# file mid-write can; otherwise, until <gate> exists, it waits (having written <gate>.waiting), so that a stop
# can arrive while cgc parses.
PARSE_GATE = os.environ.get("PI_CGC_ENGINE_PARSE_GATE")


def _gate_parses() -> None:
    from codegraphcontext.tools.tree_sitter_parser import TreeSitterParser

    parse = TreeSitterParser.parse

    def gated(self: Any, path: Path, *args: Any, **kwargs: Any) -> Any:
        if PARSE_GATE and Path(path).name == "parse_gated.py":
            fail = Path(PARSE_GATE + ".fail")
            if fail.exists():
                fail.unlink()
                raise RuntimeError("a parse that failed once (the test's parse gate)")
            Path(PARSE_GATE + ".waiting").write_text("", encoding="utf-8")
            while not Path(PARSE_GATE).exists():
                time.sleep(0.05)
        return parse(self, path, *args, **kwargs)

    TreeSitterParser.parse = gated


def parse_only_builder() -> Any:
    class ParseOnlyBuilder(GraphBuilder):  # type: ignore[misc, valid-type]
        def create_schema(self, graph_name: Optional[str] = None) -> None:
            return None

    if PARSE_GATE:
        _gate_parses()
    return ParseOnlyBuilder(_NoDatabase(), JobManager(), None)


def file_ext(path: Path) -> str:
    return ".d.ts" if path.name.endswith(".d.ts") else path.suffix


def digest_of(path: Path) -> Tuple[int, int, str]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns, hashlib.sha1(path.read_bytes()).hexdigest()


def _position(entry: Dict[str, Any]) -> Tuple[Any, ...]:
    return (entry["line_number"], str(entry.get("name")), str(entry.get("context")), str(entry.get("class_context")))


def _whole(entry: Dict[str, Any]) -> str:
    return repr(sorted((key, repr(value)) for key, value in entry.items() if key not in UNREAD_FIELDS))


def parse_order_as_parsed() -> bool:
    return os.environ.get("PI_CGC_ENGINE_PARSE_ORDER") == "as-parsed"


def canonical_order(data: Dict[str, Any]) -> Dict[str, Any]:
    """The file's entries in source order. cgc's parser (tree-sitter 0.25's captures, gathered per capture name)
    lists a file's functions and variables in a different order at each parse, even within one process. No
    graph depends on that order (the parity replays compare with cgc's own index, in whatever order it
    parsed), but the engine's indices do: re-parsing a file whose entries are unchanged would reorder them,
    and every file that read them would be resolved again. Sorted by line, then name and context; entries
    still tied (two names assigned on one line) by all they hold. PI_CGC_ENGINE_PARSE_ORDER=as-parsed keeps
    cgc's order (for comparisons: bench/engine-profile.py)."""
    if parse_order_as_parsed():
        return data
    for key, entries in data.items():
        if not (isinstance(entries, list) and len(entries) > 1):
            continue
        if not all(isinstance(entry, dict) and isinstance(entry.get("line_number"), int) for entry in entries):
            continue
        entries.sort(key=_position)
        start = 0
        while start < len(entries):
            end = start + 1
            while end < len(entries) and _position(entries[end]) == _position(entries[start]):
                end += 1
            if end - start > 1:
                entries[start:end] = sorted(entries[start:end], key=_whole)
            start = end
    return data


class Tree:
    def __init__(self, root: Path, cgcignore_path: Optional[str]):
        self.root = root
        self.root_str = root.as_posix()
        self.cgcignore_path = cgcignore_path
        self.builder = parse_only_builder()
        self.kept_walk = KeptWalk()
        self.walk_check: List[str] = []  # with PI_CGC_ENGINE_CHECK=1: where a kept walk differed from cgc's

    def discover(self) -> List[Path]:
        """cgc's discover_files_to_index, run again only where the tree changed (see "The kept walk")."""
        extensions = set(self.builder.parsers)
        if whole_walk_only():
            self.kept_walk.delta = None
            return discover_files_to_index(self.root, self.cgcignore_path, supported_extensions=extensions)[0]
        _KEEPING[0] = self.kept_walk
        try:
            found, _ = discover_files_to_index(self.root, self.cgcignore_path, supported_extensions=extensions)
            files = self.kept_walk.finish(found)
        except BaseException:
            self.kept_walk.close()
            self.kept_walk = KeptWalk()  # a walk cut short keeps nothing
            raise
        finally:
            _KEEPING[0] = None
        if CHECK:
            whole = discover_files_to_index(self.root, self.cgcignore_path, supported_extensions=extensions)[0]
            if [f.as_posix() for f in whole] != [f.as_posix() for f in files]:
                self.walk_check.append(f"the kept walk found {len(files)} files where cgc's finds {len(whole)}: "
                                       f"{sorted(set(map(str, files)) ^ set(map(str, whole)))[:5]}")
        return files

    def parse(self, path: Path, known: Tuple[int, int, str]) -> FileEntry:
        # The pipeline parses with repo_path = the resolved root; a pre-scan of one file is that
        # file's share of the imports map.
        data = canonical_order(self.builder.parse_file(self.root, path, False))
        imports = pre_scan_for_imports([path], self.builder.parsers.keys(), self.builder.get_parser)
        if not parse_order_as_parsed():
            # Its names come in the parser's order too; each maps to this file alone.
            imports = dict(sorted(imports.items()))
        return FileEntry(known[0], known[1], known[2], data, imports)

    def parse_in_doubt(self, path: str, entry: FileEntry) -> bool:
        """Whether another parse of the same content may give more than this entry: a parser that raised
        (cgc's `parse_failed`: a file read mid-write, say), or a file whose extension has a parser held as
        having none (the parser failed to start)."""
        data = entry.data
        return bool(data.get("parse_failed")) or (
            bool(data.get("unsupported")) and file_ext(Path(path)) in self.builder.parsers)

    def merge_imports(self, files: Dict[str, FileEntry]) -> Dict[str, List[str]]:
        """pre_scan_for_imports over the whole tree: extension groups in order of first appearance
        in path order, files in path order, each name's paths deduplicated. Kept apart from
        merge_imports_kept, whose rebuild loop has the same shape: PI_CGC_ENGINE_CHECK compares the kept
        map with this one, which must not share its code."""
        groups: Dict[str, List[str]] = {}
        for path in sorted(files):
            groups.setdefault(file_ext(Path(path)), []).append(path)
        merged: Dict[str, List[str]] = _ImportsMap()
        # A set beside each list: common names (`__init__`, `get`) have hundreds of paths.
        seen: Dict[str, Set[str]] = {}
        for paths in groups.values():
            for path in paths:
                for name, found in files[path].imports.items():
                    bucket = merged.get(name)
                    if bucket is None:
                        bucket = merged[name] = []
                        seen[name] = set()
                    known = seen[name]
                    for item in found:
                        if item not in known:
                            known.add(item)
                            bucket.append(item)
        return merged

    @staticmethod
    def merge_imports_kept(prev: Optional["TreeState"], files: Dict[str, FileEntry],
                           changed: Set[str]) -> Tuple[Dict[str, List[str]], Dict[str, Tuple[str, ...]], List[str]]:
        """merge_imports, from the last merge where there is one: only the names the changed files import
        (before or after) are merged again, from the files that have them (kept per name, in merge
        order); when the files, or a changed file's names in order, changed, the map's key order (first
        appearance, file after file) is owed (settle_imports). Returns (the map, each name's files, the
        extension groups)."""
        if prev is not None and prev.import_owners is not None and prev.import_groups is not None and (
            all((path in prev.files) == (path in files) for path in changed)
            or len(prev.import_groups) == 1 and bool(files) and all(_ext_of(path) == prev.import_groups[0] for path in changed)
        ):
            # The same files (only changed ones can have come or gone), or a tree of one extension where only
            # files of it came or went: the same extension groups, in the same order (a pass over every file
            # otherwise, 1.5-3 ms at 5 000).
            groups = prev.import_groups
            rank = {ext: index for index, ext in enumerate(groups)}
            merge_order: List[str] = []  # read only when the last merge is not usable
        else:
            merge_order, rank = merge_order_of(files)
            groups = list(rank)
        usable = (prev is not None and prev.import_owners is not None and prev.import_groups == groups)
        if not usable:
            merged: Dict[str, List[str]] = _ImportsMap()
            owners: Dict[str, List[str]] = {}
            seen: Dict[str, Set[str]] = {}
            for path in merge_order:
                for name, found in files[path].imports.items():
                    bucket = merged.get(name)
                    if bucket is None:
                        bucket = merged[name] = []
                        seen[name] = set()
                        owners[name] = []
                    owners[name].append(path)
                    known = seen[name]
                    for item in found:
                        if item not in known:
                            known.add(item)
                            bucket.append(item)
            return merged, {name: tuple(paths) for name, paths in owners.items()}, groups
        assert prev is not None and prev.import_owners is not None
        prev_owners = prev.import_owners
        touched: Set[str] = set()
        reordered = len(prev.files) != len(files)
        for path in changed:
            before, after = prev.files.get(path), files.get(path)
            old_names = list(before.imports) if before is not None else []
            new_names = list(after.imports) if after is not None else []
            touched.update(old_names)
            touched.update(new_names)
            if (before is None) != (after is None) or set(old_names) != set(new_names):
                reordered = True
            elif old_names != new_names and not reordered:
                # The same names in another order (cgc's parser lists a file's names in an order that differs
                # from parse to parse): the map's order changed only if the names this file is the first to
                # have are in another order.
                reordered = [n for n in old_names if prev_owners[n][0] == path] != [n for n in new_names if prev_owners[n][0] == path]
        journal = _JOURNAL
        # In place under a journal (see Journal), else a copy: the last state's map and owners stay as they are.
        kept_owners = prev.import_owners if journal is not None else dict(prev.import_owners)
        values: Dict[str, List[str]] = {}
        for name in touched:
            paths = [p for p in prev_owners.get(name, ()) if p not in changed]
            paths.extend(p for p in changed if p in files and name in files[p].imports)
            if not paths:
                if journal is not None:
                    journal.delete(kept_owners, name, ordered=False)
                else:
                    kept_owners.pop(name, None)
                continue
            paths.sort(key=lambda p: (rank[_ext_of(p)], p))
            if journal is not None:
                journal.set(kept_owners, name, tuple(paths))
            else:
                kept_owners[name] = tuple(paths)
            bucket: List[str] = []
            known: Set[str] = set()
            for path in paths:
                for item in files[path].imports[name]:
                    if item not in known:
                        known.add(item)
                        bucket.append(item)
            values[name] = bucket
        # The last map with the touched names set again or removed has the right names and paths; a new name
        # is at its end, so when the order may have changed it is owed, and settled (settle_imports) only
        # where something can see it (as the kept indices' order: the indices lent to cgc, the views).
        was_owed = imports_owed(prev.imports_map)
        if journal is not None and type(prev.imports_map) is _ImportsMap:
            merged = prev.imports_map
            for name, paths in values.items():
                journal.set(merged, name, paths)
            for name in touched:
                if name not in values:
                    journal.delete(merged, name)
            journal.on_undo(merged, lambda moved: setattr(merged, "owed", was_owed or moved))
        else:
            merged = _ImportsMap(prev.imports_map)
            dict.update(merged, values)
            removed = [name for name in touched if name not in values and dict.__contains__(merged, name)]
            for name in removed:
                dict.__delitem__(merged, name)
            if removed:
                merged = _ImportsMap(dict.copy(merged))  # without the holes (see _Keeper.merge)
        merged.owed = reordered or was_owed
        if order_at_once():
            settle_imports(merged, files)
        return merged, kept_owners, groups

    @staticmethod
    def parsed(files: Dict[str, FileEntry]) -> List[Dict[str, Any]]:
        return [files[p].data for p in sorted(files) if "error" not in files[p].data]

    def resolve(self, files: Dict[str, FileEntry], imports_map: Dict[str, List[str]]) -> Dict[str, Any]:
        """Every link row a full index would write, in the pipeline's order."""
        data = self.parsed(files)
        imports_map = settled_imports(imports_map, files)
        inherits, _csharp = inh.build_inheritance_and_csharp_files(data, imports_map)
        implements = inh.build_go_implements_links(data)
        implements.extend(inh.build_haskell_implements_links(data))
        implements.extend(inh.build_elixir_implements_links(data))
        return {
            "inherits": inherits,
            "implements": implements,
            "embeds": inh.build_embeds_links(data),
            "companion": inh.build_companion_of_links(data),
            "partial": inh.build_partial_of_links(data),
            "part_of": inh.build_part_of_links(data),
            "metaclass": inh.build_metaclass_links(data, imports_map),
            "decorated": inh.build_decorated_by_links(data, imports_map),
            "binds": inh.build_binds_links(data, imports_map),
            "previews": inh.build_previews_links(data, imports_map),
            "calls": list(build_function_call_groups(data, imports_map, None)),
        }


@functools.lru_cache(maxsize=1 << 16)
def _ext_of(path: str) -> str:
    return file_ext(Path(path))


def merge_order_of(files: Dict[str, Any]) -> Tuple[List[str], Dict[str, int]]:
    """The order in which the imports map merges the files (extension groups in order of first appearance
    in path order, files in path order), and each extension group's rank."""
    order = sorted(files)
    groups = dict.fromkeys(_ext_of(path) for path in order)
    rank = {ext: index for index, ext in enumerate(groups)}
    return (sorted(order, key=lambda path: rank[_ext_of(path)]) if len(groups) > 1 else order), rank


@functools.lru_cache(maxsize=1 << 16)
def _resolved(path: str) -> str:
    return Path(path).resolve().as_posix()


# cgc's _purge_dangling_pathless_nodes, query for query, but for the Module and Parameter passes, which look
# only where a node can have lost its last referrer. On a graph with none dangling before (what a full index
# leaves), a Module loses its last IMPORTS or INCLUDES edge only when the file (or a class of the file) that
# had it is deleted, so only the modules those files pointed to can be dangling after (the engine asks the
# graph which, before the delete); a Parameter node carries its file's path and loses its HAS_PARAMETER edge
# only when that file's function is deleted, so only the changed files' can be. cgc's own passes scan every
# Module and every Parameter of the graph: most of an update's time at 1 000 files, and growing with it.
# The ExternalClass pass scans every ExternalClass (1.2 ms on FalkorDB at 5 000 files, 0.1 at 100): cgc 0.6.13
# makes such a node only with an INHERITS edge into it, from a row whose parent it could not resolve
# (EXTERNAL_PARENT), so one can lose its last edge only when the deleted files or the files whose links are
# written again had such a row (external_parents); otherwise the pass is skipped.
PURGE_QUERIES = (
    "UNWIND $modules AS name MATCH (m:Module {name: name}) WHERE NOT ()-[:IMPORTS|INCLUDES]->(m) "
    "WITH m LIMIT 5000 DETACH DELETE m RETURN count(m) AS deleted",
    "MATCH (n:ExternalClass) WHERE NOT ()-[]->(n) WITH n LIMIT 5000 DETACH DELETE n RETURN count(n) AS deleted",
    "MATCH (n:ExternalFunction) WHERE NOT ()-[]->(n) WITH n LIMIT 5000 DETACH DELETE n RETURN count(n) AS deleted",
    "MATCH (p:Parameter) WHERE p.path IN $paths AND NOT ()-[:HAS_PARAMETER]->(p) "
    "WITH p LIMIT 5000 DETACH DELETE p RETURN count(p) AS deleted",
)
# The same predicates for FalkorDB, which plans `NOT ()-[...]->(n)` as a walk over every node for each
# candidate (the Module pass: 22 ms at 1 000 files, growing with the graph), while indegree() reads the
# candidate's own edges (1.3 ms). Both FalkorDB Lite and the server have it (4.16); a FalkorDB without it
# gets the queries above.
PURGE_QUERIES_FALKORDB = (
    "UNWIND $modules AS name MATCH (m:Module {name: name}) WHERE indegree(m, 'IMPORTS', 'INCLUDES') = 0 "
    "WITH m LIMIT 5000 DETACH DELETE m RETURN count(m) AS deleted",
    "MATCH (n:ExternalClass) WHERE indegree(n) = 0 WITH n LIMIT 5000 DETACH DELETE n RETURN count(n) AS deleted",
    "MATCH (n:ExternalFunction) WHERE indegree(n) = 0 WITH n LIMIT 5000 DETACH DELETE n RETURN count(n) AS deleted",
    "MATCH (p:Parameter) WHERE p.path IN $paths AND indegree(p, 'HAS_PARAMETER') = 0 "
    "WITH p LIMIT 5000 DETACH DELETE p RETURN count(p) AS deleted",
)
_DEGREE_FUNCTION = [True]  # cleared when a FalkorDB answers that it has no indegree()


EXTERNAL_PARENT = "__external__"  # cgc's resolved_parent_file_path of an inheritance row it could not resolve


def external_parents(rows_of: Dict[str, Any], keys: Iterable[str]) -> bool:
    """Whether any of these files' inheritance rows (as the graph has them) points to an ExternalClass."""
    return any(row.get("resolved_parent_file_path") == EXTERNAL_PARENT
               for key in keys for row in (rows_of.get(key) or {}).get("inherits", ()))


def purge_dangling(writer: Any, paths: List[str], modules: List[str], backend: str,
                   external_classes: bool = True) -> None:
    """The dangling nodes an update can leave: `paths`' Parameters, `modules`' Module nodes, any External*
    (ExternalClass nodes only when `external_classes`: see PURGE_QUERIES)."""
    from codegraphcontext.tools.indexing.persistence.writer import _is_binder_exception

    falkordb = backend in ("falkordb", "falkordb-remote") and _DEGREE_FUNCTION[0]
    for query in PURGE_QUERIES_FALKORDB if falkordb else PURGE_QUERIES:
        if "$modules" in query and not modules or "ExternalClass" in query and not external_classes:
            continue
        params = {name: value for name, value in (("paths", paths), ("modules", modules)) if f"${name}" in query}
        try:
            while True:
                with writer.driver.session() as session:
                    result = session.run(query, **params).single()
                if not result or not result["deleted"]:
                    break
        except Exception as error:  # noqa: BLE001 - as cgc: a label this backend never made
            if falkordb and "indegree" in str(error).lower() and _DEGREE_FUNCTION[0]:
                _DEGREE_FUNCTION[0] = False
                log(f"this FalkorDB has no indegree(): {error}")
                # again from the first pass: each is idempotent
                return purge_dangling(writer, paths, modules, backend, external_classes)
            if not _is_binder_exception(error):
                raise


def norm(path: Any) -> str:
    return _resolved(str(path)) if path else ""


def write_links(writer: Any, chosen: Dict[str, Any], imports_map: Dict[str, Any]) -> int:
    """cgc's own link writers, in the pipeline's order, given the chosen rows of each kind."""
    groups = chosen["calls"]
    if chosen["inherits"]:
        writer.write_inheritance_links(chosen["inherits"], [], imports_map)
    writer.write_implements_links(chosen["implements"])
    writer.write_embeds_links(chosen["embeds"])
    writer.write_companion_of_links(chosen["companion"])
    writer.write_partial_of_links(chosen["partial"])
    writer.write_part_of_links(chosen["part_of"])
    writer.write_metaclass_links(chosen["metaclass"])
    writer.write_decorated_by_links(chosen["decorated"])
    writer.write_binds_links(chosen["binds"])
    writer.write_previews_links(chosen["previews"])
    if any(groups):
        writer.write_function_call_groups(*groups)
    return sum(len(v) for k, v in chosen.items() if k != "calls") + sum(len(g) for g in groups)


def choose_links(state: "TreeState", owners: Set[str], changed: Set[str],
                 owner_keys: Optional[Set[str]] = None) -> Dict[str, Any]:
    """The rows to write, in the pipeline's order: every row of a file in `owners` (normalized paths;
    `owner_keys`, when given, are the same files by their keys), and every other row that points into a
    changed file (its edge was detached by the delete). The same rows, in the same order, as filtering the
    full lists: those are the files' rows in path order."""
    chosen: Dict[str, Any] = {kind: [] for kind in LINK_KEYS if kind != "calls"}
    groups: List[List[Dict[str, Any]]] = [[] for _ in range(CALL_GROUPS)]
    targeters = (state.candidates or {}).get("targeters")
    if owner_keys is not None and targeters is not None:
        # Only these files can have a row to write: the owners, and the files with a row into a changed one.
        keys = sorted(key for key in owner_keys | targeters.files_with(changed) if key in state.rows)
    else:
        keys = sorted(state.rows)
    for key in keys:
        own = state.rows[key]
        if norm(key) in owners:
            for index in range(CALL_GROUPS):
                groups[index].extend(own["calls"][index])
            for kind in PER_FILE_KINDS:
                chosen[kind].extend(own[kind])
        elif not SKIP_INCOMING and not state.targets[key].isdisjoint(changed):
            target = LINK_KEYS["calls"][1]
            for index in range(CALL_GROUPS):
                groups[index].extend(rows_by_target(own["calls"][index], target, changed, True,
                                                    state.row_positions, (key, "calls", index)))
            for kind in PER_FILE_KINDS:
                chosen[kind].extend(rows_by_target(own[kind], LINK_KEYS[kind][1], changed, True,
                                                   state.row_positions, (key, kind, 0)))
    for kind in WHOLE_KINDS:
        owner_key, target_key = LINK_KEYS[kind]
        chosen[kind] = [
            r for r in state.whole.get(kind, [])
            if norm(r.get(owner_key)) in owners or (not SKIP_INCOMING and norm(r.get(target_key)) in changed)
        ]
    chosen["calls"] = groups
    return chosen


def rows_kept(state: "TreeState", key: str, changed: Set[str], rows_of: Optional[Any] = None) -> Optional[Dict[str, Any]]:
    """A file's rows (from `rows_of`, default the state's) less those that point into a changed file: the
    delete of that file detached their edges, and choose_links writes them again whatever their owner."""
    rows = (state.rows if rows_of is None else rows_of).get(key)
    if rows is None:
        return None
    target = LINK_KEYS["calls"][1]
    kept: Dict[str, Any] = {"calls": [
        rows_by_target(group, target, changed, False, state.row_positions, (key, "calls", index))
        for index, group in enumerate(rows["calls"])
    ]}
    for kind in PER_FILE_KINDS:
        kept[kind] = rows_by_target(rows[kind], LINK_KEYS[kind][1], changed, False, state.row_positions, (key, kind, 0))
    return kept


# A file can hold a million call rows (cgc's heuristic calls: one per same-named function of the tree; at
# 5 000 files tinycss2's ast.py has 1.4 million) naming a hundred targets. For such lists the state keeps the
# positions of each target's rows, so that an update into one target reads that target's rows only.
BIG_ROW_LIST = 20_000


def rows_by_target(rows: List[Dict[str, Any]], target: str, changed: Set[str], into: bool,
                   positions_of: Dict[Tuple[str, str, int], Any], slot: Tuple[str, str, int]) -> List[Dict[str, Any]]:
    """The rows whose target (normalized) is in `changed` (`into`), or the others, in their order; each
    distinct target is normalized once."""
    if len(rows) >= BIG_ROW_LIST:
        kept = positions_of.get(slot)
        if kept is None or kept[0] is not rows:
            positions: Dict[Any, List[int]] = {}
            for at, row in enumerate(rows):
                positions.setdefault(row.get(target), []).append(at)
            kept = positions_of[slot] = (rows, positions)
        hit_at = sorted(at for raw, ats in kept[1].items() if norm(raw) in changed for at in ats)
        if into:
            return [rows[at] for at in hit_at]
        if not hit_at:
            return list(rows)
        dropped = set(hit_at)
        return [row for at, row in enumerate(rows) if at not in dropped]
    raws = {row.get(target) for row in rows}
    hits = {raw for raw in raws if norm(raw) in changed}
    if not hits:
        return [] if into else list(rows)
    return [row for row in rows if (row.get(target) in hits) is into]


def rewritten_owners(old: "TreeState", new: "TreeState", resolved: Set[str], changed: Set[str]) -> Set[str]:
    """Files, not themselves changed, whose rows differ after the change (their outgoing links are
    deleted and written again). Only re-resolved files can differ in the per-file kinds. Rows into a
    changed file do not count: they are written again anyway (a line added at the top of a file moves
    every function in it, so every row into it differs; at 1 000 files that rewrote 37 000 rows of 112
    files whose other rows were all unchanged)."""
    old_rows = as_before(old.rows)  # the new state's rows may be the same dict, changed in place (carried)
    rewritten = {
        key for key in resolved
        if key not in changed and old_rows.get(key) != new.rows.get(key)
        and rows_kept(old, key, changed, old_rows) != rows_kept(new, key, changed)
    }
    for kind in WHOLE_KINDS:
        owner_key = LINK_KEYS[kind][0]
        before: Dict[str, List[Any]] = {}
        after: Dict[str, List[Any]] = {}
        for rows, into in ((old.whole.get(kind, []), before), (new.whole.get(kind, []), after)):
            for row in rows:
                into.setdefault(norm(row.get(owner_key)), []).append(row)
        for owner in set(before) | set(after):
            if before.get(owner) != after.get(owner) and owner in new.files and owner not in changed:
                rewritten.add(owner)
    return rewritten


# ---------------------------------------------------------------------------------------------
# Narrowed resolution: an update re-resolves only the files whose rows it can change.
#
# cgc's build_function_call_groups builds tree-wide indices from every file (function_index,
# class_method_index, global_class_bases, ...; CALL_INDEXES), then resolves each file in a loop whose
# body reads those indices, the imports map and the file's own data, and only appends to the result
# (it writes no index; RecordingDict refuses writes). The engine keeps those indices per file between
# updates (see "Kept indices" below: what cgc would build from every file, proven so by the check), and
#   - records, per file, every key the loop body reads from each index while resolving that file (the
#     indices, once built, are swapped in cgc's frame for read-only dicts that note each read: the indices
#     themselves, lent as RecordingDicts for the loop (`lend`), or copies of those the engine did not build);
#   - at the next update diffs the indices of then against the ones before (the keys the changed files
#     touched: nothing else can differ), and re-resolves
#     the changed files plus every file that read a key whose value differs (R). A file outside R read
#     only keys whose values did not change; resolution is deterministic, so resolving it again would
#     read the same values, take the same path and produce the same rows and the same reads: both are
#     kept. (By induction over updates: a file's reads were recorded against the indices of the update
#     that last resolved it, and every update since kept their values.) Reads of a whole index (its
#     keys, its length, whether it is empty) are keys of their own, changed when those change. The
#     loop resolves R only: a module-level `enumerate` in cgc's calls module yields R's files when
#     given the engine's list, and passes everything else through.
#   - feeds cgc's callback pre-pass (every call x every same-named function) only what can land in an
#     entry R's files read: an entry is keyed by the called function's file, and a file's loop reads
#     only its own functions' entries, so the pre-pass sees only calls named like a function of R that
#     pass a bare name some function has (others add nothing), and skips (enumerate again) the
#     parameter lists of functions outside R.
# What the recording cannot see is handled by rule:
#   - the callback entries are not diffed (the pre-pass runs filtered): the entries of a function f
#     differ only if a changed file's calls named f differ, or the functions named by a bare name
#     passed to f moved or changed files (callback_names, which says why);
#   - disk reads: a JS/TS dynamic import probes which files exist, so files with one are re-resolved
#     whenever the set of files changed or a requested path is not an indexed file;
#   - the call groups are assigned after the loop from file_symbol_labels of each row's target file:
#     that read is added to the owner's reads;
#   - SKIP_EXTERNAL_RESOLUTION is read anew by cgc at each run: any change re-resolves everything;
#   - fields of the indexed functions and classes the resolution never reads (UNREAD_FIELDS: their
#     source text) are left out of the diff.
# INHERITS, DECORATED_BY and METACLASS rows are resolved per file the same way (cgc's builder called
# with one file, a recording imports map and node label index). Not narrowed, resolved over the whole
# tree at every update instead (each of their builders skips other languages first, so this is cheap):
# IMPLEMENTS (Go, Haskell, Elixir), EMBEDS, COMPANION_OF, PART_OF, BINDS, PREVIEWS and PARTIAL_OF --
# C# partial classes are grouped across files and Kotlin @Binds rows deduplicated across files, so
# per-file resolution would not be the same rows.
# Anything unexpected (a row owned by a file not resolved, an index missing, any fault of the hooks)
# raises and the update resolves the whole tree instead. PI_CGC_ENGINE_CHECK=1 resolves the whole tree
# after each narrowed resolution and refuses the update on any difference; PI_CGC_ENGINE_DEBUG=1 logs
# the index keys an update changed.

CHECK = os.environ.get("PI_CGC_ENGINE_CHECK") == "1"
# A planted fault, to show the check catches a wrong narrowing: only the changed files are resolved again.
NARROW_FAULT = os.environ.get("PI_CGC_ENGINE_NARROW_FAULT") == "1"
CALL_GROUPS = 10
# The indices the loop body of build_function_call_groups reads (the frame's local names).
CALL_INDEXES = (
    "file_symbol_labels", "type_aliases", "member_return_types", "member_return_types_full",
    "member_property_types", "global_class_bases", "class_method_names", "function_index", "class_index",
    "class_method_index", "extension_method_index", "global_variable_types", "interface_implementors",
)
PER_FILE_KINDS = ("inherits", "decorated", "metaclass")
WHOLE_KINDS = ("implements", "embeds", "companion", "partial", "part_of", "binds", "previews")
# Pseudo keys: a read of an index as a whole (its keys in order, everything, whether it is empty).
ALL_KEYS = "\0all-keys"
ALL_ITEMS = "\0all-items"
NONEMPTY = "\0nonempty"
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")  # cgc's test for a bare-name argument in the pre-pass
_MISSING = object()
_SINK: Optional[Set[Tuple[str, Any]]] = None  # the reads of the file being resolved
_RUN: Optional["_CallRun"] = None


class NarrowingFailed(Exception):
    """Something the narrowing relies on did not hold; the whole tree is resolved instead."""


class _Before:
    """A dict the journal changed, read as the last state had it: by key, its size, and its key order where the
    journal knows it (see Journal); `order_differs` compares that order with another dict's."""

    __slots__ = ("now", "olds", "order")

    def __init__(self, now: Dict[Any, Any], olds: Dict[Any, Any], order: Optional[Tuple[Any, ...]]):
        self.now, self.olds, self.order = now, olds, order

    def get(self, key: Any, default: Any = None) -> Any:
        olds = self.olds
        if key in olds:
            old = olds[key]
            return default if old is _MISSING else old
        return dict.get(self.now, key, default)

    def __contains__(self, key: Any) -> bool:
        return self.get(key, _MISSING) is not _MISSING

    def __len__(self) -> int:
        size = len(self.now)
        for key, old in self.olds.items():
            size += (old is not _MISSING) - dict.__contains__(self.now, key)
        return size

    def _came_or_went(self) -> bool:
        now = self.now
        return any((old is _MISSING) == dict.__contains__(now, key) for key, old in self.olds.items())

    def __iter__(self) -> Iterator[Any]:
        keys = _order_before(self.now, self.olds, self.order)
        if len(keys) != len(self):  # a key the last state had was taken out before its order was noted
            raise NarrowingFailed("the key order of a dict changed in place was read as the last state's")
        return iter(keys)

    def order_differs(self, other: Dict[Any, Any]) -> bool:
        # Other keys are another order; the same keys, set again in place, are in the same order unless a
        # settle moved them (then the order noted before it is compared).
        if self._came_or_went():
            return True
        return self.order is not None and _order_before(self.now, self.olds, self.order) != list(other)


def order_differs(old: Any, new: Dict[Any, Any]) -> bool:
    """Whether two dicts' keys are in another order (`old` may be a dict the update changed in place)."""
    if isinstance(old, _Before):
        return old.order_differs(new)
    return list(old) != list(new)


def _order_before(now: Dict[Any, Any], olds: Dict[Any, Any], order: Optional[Tuple[Any, ...]]) -> List[Any]:
    """The keys of a dict the journal changed, in the order the last state had them: the order the journal noted
    (before a settle, and with `exact` before the first key was taken out), else the dict's own (values set again
    keep their place, a new key goes to the end), less the keys the update added. Without `exact`, a key taken out
    before the order was noted is missing from it (the callers compare lengths)."""
    keys = order if order is not None else dict.__iter__(now)
    return [key for key in keys if olds.get(key, True) is not _MISSING]


class Journal:
    """The last state's large dicts that an update changes in place instead of copying (the copies of the kept
    indices, the imports map and its views cost 20-30 ms at 5 000 files), with the value each changed key had.
    Until the update commits, `before` reads such a dict as the last state has it; an update that does not
    commit (busy, refused, failed, a fault) puts every value back (undo). A key taken out and put back goes to
    the end, so the key order is noted before a settle reorders a dict (a pass over its keys, a fraction of the
    settle), and, with `exact` (an embedded database, where a busy lock makes undone updates common), before
    the first key is taken out: the order is then put back as well. Without it (5-7 ms saved on an update that
    takes a file out at 5 000 files), a dict whose order moved has it marked owed by its `on_undo`, as a kept
    index's is after any change (see "Kept indices"): right, at the cost of resolving again what reads it."""

    def __init__(self, exact: bool = True) -> None:
        self.exact = exact
        # id -> (the dict, each changed key's value before (_MISSING: absent), [its key order before, or None],
        # on_undo callbacks (given whether the order moved))
        self.dicts: Dict[int, Tuple[Dict[Any, Any], Dict[Any, Any], List[Optional[Tuple[Any, ...]]],
                                    List[Callable[[bool], None]]]] = {}

    def _track(self, d: Dict[Any, Any]) -> Tuple[Dict[Any, Any], Dict[Any, Any], List[Optional[Tuple[Any, ...]]],
                                                 List[Callable[[bool], None]]]:
        tracked = self.dicts.get(id(d))
        if tracked is None:
            tracked = self.dicts[id(d)] = (d, {}, [None], [])
        return tracked

    def on_undo(self, d: Dict[Any, Any], callback: Callable[[bool], None]) -> None:
        """`callback(order_moved)` runs when the update is undone, after the dict's values are put back."""
        self._track(d)[3].append(callback)

    def set(self, d: Dict[Any, Any], key: Any, value: Any) -> None:
        olds = self._track(d)[1]
        if key not in olds:
            olds[key] = dict.get(d, key, _MISSING)
        dict.__setitem__(d, key, value)

    def delete(self, d: Dict[Any, Any], key: Any, ordered: bool = True) -> None:
        _, olds, order, _ = self._track(d)
        if key not in olds:
            olds[key] = dict.get(d, key, _MISSING)
        if dict.__contains__(d, key):
            if self.exact and ordered and order[0] is None and olds[key] is not _MISSING:
                order[0] = tuple(dict.__iter__(d))
            dict.__delitem__(d, key)

    def before_reorder(self, d: Dict[Any, Any]) -> None:
        """Called before a settle puts `d`'s keys in another order in place (`d` may be the last state's)."""
        order = self._track(d)[2]
        if order[0] is None:
            order[0] = tuple(dict.__iter__(d))

    def before(self, d: Dict[Any, Any]) -> Any:
        """`d` as the last state had it, or `d` itself when the update has not changed it."""
        tracked = self.dicts.get(id(d))
        return d if tracked is None or tracked[0] is not d else _Before(d, tracked[1], tracked[2][0])

    def undo(self) -> None:
        for d, olds, order, callbacks in self.dicts.values():
            # A noted order is whole only when noted before any key the last state had was taken out.
            keys = _order_before(d, olds, order[0]) if order[0] is not None else None
            moved = False
            for key, old in olds.items():
                if old is _MISSING:
                    dict.pop(d, key, None)
                else:
                    moved = moved or not dict.__contains__(d, key)
                    dict.__setitem__(d, key, old)
            if keys is not None and len(keys) == len(d):
                items = [(key, dict.__getitem__(d, key)) for key in keys]
                dict.clear(d)
                dict.update(d, items)
                moved = False
            elif keys is not None:
                moved = True
            for callback in callbacks:
                callback(moved)
        self.dicts.clear()


# The journal of the update under way, when its dicts may be changed in place (see Journal).
_JOURNAL: Optional[Journal] = None


def as_before(d: Any) -> Any:
    """A dict of the last state as it had it, whether or not the update under way changed it in place."""
    journal = _JOURNAL
    return d if journal is None else journal.before(d)


def before_reorder(d: Dict[Any, Any]) -> None:
    """Notes a dict's key order before a settle puts its keys in another order in place."""
    if _JOURNAL is not None:
        _JOURNAL.before_reorder(d)


class DebugClock:
    """With PI_CGC_ENGINE_DEBUG=1, CPU ms per phase, logged."""

    def __init__(self) -> None:
        self.on = bool(os.environ.get("PI_CGC_ENGINE_DEBUG"))
        self.last = time.process_time()
        self.laps: List[str] = []

    def lap(self, name: str) -> None:
        if self.on:
            now = time.process_time()
            self.laps.append(f"{name} {round((now - self.last) * 1000, 1)}")
            self.last = now

    def report(self, what: str) -> None:
        if self.on:
            log(f"{what}: {', '.join(self.laps)} (CPU ms)")


def _note(tag: str, key: Any) -> None:
    sink = _SINK
    if sink is not None:
        try:
            sink.add((tag, key))
        except TypeError:  # an unhashable key: the lookup itself raises the same way in cgc
            sink.add((tag, ALL_ITEMS))


class _LendableDict(dict):
    """The layout shared by the indices the engine builds and the recording dicts it gives cgc: one can
    become the other in place (`lend`), so a 5 000-file index is recorded without being copied."""

    __slots__ = ("settle", "tag", "owed", "chosen_only", "run")  # the last two: _FunctionsByName's


class KeptDict(_LendableDict):
    """An index the engine built: a plain dict (it keeps dict's own iteration, so copies of it are fast)."""

    __slots__ = ()


class _OwedOrderDict(_LendableDict):
    """A copy of a kept index given to cgc whose key order may be owed (see "Kept indices", the order): before
    anything that can see the order, `settle` (set by the engine) puts the keys in cgc's order."""

    __slots__ = ()

    def _settled(self) -> None:
        settle = self.settle
        if settle is not None:
            self.settle = None
            settle(self)

    def __iter__(self) -> Iterator[Any]:
        self._settled()
        return dict.__iter__(self)

    def __reversed__(self) -> Iterator[Any]:
        self._settled()
        return dict.__reversed__(self)  # type: ignore[attr-defined]

    def keys(self) -> Any:
        self._settled()
        return dict.keys(self)

    def values(self) -> Any:
        self._settled()
        return dict.values(self)

    def items(self) -> Any:
        self._settled()
        return dict.items(self)

    def copy(self) -> Dict[Any, Any]:
        self._settled()
        return dict(dict.items(self))

    def __repr__(self) -> str:
        self._settled()
        return dict.__repr__(self)

    def __or__(self, other: Any) -> Any:
        self._settled()
        return dict.__or__(self, other)


def refill_after(settle: Callable[[], None], source: Dict[Any, Any]) -> Callable[[Dict[Any, Any]], None]:
    """An _OwedOrderDict's `settle`: settles the dict it was copied from (in place), then copies it again."""

    def refill(copy: Dict[Any, Any]) -> None:
        settle()
        dict.clear(copy)
        dict.update(copy, source)

    return refill


class RecordingDict(_OwedOrderDict):
    """A copy of one of cgc's indices that notes every read into _SINK. Writes are refused: the
    loop body is known to write none, and one would make the recorded reads meaningless."""

    __slots__ = ()

    def __init__(self, source: Dict[Any, Any], tag: str):
        dict.__init__(self, source)
        self.tag = tag
        self.settle = None

    def __getitem__(self, key: Any) -> Any:
        _note(self.tag, key)
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        _note(self.tag, key)
        return dict.get(self, key, default)

    def __contains__(self, key: Any) -> bool:
        _note(self.tag, key)
        return dict.__contains__(self, key)

    def __iter__(self) -> Iterator[Any]:
        _note(self.tag, ALL_KEYS)
        return _OwedOrderDict.__iter__(self)

    def __reversed__(self) -> Iterator[Any]:
        _note(self.tag, ALL_KEYS)
        return _OwedOrderDict.__reversed__(self)

    def __len__(self) -> int:
        _note(self.tag, ALL_KEYS)
        return dict.__len__(self)

    def __bool__(self) -> bool:
        _note(self.tag, NONEMPTY)
        return dict.__len__(self) > 0

    def keys(self) -> Any:
        _note(self.tag, ALL_KEYS)
        return _OwedOrderDict.keys(self)

    def values(self) -> Any:
        _note(self.tag, ALL_ITEMS)
        return _OwedOrderDict.values(self)

    def items(self) -> Any:
        _note(self.tag, ALL_ITEMS)
        return _OwedOrderDict.items(self)

    def copy(self) -> Dict[Any, Any]:
        _note(self.tag, ALL_ITEMS)
        return _OwedOrderDict.copy(self)

    def __eq__(self, other: Any) -> bool:
        _note(self.tag, ALL_ITEMS)
        return dict.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        _note(self.tag, ALL_ITEMS)
        return dict.__ne__(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        _note(self.tag, ALL_ITEMS)
        return _OwedOrderDict.__repr__(self)

    def __or__(self, other: Any) -> Any:
        _note(self.tag, ALL_ITEMS)
        return _OwedOrderDict.__or__(self, other)

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise NarrowingFailed(f"cgc wrote to the {self.tag} index while resolving")

    __setitem__ = __delitem__ = __ior__ = _refuse  # type: ignore[assignment]
    setdefault = pop = popitem = update = clear = _refuse  # type: ignore[assignment]


class CallbackRecordingDict(RecordingDict):
    """callback_arg_targets: the loop reads (its own file, function, parameter); noted by function."""

    __slots__ = ()

    def _key(self, key: Any) -> Any:
        return key[1] if isinstance(key, tuple) and len(key) == 3 else ALL_ITEMS

    def __getitem__(self, key: Any) -> Any:
        _note(self.tag, self._key(key))
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        _note(self.tag, self._key(key))
        return dict.get(self, key, default)

    def __contains__(self, key: Any) -> bool:
        _note(self.tag, self._key(key))
        return dict.__contains__(self, key)


def lend(index: Dict[Any, Any], tag: str, lent: List[Tuple[Any, type]],
         settle: Optional[Callable[[], None]] = None) -> RecordingDict:
    """The index as cgc reads it while the chosen files resolve: every read noted. An index the engine built
    (a KeptDict, the imports map) becomes that RecordingDict in place until give_back: a copy of each of
    the 18 indices at every update cost 10-17 ms at 5 000 files. Any other index is copied. `settle`
    puts an owed key order right in the index (see "Kept indices"); the recording dict then sees it."""
    if isinstance(index, _LendableDict) and not isinstance(index, _OwedOrderDict):
        original = type(index)
        index.__class__ = RecordingDict
        lent.append((index, original))
        index.tag = tag
        index.settle = None
        if settle is not None:
            def settle_in_place(_recording: Dict[Any, Any]) -> None:
                index.__class__ = original  # the settling code writes to it, which a RecordingDict refuses
                try:
                    settle()
                finally:
                    index.__class__ = RecordingDict

            index.settle = settle_in_place
        return index  # type: ignore[return-value]
    copy = RecordingDict(index, tag)
    if settle is not None:
        copy.settle = refill_after(settle, index)
    return copy


def give_back(lent: List[Tuple[Any, type]]) -> None:
    """Every index lent to cgc as it was before (nothing in it may hold a function: the state is pickled)."""
    while lent:
        index, original = lent.pop()
        index.__class__ = original
        index.settle = None
        index.tag = None
        index.chosen_only = index.run = None


class _Parsed(dict):
    """A file's parsed data as given to cgc: its function_calls are what the run decides."""

    __slots__ = ("key",)

    def get(self, name: Any, default: Any = None) -> Any:
        if name == "function_calls":
            run = _RUN
            if run is not None:
                return run.function_calls(self, default)
        return dict.get(self, name, default)


def _parsed_key(fd: "_Parsed") -> str:
    return fd.key


def entries_at(data: List["_Parsed"], keys: Iterable[str]) -> List[Tuple[int, "_Parsed"]]:
    """The entries of the engine's list (in key order) of these keys, with their positions, in the list's order:
    found by key, not by a pass over every file (5 000 of them)."""
    found = []
    for key in sorted(keys):
        at = bisect.bisect_left(data, key, key=_parsed_key)
        if at < len(data) and data[at].key == key:
            found.append((at, data[at]))
    return found


def _enumerate_hook(iterable: Any, start: int = 0) -> Any:
    """Installed as `enumerate` in cgc's calls module; only the loop over the engine's list differs."""
    run = _RUN
    if run is not None:
        if iterable is run.data:
            return run.loop(sys._getframe(1), start)
        if run.in_prepass:
            if id(iterable) not in run.param_lists:
                # The callback pre-pass's `enumerate(params)` over a function no chosen file defines:
                # what it would add is keyed by that function's file, which no chosen file reads.
                return iter(())
            return run.parameters(iterable, start)
    return enumerate(iterable, start)


class _FunctionsByName(_OwedOrderDict):
    """cgc's _functions_by_name during a narrowed callback pre-pass. The pre-pass looks a name up twice:
    for the functions a call may call (the entries go under each one's file), then, inside the loop
    over each one's parameters, for the functions a bare-name argument may mean. The first gets only
    the chosen files' functions of that name (the entries under other files are read by no chosen
    file; the order of the rest is kept), the second everything, as cgc built it."""

    __slots__ = ()

    def get(self, name: Any, default: Any = None) -> Any:
        if self.run.in_parameters or not self.run.in_prepass:
            return dict.get(self, name, default)
        return self.chosen_only.get(name, default)


def _view_of(make: Any, lang: str, imports_map: Dict[str, List[str]]) -> Dict[str, List[str]]:
    """cgc's _get_lang_imports(lang) (a closure of build_function_call_groups) over another imports map."""
    import types

    cells = []
    for index, name in enumerate(make.__code__.co_freevars):
        if name == "imports_map":
            cells.append(types.CellType(imports_map))
        elif name == "_lang_imports_cache":
            cells.append(types.CellType({}))
        else:
            cells.append(make.__closure__[index])
    return types.FunctionType(make.__code__, make.__globals__, make.__name__, make.__defaults__, tuple(cells))(lang)


def _locals_to_fast(frame: Any) -> None:
    import ctypes

    ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(frame), ctypes.c_int(0))


def call_arg_names(entry: FileEntry) -> Dict[str, Set[str]]:
    """Bare-name argument -> names of the calls passing it (what cgc's callback pre-pass matches)."""
    if entry.callargs is None:
        found: Dict[str, Set[str]] = {}
        for call in entry.data.get("function_calls") or []:
            name = call.get("name")
            if not name:
                continue
            for arg in call.get("args") or []:
                text = str(arg).strip()
                if IDENTIFIER.fullmatch(text):
                    found.setdefault(text, set()).add(name)
        entry.callargs = found
    return entry.callargs


def call_positions(entry: FileEntry) -> Dict[str, Tuple[int, ...]]:
    """Call name -> the positions of the file's calls of that name passing a bare name, in order."""
    if entry.callpos is None:
        found: Dict[str, List[int]] = {}
        for index, call in enumerate(entry.data.get("function_calls") or []):
            name = call.get("name")
            if name and any(IDENTIFIER.fullmatch(str(arg).strip()) for arg in call.get("args") or []):
                found.setdefault(name, []).append(index)
        entry.callpos = {name: tuple(found[name]) for name in found}
    return entry.callpos


def call_facts(entry: FileEntry) -> None:
    """Derives what updates read of a file's calls (kept with the file: the first update pays nothing)."""
    call_arg_names(entry)
    call_positions(entry)


def call_names(entry: FileEntry) -> FrozenSet[str]:
    if entry.callnames is None:
        entry.callnames = frozenset(name for names in call_arg_names(entry).values() for name in names)
    return entry.callnames


# Fields of the parsed functions and classes that cgc's resolution never reads (the entries of
# function_index & co. are shallow copies of them; calls.py and inheritance.py name neither, read
# entries by literal key only, and never compare whole entries). Most edits change a function's
# source; without this every file reading that function's entry would be re-resolved.
UNREAD_FIELDS = frozenset({"source", "docstring"})


def _same_entries(before: Any, after: Any) -> bool:
    """Equal, but for the unread fields of the entry dicts a value lists."""
    if not (isinstance(before, list) and isinstance(after, list)) or len(before) != len(after):
        return False
    for a, b in zip(before, after):
        if a == b:
            continue
        if not (isinstance(a, dict) and isinstance(b, dict)):
            return False
        if a.keys() - UNREAD_FIELDS != b.keys() - UNREAD_FIELDS:
            return False
        if any(a[k] != b[k] for k in a if k not in UNREAD_FIELDS):
            return False
    return True


def diff_index(tag: str, old: Dict[Any, Any], new: Dict[Any, Any], into: Set[Tuple[str, Any]]) -> None:
    """Adds (tag, key) for every key whose value differs, and the pseudo keys that changed."""
    changed = False
    for key, value in new.items():
        before = old.get(key, _MISSING)
        if before is _MISSING or (before != value and not _same_entries(before, value)):
            into.add((tag, key))
            changed = True
    for key in old:
        if key not in new:
            into.add((tag, key))
            changed = True
    if changed or list(old) != list(new):
        into.add((tag, ALL_ITEMS))
    if list(old) != list(new):
        into.add((tag, ALL_KEYS))
    if bool(old) != bool(new):
        into.add((tag, NONEMPTY))


class _CallRun:
    """One call of cgc's build_function_call_groups that resolves only the files `decide` picks."""

    def __init__(self, data: List[_Parsed], decide: Callable[[Dict[str, Any]], Set[str]]):
        self.data = data
        self.decide = decide
        self.chosen: Optional[Set[str]] = None
        self.names: Set[str] = set()
        self.indices: Dict[str, Dict[Any, Any]] = {}
        self.skip_external: Optional[bool] = None
        self.deps: Dict[str, Set[Tuple[str, Any]]] = {}
        self.swapped = False
        self.defined: Dict[str, Any] = {}
        self.param_lists: Set[int] = set()
        self.in_prepass = False
        self.in_parameters = False
        self.reuse_views: Dict[str, Dict[str, List[str]]] = {}
        self.views: Dict[str, Dict[str, List[str]]] = {}
        # The last resolution's views and the imports map's names whose paths may differ since (the views
        # are patched: see loop), and with PI_CGC_ENGINE_CHECK=1 where a patched view differs from cgc's.
        self.patch_views: Optional[Tuple[Dict[str, Dict[str, List[str]]], Set[str]]] = None
        self.view_check: List[str] = []
        # The views whose order is owed (as the imports map's: see Tree.merge_imports_kept): those of the last
        # resolution given again, and those patched when the map's order may have changed or a name came.
        self.views_owed: Set[str] = set()
        self.imports_map: Dict[str, List[str]] = {}
        self.imports_reordered = True
        # The kept indices of this run (None: cgc builds them from every file), and the files by the names
        # of their calls passing a bare name (None: the callback pre-pass sees every file).
        self.keeper: Optional[_Keeper] = None
        self.callers: Optional[CandidateIndex] = None
        self.files: Dict[str, FileEntry] = {}
        self.debug: Optional[DebugClock] = None
        self.lent: List[Tuple[Any, type]] = []  # the indices lent to cgc in place (give_back after the run)
        self.prev: Optional["TreeState"] = None  # the last state (an undone update may leave its views owed)

    def iterate(self, frame: Any) -> Iterator[Any]:
        """A loop of cgc's over the engine's list (see "Kept indices")."""
        role = _LOOP_ROLES.get(frame.f_lineno) if frame.f_code is build_function_call_groups.__code__ else None
        keeper = self.keeper
        if role in LOOP_DICTS and keeper is not None:
            return keeper.take(role, keeper.files_for(role), frame)  # type: ignore[arg-type]
        if role == "kotlin-check" and keeper is not None:
            return iter(())  # kept only for a tree without a Kotlin file: any() over it is False
        if role == "prepass" and self.callers is not None:
            if self.chosen is None:
                self.capture(frame)
            names, files = self.names, self.files
            # In path order, as the list: the files with a call named like one of `names` passing a bare name.
            return iter([
                files[key].parsed for key in sorted(self.callers.files_with(names))
                if key in files and "error" not in files[key].data and not call_names(files[key]).isdisjoint(names)
            ])
        if keeper is not None and role != "prepass":
            raise NarrowingFailed(f"a loop over every file that the kept indices do not know (line {frame.f_lineno})")
        return list.__iter__(self.data)

    def capture(self, frame: Any) -> None:
        if frame.f_code is not build_function_call_groups.__code__:
            raise NarrowingFailed("the hook was not called from build_function_call_groups")
        loc = frame.f_locals
        keeper = self.keeper
        if keeper is not None:
            # The full indices go where cgc's (built from the taken files, then emptied) were.
            for name in (*LOOP_DICTS["labels"], *LOOP_DICTS["index"], "interface_implementors"):
                if type(loc.get(name)) is not dict or loc[name]:
                    raise NarrowingFailed(f"cgc's {name} is not the empty dict the kept indices left")
                loc[name] = keeper.full[name]
            loc["_functions_by_name"] = keeper.full["_functions_by_name"]
        missing = [name for name in CALL_INDEXES if not isinstance(loc.get(name), dict)]
        if missing:
            raise NarrowingFailed(f"cgc's resolution has no {', '.join(missing)}")
        self.indices = {name: loc[name] for name in CALL_INDEXES}
        if keeper is not None:
            self.indices["_functions_by_name"] = keeper.full["_functions_by_name"]
        self.skip_external = bool(loc.get("skip_external"))
        functions_by_name = loc.get("_functions_by_name")
        if not isinstance(functions_by_name, dict):
            raise NarrowingFailed("cgc's callback pre-pass has no _functions_by_name")
        self.chosen = self.decide({"indices": self.indices, "skip_external": self.skip_external,
                                   "defined": functions_by_name.keys(), "keeper": keeper})
        chosen_data = self.chosen_data()
        self.names = {fn.get("name") for _, fd in chosen_data for fn in dict.get(fd, "functions") or []}
        self.defined = functions_by_name
        # The parameter lists of the chosen files' functions, as the pre-pass reads them from the
        # index entries (shallow copies of the parsed functions: the same list objects).
        chosen_paths = set()
        for _, fd in chosen_data:
            chosen_paths.add(_calls_module._resolved_posix(dict.__getitem__(fd, "path")))
            for fn in dict.get(fd, "functions") or []:
                params = fn.get("args") or fn.get("parameters")
                if params:
                    self.param_lists.add(id(params))
        if type(functions_by_name) is KeptDict:
            # The kept index becomes the narrowed one in place until give_back (a copy: 5-10 ms at 5 000 files).
            narrowed = functions_by_name
            narrowed.__class__ = _FunctionsByName
            self.lent.append((narrowed, KeptDict))
            settle = keeper.settle_of("_functions_by_name") if keeper is not None else None
            narrowed.settle = (lambda _narrowed: settle()) if settle is not None else None  # type: ignore[misc]
        else:
            narrowed = _FunctionsByName(functions_by_name)
            narrowed.settle = keeper.settler("_functions_by_name") if keeper is not None else None
        narrowed.run = self
        if keeper is not None:
            # A file's entries under a name are its own share (its path first in each), and the full lists join
            # the shares in path order: the chosen files' shares, joined, are the full lists less the others'
            # entries (`<module>` is every file's name: a pass over 5 000 entries otherwise).
            chosen_only: Dict[str, List[Any]] = {name: [] for name in self.names}
            for key in sorted(self.chosen):
                for name, pairs in keeper.part_of(key, "_functions_by_name").items():
                    bucket = chosen_only.get(name)
                    if bucket is not None:
                        bucket.extend(pairs)
            narrowed.chosen_only = chosen_only
        else:
            narrowed.chosen_only = None
        if keeper is None or CHECK:
            filtered = {name: [pair for pair in dict.get(functions_by_name, name, []) if pair[0] in chosen_paths]
                        for name in self.names}
            if narrowed.chosen_only is not None and narrowed.chosen_only != filtered:
                raise NarrowingFailed("the chosen files' shares of _functions_by_name are not its entries of theirs")
            narrowed.chosen_only = filtered
        loc["_functions_by_name"] = narrowed
        _locals_to_fast(frame)
        after = frame.f_locals
        if after.get("_functions_by_name") is not narrowed:
            raise NarrowingFailed("the narrowed _functions_by_name did not take")
        if keeper is not None and any(after.get(name) is not self.indices[name] for name in CALL_INDEXES):
            raise NarrowingFailed("the kept indices did not take")
        if self.debug is not None:
            self.debug.lap("capture")
        self.in_prepass = True

    def parameters(self, params: Any, start: int) -> Iterator[Tuple[int, Any]]:
        self.in_parameters = True
        try:
            yield from enumerate(params, start)
        finally:
            self.in_parameters = False

    def function_calls(self, fd: _Parsed, default: Any) -> Any:
        calls = dict.get(fd, "function_calls", default)
        if self.swapped:
            return calls  # the loop: only the chosen files get here, and see all their calls
        if self.chosen is None:
            frame = sys._getframe(2)
            if "_functions_by_name" not in frame.f_locals:
                return calls  # the Kotlin pre-check of member receiver types: everything, as always
            self.capture(frame)  # the callback pre-pass starts: every index is built
        if not calls:
            return calls
        # The pre-pass adds an entry for (function f's file, f, parameter) from a call named f passing
        # a bare name some function has; the chosen files read only entries of their own functions.
        # A call named otherwise, or passing no such name, adds nothing a chosen file reads (a call with
        # no name neither: cgc skips it). The file's calls by name say where to look.
        names, defined = self.names, self.defined
        by_name = call_positions(self.files[fd.key])
        picked = []
        for name in (names.intersection(by_name) if len(names) < len(by_name) else by_name.keys() & names):
            for index in by_name[name]:
                for arg in calls[index].get("args") or []:
                    text = str(arg).strip()
                    if text in defined and IDENTIFIER.fullmatch(text):
                        picked.append(index)
                        break
        picked.sort()
        return [calls[index] for index in picked]

    def loop(self, frame: Any, start: int) -> Iterator[Tuple[int, Any]]:
        if self.chosen is None:
            self.capture(frame)
        self.in_prepass = False
        if self.debug is not None:
            self.debug.lap("pre-pass")
        loc = frame.f_locals
        # The per-language views of the imports map are built now, unrecorded, as the loop would
        # build them (each is a function of the map, key by key: read as the map's own keys). A view
        # the last resolution built from an equal map (same keys, same order) is that same function's
        # value: it is given to cgc's cache instead of being built again.
        cache = loc["_lang_imports_cache"]
        for lang, view in self.reuse_views.items():
            cache.setdefault(lang, view)
        if self.patch_views is not None:
            # A view is the map's names in its order, each with what cgc's _get_lang_imports makes of its
            # paths (or left out): the names whose paths may differ are given to cgc's own function (run
            # on a map of just them), every other name keeps its entry, in the map's order.
            # The last view with those names set again or removed: a name new to the view is at its end, so
            # then (or when the map's order may have changed) the view's order is owed (settle_view).
            old_views, touched = self.patch_views
            make = loc["_get_lang_imports"]
            imports_map = loc["imports_map"]
            sub = {name: dict.__getitem__(imports_map, name) for name in touched if dict.__contains__(imports_map, name)}
            for lang, old in old_views.items():
                if lang in cache:
                    continue
                fresh = _view_of(make, lang, sub)
                came = gone = False
                journal = _JOURNAL
                if journal is not None and type(old) is KeptDict:
                    view = old  # in place (see Journal)
                    for name in touched:
                        if name in fresh:
                            came = came or not dict.__contains__(view, name)
                            journal.set(view, name, fresh[name])
                        elif dict.__contains__(view, name):
                            journal.delete(view, name)
                    prev = self.prev
                    journal.on_undo(view, lambda moved, lang=lang: moved and prev is not None and setattr(
                        prev, "views_owed", prev.views_owed | {lang}))
                else:
                    view = KeptDict(old)
                    for name in touched:
                        if name in fresh:
                            came = came or name not in view
                            view[name] = fresh[name]
                        elif name in view:
                            del view[name]
                            gone = True
                    if gone:
                        view = KeptDict(view)  # without the holes (see _Keeper.merge)
                if came or self.imports_reordered:
                    self.views_owed.add(lang)
                cache[lang] = view
                if order_at_once():
                    self.views[lang] = view
                    self.settle_view(lang)
                if CHECK:
                    whole = _view_of(make, lang, settled_imports(imports_map, self.files))
                    mine = self.settled_view(lang, view)
                    if mine != whole or list(mine) != list(whole):
                        self.view_check.append(f"the {lang} view of the imports map differs from cgc's")
        langs = {dict.get(fd, "lang") for _, fd in self.chosen_data()}
        for lang in sorted(filter(None, langs)):
            if lang not in cache:
                settle_imports(loc["imports_map"], self.files)  # cgc builds this view from the map
            loc["_get_lang_imports"](lang)
        self.views = dict(cache)
        for lang in list(cache):
            cache[lang] = self.recording_view(lang)
        swapped: Dict[str, Any] = {"imports_map": self.recording_imports(loc["imports_map"])}
        for name in CALL_INDEXES:
            settle = self.keeper.settle_of(name) if self.keeper is not None else None
            swapped[name] = lend(loc[name], name, self.lent, settle)
        swapped["callback_arg_targets"] = CallbackRecordingDict(loc["callback_arg_targets"], "callback_fn")
        loc.update(swapped)
        _locals_to_fast(frame)
        after = frame.f_locals
        if any(after.get(name) is not value for name, value in swapped.items()):
            raise NarrowingFailed("the recording dicts of cgc's indices did not take")
        self.swapped = True
        if self.debug is not None:
            self.debug.lap("loop setup")
        return self._iterate(start)

    def settle_view(self, lang: str) -> None:
        """Puts a view whose order is owed in the imports map's order (the map settled first), in place."""
        if lang not in self.views_owed:
            return
        view = self.views[lang]
        imports_map = self.imports_map
        settle_imports(imports_map, self.files)
        items = [(name, view[name]) for name in dict.__iter__(imports_map) if name in view]
        if len(items) != len(view):
            raise NarrowingFailed(f"the {lang} view has names the imports map has not")
        before_reorder(view)
        view.clear()
        view.update(items)
        self.views_owed.discard(lang)

    def settled_view(self, lang: str, view: Dict[str, List[str]]) -> Dict[str, List[str]]:
        """A view in the imports map's order, leaving it as it is (for the check)."""
        if lang not in self.views_owed:
            return view
        order = settled_imports(self.imports_map, self.files)
        return {name: view[name] for name in dict.__iter__(order) if name in view}

    def recording_view(self, lang: str) -> "RecordingDict":
        settle = (lambda: self.settle_view(lang)) if lang in self.views_owed else None
        return lend(self.views[lang], "imports_map", self.lent, settle)

    def recording_imports(self, imports_map: Dict[str, List[str]]) -> "RecordingDict":
        settle = (lambda: settle_imports(imports_map, self.files)) if imports_owed(imports_map) else None
        return lend(imports_map, "imports_map", self.lent, settle)

    def _iterate(self, start: int) -> Iterator[Tuple[int, Any]]:
        global _SINK
        try:
            for at, fd in self.chosen_data():
                _SINK = self.deps.setdefault(fd.key, set())
                yield start + at, fd
                _SINK = None
        finally:
            _SINK = None

    def chosen_data(self) -> List[Tuple[int, "_Parsed"]]:
        return entries_at(self.data, self.chosen or ())


# ---------------------------------------------------------------------------------------------
# Kept indices: cgc's tree-wide indices patched per file instead of built from every file.
#
# build_function_call_groups builds its indices in loops over `all_file_data` (the engine's list, a
# _FileList): file_symbol_labels, then type_aliases, then (one loop) class_index, global_class_bases,
# function_index, class_method_names, class_method_index, extension_method_index and
# global_variable_types; then interface_implementors from global_class_bases and _functions_by_name from
# function_index (each iterating the other in order). Each of those loops adds, file after file, what that
# file contributes, and nothing else: keys of its own (file_symbol_labels, class_index, function_index are
# keyed by the file's path), a value per key that the last file to set it keeps (type_aliases,
# global_class_bases, global_variable_types), or items appended to a list or set per key in file order (the
# rest); a dict's keys are in the order of their first insertion. So each index is a function of the files'
# contributions in path order, and the engine keeps every file's contribution (its share, as cgc built
# it) and the full indices of the last resolution. An update makes each of those loops see only the files
# whose contribution may differ (the engine's list yields only them; what cgc builds from them is taken
# file by file), and then puts the full indices in cgc's locals: the last ones with the keys those files
# touched set again from their contributors (the files that contribute to the key, in path order), the
# keys no file has any more removed, new keys at the end. When a file's keys (in order) changed, cgc's key
# order (first insertion, file after file) is then owed: putting it right costs a pass over every file's
# share (about 10 ms an index at 5 000 files), and only what iterates an index can see it. So an owed order
# is settled when something does: cgc, through the recording dicts it is given (_OwedOrderDict: iterating one
# settles the kept index, and a copy of it), or the engine (interface_implementors, the check); the diff takes
# an owed order as changed. A file that came or went counts only by its keys (none in an index: no
# change). interface_implementors is cgc's own loop over global_class_bases, run again only when that
# changed; _functions_by_name is function_index's entries by name, kept like the others.
# A file's contribution depends on its own data, on type_aliases (canonical_type_for_maps) and on which
# names the imports map has (`in imports_map`, recorded per file while cgc builds its share): every file is
# taken again when type_aliases changed, and a file that asked about a name the change added to or removed
# from the map is taken again. Not kept (cgc builds everything from every file, as before): a tree with a
# Kotlin file (its member-type pass and has_kotlin read every file), the first resolution of a state
# (there is nothing kept yet: every file is taken, and its contribution kept), PI_CGC_ENGINE_FULL_INDICES=1
# (for comparisons), and any fault of the hooks. The callback pre-pass loop (a call x every same-named
# function) sees only the files that have a call named like a function of a file being resolved that
# passes a bare name (the others add nothing a resolved file reads; see function_calls). The diff the
# narrowing takes (decide) looks only at the keys the taken files touched. PI_CGC_ENGINE_CHECK=1 also
# builds cgc's indices from every file after each kept build and refuses the update unless every one is
# equal, values and key order.
# The imports map is kept the same way (Tree.merge_imports_kept: a name's paths merged again only when a
# changed file has the name), and so are cgc's per-language views of it (a view is the map's names, in its
# order, each with what _get_lang_imports makes of its paths: the names whose paths may differ go through
# cgc's own function, on a map of just them); their order is owed likewise (settle_imports,
# _CallRun.settle_view). The check compares both, settled, with cgc's own.

# name -> how the files' contributions combine: "file" (keys of the file's own), "last" (the last file's
# value), "concat" (lists, in file order), "union" (sets).
KEPT_INDEXES: Dict[str, str] = {
    "file_symbol_labels": "file", "type_aliases": "last", "class_index": "file", "function_index": "file",
    "global_class_bases": "last", "global_variable_types": "last", "class_method_names": "union",
    "class_method_index": "concat", "extension_method_index": "concat", "_functions_by_name": "concat",
}
# Kept in cgc's key order at every update: the engine compares type_aliases' order (every file is taken
# again when it changed); it is small. The others' order may be owed (see _Keeper.settle), unless
# PI_CGC_ENGINE_ORDER_AT_ONCE=1 (for comparisons).
ALWAYS_ORDERED = frozenset({"type_aliases"})
# The dicts each loop over all_file_data builds (the frame's local names), and the loop of each index.
LOOP_DICTS: Dict[str, Tuple[str, ...]] = {
    "labels": ("file_symbol_labels",),
    "aliases": ("type_aliases",),
    "index": ("class_index", "global_class_bases", "function_index", "class_method_names", "class_method_index",
              "extension_method_index", "global_variable_types"),
}
ROLE_OF: Dict[str, str] = {name: role for role, names in LOOP_DICTS.items() for name in names}
ROLE_OF["_functions_by_name"] = "index"
# Loops over all_file_data in build_function_call_groups: their line -> role (found in cgc's source at load).
_LOOP_ROLES: Dict[int, str] = {}
_TESTS: Optional[Set[Any]] = None  # the imports map's names asked about by the file being taken


def full_indices_only() -> bool:
    return os.environ.get("PI_CGC_ENGINE_FULL_INDICES") == "1"


def order_at_once() -> bool:
    """PI_CGC_ENGINE_ORDER_AT_ONCE=1: no order is owed (each is put right at every update), for comparisons."""
    return os.environ.get("PI_CGC_ENGINE_ORDER_AT_ONCE") == "1"


def find_loop_roles() -> Dict[int, str]:
    """The loops over all_file_data in build_function_call_groups, by what they build; {} if they are not
    the ones the kept indices were written for."""
    import ast
    import inspect
    import textwrap

    source = textwrap.dedent(inspect.getsource(build_function_call_groups))
    first = build_function_call_groups.__code__.co_firstlineno
    roles: Dict[int, str] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Name) and node.iter.id == "all_file_data":
            names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            if "file_symbol_labels" in names:
                role = "labels"
            elif "function_index" in names:
                role = "index"
            elif "type_aliases" in names:
                role = "aliases"
            elif "callback_arg_targets" in names:
                role = "prepass"
            else:
                role = "member"
            roles[first + node.iter.lineno - 1] = role
        elif isinstance(node, ast.comprehension) and isinstance(node.iter, ast.Name) and node.iter.id == "all_file_data":
            roles[first + node.iter.lineno - 1] = "kotlin-check"
    expected = ["aliases", "index", "kotlin-check", "labels", "member", "member", "prepass"]
    return roles if sorted(roles.values()) == expected else {}


class _FileList(list):
    """The engine's list of parsed files given to cgc: what a loop over it yields is the run's to say."""

    __slots__ = ()

    def __iter__(self) -> Iterator[Any]:
        run = _RUN
        if run is not None and run.data is self:
            frame = sys._getframe(1)
            if frame.f_code is build_function_call_groups.__code__:
                return run.iterate(frame)
        return list.__iter__(self)


class _ImportsMap(_LendableDict):
    """The imports map given to cgc: `in` notes the name asked about while a file's contribution is taken.
    `owed` (see Tree.merge_imports_kept): the right names and paths, not yet in cgc's order."""

    __slots__ = ()

    def __contains__(self, key: Any) -> bool:
        tests = _TESTS
        if tests is not None:
            tests.add(key)
        return dict.__contains__(self, key)


def imports_owed(imports_map: Dict[str, List[str]]) -> bool:
    return getattr(imports_map, "owed", False)


def imports_order(files: Dict[str, FileEntry]) -> Dict[str, None]:
    """The imports map's names in cgc's order: first appearance, file after file in merge order."""
    order: Dict[str, None] = {}
    for path in merge_order_of(files)[0]:
        order.update(dict.fromkeys(files[path].imports))
    return order


def settle_imports(imports_map: Dict[str, List[str]], files: Dict[str, FileEntry]) -> None:
    """Puts an imports map whose order is owed in cgc's order, in place."""
    if not imports_owed(imports_map):
        return
    order = imports_order(files)
    if len(order) != len(imports_map):
        raise NarrowingFailed(f"the kept imports map has {len(imports_map)} names where its files give {len(order)}")
    items = [(name, dict.__getitem__(imports_map, name)) for name in order]
    before_reorder(imports_map)
    dict.clear(imports_map)
    dict.update(imports_map, items)
    imports_map.owed = False  # type: ignore[attr-defined]


def settled_imports(imports_map: Dict[str, List[str]], files: Dict[str, FileEntry]) -> Dict[str, List[str]]:
    """The imports map in cgc's order, leaving it as it is (for checks and whole resolutions)."""
    if not imports_owed(imports_map):
        return imports_map
    settled = _ImportsMap(imports_map)
    settled.owed = True
    settle_imports(settled, files)
    return settled


def _names_of_functions(contribution: Dict[Any, List[Any]]) -> Dict[str, List[Tuple[str, Any]]]:
    """A file's share of _functions_by_name, from its share of function_index (cgc's loop, per file)."""
    found: Dict[str, List[Tuple[str, Any]]] = {}
    for (fpath, fname), funcs in contribution.items():
        bucket = found.setdefault(fname, [])
        for func in funcs:
            bucket.append((fpath, func))
    return found


def interface_implementors_of(global_class_bases: Dict[str, List[str]]) -> Dict[str, List[str]]:
    """cgc's loop building interface_implementors, as it is."""
    strip = _calls_module.strip_type_modifiers

    def simple_type_key(type_name: Optional[str]) -> Optional[str]:
        if not type_name:
            return None
        normalized = strip(type_name)
        return normalized.split(".")[-1] if normalized else None

    implementors_by_base: Dict[str, List[str]] = {}
    for class_name, bases in global_class_bases.items():
        for base in bases:
            for base_key in (base, simple_type_key(base)):
                if not base_key:
                    continue
                implementors = implementors_by_base.setdefault(base_key, [])
                if class_name not in implementors:
                    implementors.append(class_name)
    return implementors_by_base


def diff_keys(tag: str, old: Dict[Any, Any], new: Dict[Any, Any], keys: Iterable[Any], reordered: bool,
              into: Set[Tuple[str, Any]], order_known: bool = True) -> None:
    """diff_index restricted to `keys` (every key whose value may differ); `reordered` says the key order
    may have changed (then it is compared, or taken as changed when a side's order is owed: not
    `order_known`)."""
    changed = False
    for key in keys:
        before, after = old.get(key, _MISSING), new.get(key, _MISSING)
        if before is _MISSING and after is _MISSING:
            continue
        if before is _MISSING or after is _MISSING or (before != after and not _same_entries(before, after)):
            into.add((tag, key))
            changed = True
    order_changed = reordered and (not order_known or order_differs(old, new))
    if changed or order_changed:
        into.add((tag, ALL_ITEMS))
    if order_changed:
        into.add((tag, ALL_KEYS))
    if bool(old) != bool(new):
        into.add((tag, NONEMPTY))


class _Keeper:
    """The kept indices of one run: which files each loop takes, their contributions, the full indices."""

    def __init__(self, prev: Optional["TreeState"], data: List["_Parsed"], keys: List[str], changed: Set[str],
                 flipped: Set[str]):
        self.data = data
        self.keys = keys
        self.prev = prev  # the last state (an undone update may leave its indices' order owed)
        usable = prev is not None and prev.contrib is not None and prev.indices is not None and prev.contributors is not None
        # Without kept contributions every index is built from every file here, and its touched keys are the
        # new ones only: the diff then compares whole indices (decide).
        self.usable = usable
        self.prev_full: Dict[str, Dict[Any, Any]] = prev.indices if usable else {}  # type: ignore[union-attr, assignment]
        self.prev_contrib: Dict[str, Dict[str, Any]] = prev.contrib if usable else {}  # type: ignore[union-attr, assignment]
        self.prev_contributors: Dict[str, Dict[Any, Tuple[str, ...]]] = prev.contributors if usable else {}  # type: ignore[union-attr, assignment]
        present = SortedMembers(keys)
        # Files whose contributions may differ, per loop: changed ones still parsed, and for the index loop
        # those that asked the imports map about a name the change added or removed (and every file when
        # type_aliases changed: see take).
        # name -> the files whose index contribution asked the imports map about it (see CandidateIndex).
        self.prev_testers: Optional[CandidateIndex] = (prev.candidates or {}).get("testers") if usable else None  # type: ignore[union-attr]
        # The last contributions are every file the last state parsed (kept_contrib), so the files parsed now
        # without one, and those with one not parsed now, are changed files: found among them (two sets of
        # every key and their differences: 1 ms at 5 000 files), unless the counts say otherwise.
        if usable:
            contributed = self.prev_contrib.keys()
            base = {key for key in changed if key in present}
            self.gone = {key for key in changed if key in contributed and key not in present}
            if len(contributed) - len(self.gone) + sum(key not in contributed for key in base) != len(keys):
                base |= set(keys) - contributed
                self.gone = contributed - set(keys)
            if CHECK and (base != {key for key in changed if key in present} | (set(keys) - contributed)
                          or self.gone != contributed - set(keys)):
                raise NarrowingFailed("the files with a kept contribution are not the last state's parsed files")
            index = set(base)
            if flipped:
                pool = self.keys if self.prev_testers is None else self.prev_testers.files_with(flipped)
                index.update(key for key in pool if key in present and key in self.prev_contrib
                             and not self.prev_contrib[key]["index"]["tests"].isdisjoint(flipped))
        else:
            base = index = set(self.keys)
            self.gone = set()
        self.taken: Dict[str, Set[str]] = {"labels": base, "aliases": base, "index": index}
        self.contrib: Dict[str, Dict[str, Any]] = {}  # the taken files' new contributions
        self.full: Dict[str, Dict[Any, Any]] = {}
        self.contributors: Dict[str, Dict[Any, Tuple[str, ...]]] = {}
        self.touched: Dict[str, Set[Any]] = {}
        self.reordered: Dict[str, bool] = {}
        self.aliases_changed = False
        self.owns: Dict[str, List[Dict[str, Any]]] = {}
        # The indices whose full dict holds the right keys and values but not yet cgc's key order (see the
        # order, above): the last state's, and those a file with keys came to or left this time.
        self.owed: Set[str] = set(prev.order_owed) if usable else set()  # type: ignore[union-attr]

    def files_for(self, role: str) -> List["_Parsed"]:
        taken = self.taken[role]
        if len(taken) == len(self.data):
            return list.copy(self.data)  # every file (taken holds only keys of the list)
        return [fd for _, fd in entries_at(self.data, taken)]

    def take(self, role: str, files: List["_Parsed"], frame: Any) -> Iterator["_Parsed"]:
        """The loop of `role` over the taken files; what cgc adds for each is that file's contribution."""
        global _TESTS
        loc = frame.f_locals
        names = LOOP_DICTS[role]
        dicts = [loc.get(name) for name in names]
        if any(type(d) is not dict or d for d in dicts):
            raise NarrowingFailed(f"cgc's {role} indices are not the empty dicts the kept indices expect")
        try:
            for fd in files:
                tests: Set[Any] = set()
                _TESTS = tests if role == "index" else None
                yield fd
                _TESTS = None
                own = self.contrib.setdefault(fd.key, {}).setdefault(role, {})
                for name, built in zip(names, dicts):
                    if built:
                        own[name] = dict(built)
                        built.clear()
                if role == "index":
                    own["tests"] = frozenset(tests)  # type: ignore[assignment]
                    if "function_index" in own:
                        own["_functions_by_name"] = _names_of_functions(own["function_index"])
        finally:
            _TESTS = None
        for name in names:
            self.merge(name)
        if role == "aliases":
            # canonical_type_for_maps reads it while the index loop runs: cgc's own dict holds the full one.
            dicts[0].update(self.full["type_aliases"])
            old = self.prev_full.get("type_aliases")
            self.aliases_changed = old is None or old != self.full["type_aliases"] or list(old) != list(self.full["type_aliases"])
            if self.aliases_changed:
                self.taken["index"] = set(self.keys)  # every file's contribution may differ: all are taken again
        if role == "index":
            self.merge("_functions_by_name")
            gcb = self.full["global_class_bases"]
            old_gcb = self.prev_full.get("global_class_bases")
            # Not reordered: the same keys in the same order (the last dict with values set again), and
            # only the touched keys' values can differ.
            if old_gcb is not None and not self.reordered["global_class_bases"] \
                    and all(as_before(old_gcb).get(k, _MISSING) == dict.get(gcb, k, _MISSING)
                            for k in self.touched["global_class_bases"]) \
                    and "interface_implementors" in self.prev_full:
                self.full["interface_implementors"] = self.prev_full["interface_implementors"]
                self.touched["interface_implementors"] = set()
                self.reordered["interface_implementors"] = False
            else:
                self.settle("global_class_bases")
                self.full["interface_implementors"] = KeptDict(interface_implementors_of(gcb))
                self.touched["interface_implementors"] = set(self.full["interface_implementors"]) | set(
                    self.prev_full.get("interface_implementors", {}))
                self.reordered["interface_implementors"] = True

    def _owns(self, role: str) -> List[Dict[str, Any]]:
        """Every parsed file's contributions from the loop of `role`, in path order."""
        found = self.owns.get(role)
        if found is None:
            taken, new, old = self.taken[role], self.contrib, self.prev_contrib
            found = self.owns[role] = [
                (new.get(key, {}) if key in taken else old.get(key, {})).get(role) or {} for key in self.keys
            ]
        return found

    def part_of(self, key: str, name: str) -> Dict[Any, Any]:
        """A parsed file's share of a kept index after this run's loops."""
        role = ROLE_OF[name]
        own = self.contrib.get(key, {}).get(role) if key in self.taken[role] else self.prev_contrib.get(key, {}).get(role)
        return (own or {}).get(name) or {}

    def merge(self, name: str) -> None:
        kind = KEPT_INDEXES[name]
        loop_taken = self.taken[ROLE_OF[name]]
        prev_full = self.prev_full.get(name)
        if prev_full is None:
            # Nothing kept: built from every file's contribution (every file was taken).
            full: Dict[Any, Any] = KeptDict()
            contributors: Dict[Any, List[str]] = {}
            for key in self.keys:
                part = self.part_of(key, name)
                if not part:
                    continue
                if kind == "last" or kind == "file":
                    full.update(part)
                if kind != "file":
                    for item in part:
                        contributors.setdefault(item, []).append(key)
            if kind in ("concat", "union"):
                for item, owners in contributors.items():
                    full[item] = self._combine(kind, name, item, owners)
            self.full[name] = full
            self.contributors[name] = {k: tuple(v) for k, v in contributors.items()} if kind != "file" else {}
            self.touched[name] = set(full)
            self.reordered[name] = True
            self.owed.discard(name)
            return
        changed_files = sorted(loop_taken) + sorted(self.gone)  # the taken files are among the keys, in path order
        touched: Set[Any] = set()
        reordered = False  # a file that came or went changes the order only through its keys (below)
        order_differs = []
        for key in changed_files:
            old_part = self.prev_contrib.get(key, {}).get(ROLE_OF[name], {}).get(name) or {}
            new_part = self.part_of(key, name) if key not in self.gone else {}
            if old_part.keys() != new_part.keys():
                reordered = True
            elif not reordered and list(old_part) != list(new_part):
                order_differs.append((key, old_part, new_part))
            touched.update(old_part)
            touched.update(new_part)
        prev_contributors = self.prev_contributors.get(name, {})
        if order_differs and not reordered:
            # The same files, each with the same keys (so each key has the same contributors), some in another
            # order: the key order is each file's keys it is the first contributor of, file after file, so it
            # changed only if such a file's first-contributed keys are in another order (cgc's parser lists a
            # file's functions in an order that differs from parse to parse).
            if kind == "file":
                reordered = True
            else:
                for key, old_part, new_part in order_differs:
                    if [k for k in old_part if prev_contributors[k][0] == key] != [k for k in new_part if prev_contributors[k][0] == key]:
                        reordered = True
                        break
        contributors_new: Dict[Any, Tuple[str, ...]] = {}
        owners_before: Dict[Any, Tuple[str, ...]] = {}  # the touched keys' contributors before (set in place below)
        # Under a journal the last state's dicts are changed in place (see Journal), else copied.
        journal = _JOURNAL if name not in ALWAYS_ORDERED else None
        if kind != "file":
            changed_set = set(changed_files)
            contributors = dict(prev_contributors) if touched and journal is None else prev_contributors
            for item in touched:
                owners_before[item] = before = prev_contributors.get(item, ())
                # The last contributors (in path order) with each changed file put in or taken out where it sorts:
                # `<module>` of _functions_by_name has every file (a pass over 5 000 of them otherwise).
                owners = list(before)
                for k in changed_files:
                    at = bisect.bisect_left(owners, k)
                    has = at < len(owners) and owners[at] == k
                    if k not in self.gone and item in self.part_of(k, name):
                        if not has:
                            owners.insert(at, k)
                    elif has:
                        del owners[at]
                if CHECK and owners != sorted([k for k in before if k not in changed_set] + [
                        k for k in changed_files if k not in self.gone and item in self.part_of(k, name)]):
                    raise NarrowingFailed(f"the contributors of {item!r} in {name} are not their files in path order")
                if owners:
                    contributors_new[item] = tuple(owners)
                    if journal is not None:
                        journal.set(contributors, item, contributors_new[item])
                    else:
                        contributors[item] = contributors_new[item]
                elif journal is not None:
                    journal.delete(contributors, item, ordered=False)
                else:
                    contributors.pop(item, None)
            self.contributors[name] = contributors
        else:
            self.contributors[name] = {}
        values: Dict[Any, Any] = {}
        for item in touched:
            if kind == "file":
                owner = next((k for k in changed_files if k not in self.gone and item in self.part_of(k, name)), None)
                if owner is not None:
                    values[item] = self.part_of(owner, name)[item]
            elif item in contributors_new:
                spliced = self._spliced(name, item, dict.get(prev_full, item), owners_before[item],
                                        contributors_new[item], changed_files) if kind == "concat" else None
                values[item] = spliced if spliced is not None else \
                    self._combine(kind, name, item, contributors_new[item])
        if not reordered or name not in ALWAYS_ORDERED and not order_at_once():
            # Reordered or not, the last dict with the touched keys set again or removed has the right keys
            # and values; a new key is at its end, so when the keys changed the order is owed (settle).
            # Untouched, it is the last one itself: an index is changed in place only under the update's
            # journal, or by settle, whose order is then the right one for both (no file's keys in it
            # changed, so neither did cgc's order).
            if journal is not None and type(prev_full) is KeptDict:
                full = prev_full
                for item, value in values.items():
                    journal.set(full, item, value)
                for item in touched:
                    if item not in values:
                        journal.delete(full, item)
                prev = self.prev
                journal.on_undo(full, lambda moved: moved and prev is not None and setattr(
                    prev, "order_owed", prev.order_owed | {name}))
            else:
                full = KeptDict(prev_full) if touched or type(prev_full) is not KeptDict else prev_full
                full.update(values)
                removed = [item for item in touched if item not in values and item in full]
                for item in removed:
                    del full[item]
                if removed:
                    # Without the holes deletions leave: a dict with holes is copied key by key (every later
                    # update's copy), a dict without them as one block.
                    full = KeptDict(full)
            if reordered:
                self.owed.add(name)
        else:
            # The key order: first insertion, file after file (dict.update keeps a key where it is), with
            # the last file's value; a key of several files in a list or set index then gets its value.
            full = KeptDict()
            for own in self._owns(ROLE_OF[name]):
                part = own.get(name)
                if part:
                    full.update(part)
            if kind in ("concat", "union"):
                rest = prev_full.copy()
                for item in touched:
                    rest.pop(item, None)
                full.update(rest)
                full.update(values)
        self.full[name] = full
        self.touched[name] = touched
        self.reordered[name] = reordered

    def ordered_keys(self, name: str) -> Dict[Any, None]:
        """cgc's key order of a kept index: first insertion, file after file in path order."""
        order: Dict[Any, None] = {}
        for own in self._owns(ROLE_OF[name]):
            part = own.get(name)
            if part:
                order.update(dict.fromkeys(part))
        full = self.full[name]
        if len(order) != len(full):
            raise NarrowingFailed(f"the kept {name} has {len(full)} keys where its files give {len(order)}")
        return order

    def settle(self, name: str) -> None:
        """Puts a kept index whose order is owed in cgc's order, in place (cgc's locals hold it)."""
        if name in self.owed:
            full = self.full[name]
            items = [(key, full[key]) for key in self.ordered_keys(name)]
            before_reorder(full)
            full.clear()
            full.update(items)
            self.owed.discard(name)

    def settle_of(self, name: str) -> Optional[Callable[[], None]]:
        """What settles a kept index's order in place, or None when it is not owed."""
        if name not in self.owed:
            return None
        return lambda: self.settle(name)

    def settler(self, name: str) -> Optional[Callable[[Dict[Any, Any]], None]]:
        """For a copy of a kept index given to cgc: what settles the copy's order, or None when it is not owed."""
        if name not in self.owed:
            return None

        return refill_after(lambda: self.settle(name), self.full[name])

    def settled(self, name: str) -> Dict[Any, Any]:
        """The kept index in cgc's order, leaving the kept one as it is (for the check)."""
        full = self.full[name]
        return {key: full[key] for key in self.ordered_keys(name)} if name in self.owed else full

    def _combine(self, kind: str, name: str, item: Any, owners: Iterable[str]) -> Any:
        if kind == "last":
            last = None
            for owner in owners:
                last = owner
            return self.part_of(last, name)[item]  # type: ignore[arg-type]
        # Each owner contributes to the item (so has a part with it). Looked up directly, not through _part:
        # a key of every file (`<module>` in _functions_by_name) has 5 000 owners at 5 000 files.
        role = ROLE_OF[name]
        taken, new, old = self.taken[role], self.contrib, self.prev_contrib
        parts = [(new if owner in taken else old)[owner][role][name][item] for owner in owners]
        if kind == "union":
            return set().union(*parts)
        return list(itertools.chain.from_iterable(parts))

    def _spliced(self, name: str, item: Any, last: Optional[List[Any]], owners_before: Tuple[str, ...],
                 owners: Tuple[str, ...], changed_files: List[str]) -> Optional[List[Any]]:
        """A "concat" item of many contributors (`<module>` in _functions_by_name: every file, 5-6 ms to join
        again at 5 000 files), from its last value: the changed files' old parts cut out and their new parts put
        in at their place in path order. The last value is its contributors' old parts joined in path order, the
        same objects: each part is found there by identity, and None (join it all again) where it is not."""
        if last is None or len(owners_before) < 64:
            return None
        role = ROLE_OF[name]
        old = self.prev_contrib

        def old_part(owner: str) -> List[Any]:
            return old[owner][role][name][item]

        def start_of(part: List[Any], guess: int) -> Optional[int]:
            if not part:
                return None
            # Where it is when every contributor before it has one entry (as every file has one `<module>`):
            # found without a search of the list.
            if guess < len(last) and last[guess] is part[0]:
                at = guess
            else:
                try:
                    at = operator.indexOf(last, part[0])
                except ValueError:
                    return None
            end = at + len(part)
            if end > len(last) or any(a is not b for a, b in zip(last[at:end], part)):
                return None
            return at

        events: List[Tuple[int, str, int, Optional[List[Any]]]] = []  # (where, owner, old length, new part)
        for owner in changed_files:
            at = bisect.bisect_left(owners_before, owner)
            was = at < len(owners_before) and owners_before[at] == owner
            now_at = bisect.bisect_left(owners, owner)
            now = now_at < len(owners) and owners[now_at] == owner
            if not was and not now:
                continue
            if was:
                part = old_part(owner)
                where, length = start_of(part, at), len(part)
            elif at == len(owners_before):
                where, length = len(last), 0
            else:
                where, length = start_of(old_part(owners_before[at]), at), 0  # before the next old contributor
            if where is None:
                return None
            events.append((where, owner, length, self.part_of(owner, name)[item] if now else None))
        events.sort(key=lambda event: (event[0], event[1]))
        joined: List[Any] = []
        done = 0
        for where, _owner, length, part in events:
            if where < done:
                return None
            joined.extend(last[done:where])
            if part:
                joined.extend(part)
            done = where + length
        joined.extend(last[done:])
        return joined

    def testers(self, contrib: Dict[str, Dict[str, Any]]) -> CandidateIndex:
        """The candidate index of the imports map's names asked about, after this run (`contrib`: kept_contrib's)."""
        testers = self.prev_testers
        if testers is None:
            testers = CandidateIndex()
            for key, own in contrib.items():
                testers.add(key, own["index"]["tests"])
            return testers
        for key in self.taken["index"]:
            testers.add(key, contrib[key]["index"]["tests"])
        return testers

    def kept_contrib(self) -> Dict[str, Dict[str, Any]]:
        """Every parsed file's contributions after this run (the taken files' new ones)."""
        merged = self.prev_contrib.copy()  # (not dict(): see plan's copy of the files)
        for key in self.gone:
            merged.pop(key, None)
        for key in set().union(*self.taken.values()):
            own = dict(self.prev_contrib.get(key, {}))
            for role, taken in self.taken.items():
                if key in taken:
                    own[role] = self.contrib.get(key, {}).get(role, {})
            if "tests" not in own.get("index", {}):
                raise NarrowingFailed(f"no index contribution of {key} was taken")
            merged[key] = own
        return merged


class _Captured(Exception):
    """Stops a check run of cgc's resolution once its indices are built."""


class _IndexCapture:
    """A run of build_function_call_groups over every file that stops at the callback pre-pass, its
    indices built by cgc from every file (PI_CGC_ENGINE_CHECK=1)."""

    def __init__(self, data: List[Any]):
        self.data = data
        self.indices: Dict[str, Any] = {}
        self.in_prepass = False

    def iterate(self, frame: Any) -> Iterator[Any]:
        if frame.f_code is build_function_call_groups.__code__ and _LOOP_ROLES.get(frame.f_lineno) == "prepass":
            loc = frame.f_locals
            self.indices = {name: loc.get(name) for name in (*CALL_INDEXES, "_functions_by_name")}
            raise _Captured()
        return list.__iter__(self.data)

    def function_calls(self, fd: Any, default: Any) -> Any:
        return dict.get(fd, "function_calls", default)

    def loop(self, frame: Any, start: int) -> Iterator[Tuple[int, Any]]:
        loc = frame.f_locals
        self.indices = {name: loc.get(name) for name in (*CALL_INDEXES, "_functions_by_name")}
        raise _Captured()


def compare_kept_indices(kept: Dict[str, Dict[Any, Any]], data: List[Dict[str, Any]], imports_map: Dict[str, List[str]]) -> List[str]:
    """Each kept index against the one cgc builds from every file: values and key order."""
    global _RUN
    files = _FileList()
    for fd in data:
        parsed = _Parsed(fd)
        files.append(parsed)
    capture = _IndexCapture(files)
    _RUN = capture  # type: ignore[assignment]
    try:
        build_function_call_groups(files, imports_map, None)
    except _Captured:
        pass
    finally:
        _RUN = None
    differences: List[str] = []
    for name, theirs in capture.indices.items():
        mine = kept.get(name)
        if theirs is None or mine is None:
            differences.append(f"index {name}: missing on one side")
            continue
        if dict(mine) != dict(theirs):
            keys = [k for k in set(mine) | set(theirs) if mine.get(k, _MISSING) != theirs.get(k, _MISSING)]
            differences.append(f"index {name}: {len(keys)} keys differ, e.g. {sorted(map(str, keys))[:3]}")
        elif list(mine) != list(theirs):
            differences.append(f"index {name}: same items in another key order")
    if not capture.indices:
        differences.append("the check run did not reach cgc's callback pre-pass")
    return differences


def node_labels_of(data: Dict[str, Any]) -> Tuple[str, Dict[str, Set[str]]]:
    """cgc's node label index entry of one file: (normalized path, name -> labels)."""
    index = _ORIGINAL_LABEL_INDEX([data])
    if len(index) != 1:
        raise NarrowingFailed(f"the node label index of {data.get('path')} has {len(index)} entries")
    return next(iter(index.items()))


def label_index(labels: Dict[str, Tuple[str, Dict[str, Set[str]]]], keys: Iterable[str]) -> Dict[str, Dict[str, Set[str]]]:
    index: Dict[str, Dict[str, Set[str]]] = KeptDict()
    for key in keys:
        path, entry = labels[key]
        if path in index:
            raise NarrowingFailed(f"two files resolve to {path}")
        index[path] = entry
    return index


class CandidateIndex:
    """name -> the files that have it, so that an update finds the few files a name reaches without a pass
    over every file (5 000 of them, 3-7 ms a pass). Only ever added to: a file's names before a change stay
    beside its names after it, so the index is a superset for every state from the one it was built for on
    (whichever update fails, nothing is undone) and is shared by them; each file found is checked exactly."""

    __slots__ = ("files_of",)

    def __init__(self) -> None:
        self.files_of: Dict[Any, Set[str]] = {}

    def add(self, key: str, names: Iterable[Any]) -> None:
        files_of = self.files_of
        for name in names:
            found = files_of.get(name)
            if found is None:
                files_of[name] = {key}
            else:
                found.add(key)

    def files_with(self, names: Iterable[Any]) -> Set[str]:
        found: Set[str] = set()
        files_of = self.files_of
        for name in names:
            keys = files_of.get(name)
            if keys:
                found |= keys
        return found


# The candidate indices over the files' calls: a bare-name argument -> the files passing it, and the name
# of a call passing a bare name -> the files making such a call.
CALL_CANDIDATES: Dict[str, Callable[[FileEntry], Iterable[str]]] = {
    "passers": lambda entry: call_arg_names(entry).keys(),
    "callers": lambda entry: call_names(entry),
}


def call_candidates(prev: Optional["TreeState"], files: Dict[str, FileEntry], keys: List[str],
                    changed: Set[str]) -> Dict[str, CandidateIndex]:
    """The last state's call candidate indices with the changed files' names added, or new ones."""
    kept = prev.candidates if prev is not None else None
    if kept is not None and all(name in kept for name in CALL_CANDIDATES):
        for key in changed:
            entry = files.get(key)
            if entry is not None and "error" not in entry.data:
                for name, names_of in CALL_CANDIDATES.items():
                    kept[name].add(key, names_of(entry))
        return {name: kept[name] for name in CALL_CANDIDATES}
    built = {name: CandidateIndex() for name in CALL_CANDIDATES}
    for key in keys:
        for name, names_of in CALL_CANDIDATES.items():
            built[name].add(key, names_of(files[key]))
    return built


def _calls_by_name(data: Optional[Dict[str, Any]]) -> Dict[str, List[Tuple[str, ...]]]:
    found: Dict[str, List[Tuple[str, ...]]] = {}
    if data is not None and "error" not in data:
        for call in data.get("function_calls") or []:
            found.setdefault(call.get("name"), []).append(tuple(str(arg) for arg in call.get("args") or []))
    return found


def _function_lines(data: Optional[Dict[str, Any]]) -> Dict[str, List[Any]]:
    found: Dict[str, List[Any]] = {}
    if data is not None and "error" not in data:
        for fn in data.get("functions") or []:
            found.setdefault(fn.get("name"), []).append(fn.get("line_number"))
    return found


def callback_names(old_files: Dict[str, FileEntry], files: Dict[str, FileEntry], keys: List[str], changed: Set[str],
                   defined: Iterable[str], passers: Optional[CandidateIndex] = None) -> Set[str]:
    """Names f whose callback entries (a file, f, a parameter) may differ after `changed`.

    cgc's pre-pass adds, for each call named f that passes a bare name a as its i-th argument, and for
    each function named f (any file) with an i-th parameter p, one entry (file of a function named a,
    a, its line) per function named a, under (that f's file, f, p) -- in file order, then call order.
    So the entries under f differ only if (1) a changed file's calls named f (their arguments) differ
    and one passes a name some function has, or (2) the files and lines of the functions named a
    differ for an a that some call named f passes."""
    names: Set[str] = set()
    moved: Set[str] = set()
    defined_before: Set[str] = set()  # beside `defined` (every name, tens of thousands: not copied)
    for path in changed:
        old_entry, new_entry = old_files.get(path), files.get(path)
        old_data = old_entry.data if old_entry is not None else None
        new_data = new_entry.data if new_entry is not None else None
        old_lines, new_lines = _function_lines(old_data), _function_lines(new_data)
        defined_before.update(old_lines)
        moved.update(n for n in set(old_lines) | set(new_lines) if old_lines.get(n) != new_lines.get(n))
        old_calls, new_calls = _calls_by_name(old_data), _calls_by_name(new_data)
        for name in set(old_calls) | set(new_calls):
            before, after = old_calls.get(name, []), new_calls.get(name, [])
            if before != after and any(
                (text in defined or text in defined_before) and IDENTIFIER.fullmatch(text)
                for args in before + after for text in (arg.strip() for arg in args)
            ):
                names.add(name)
    if moved and passers is not None:
        keys = [key for key in passers.files_with(moved) if key in files and "error" not in files[key].data]
    for key in keys if moved else ():
        passing = call_arg_names(files[key])
        for arg in passing.keys() & moved:
            names.update(passing[arg])
    names.discard(None)
    return names


# The languages whose files the whole-tree kinds read: each of cgc's build_*_links for them skips a file of
# another language first (build_binds_links and build_previews_links read the imports map too, for Kotlin
# files only).
WHOLE_KIND_LANGS = frozenset({"go", "haskell", "elixir", "csharp", "c_sharp", "dart", "kotlin"})


def whole_kinds_kept(prev: Optional["TreeState"], files: Dict[str, FileEntry], changed: Set[str], has_kotlin: bool) -> bool:
    """Whether the last state's whole-tree rows are this tree's: the files they read are the same (no changed
    file was or is of their languages) and, without a Kotlin file, the imports map is read by none."""
    if prev is None or has_kotlin or any(kind not in prev.whole for kind in WHOLE_KINDS):
        return False
    for path in changed:
        for entry in (prev.files.get(path), files.get(path)):
            if entry is not None and entry.data.get("lang") in WHOLE_KIND_LANGS:
                return False
    return True


def _target_paths(kind: str, rows: Iterable[Dict[str, Any]]) -> Set[str]:
    target_key = LINK_KEYS[kind][1]
    return {norm(raw) for raw in {row.get(target_key) for row in rows}}


def carried(last: Optional[Dict[str, Any]], resolved: Dict[str, Any], keys: List[str], chosen: Set[str],
            changed: Set[str], keys_kept: bool) -> Dict[str, Any]:
    """Per parsed file: the resolved files' new value, every other file's last one. With the last state's keys
    (keys_kept: `keys` is theirs but for the changed files) only the changed and resolved files are set: in the
    last dict itself under the update's journal (read it as it was with as_before), in a copy of it otherwise
    (a pass over 5 000 files without them); its order is not kept (nothing reads it)."""
    if last is not None and keys_kept:
        journal = _JOURNAL
        if journal is not None:
            for key in changed:
                if dict.__contains__(last, key):
                    journal.delete(last, key, ordered=False)
            for key in chosen:
                journal.set(last, key, resolved[key])
            found = last
        else:
            found = dict(last)
            for key in changed:
                found.pop(key, None)
            for key in chosen:
                found[key] = resolved[key]
        if len(found) == len(keys):
            return found
    # (an unchosen file is not a changed one: its value in `last` is the last state's, in place or not)
    return {key: resolved[key] if key in chosen else last[key] for key in keys}  # type: ignore[index]


class SortedMembers:
    """`key in` a sorted list of keys, by bisection: a set of 5 000 paths costs 0.2-0.5 ms per update."""

    __slots__ = ("keys",)

    def __init__(self, keys: List[str]):
        self.keys = keys

    def __contains__(self, key: str) -> bool:
        keys = self.keys
        at = bisect.bisect_left(keys, key)
        return at < len(keys) and keys[at] == key


def parsed_keys(prev: Optional[TreeState], files: Dict[str, FileEntry], changed: Set[str]) -> List[str]:
    """The keys of the files whose parse did not fail, in path order: the last state's with the changed files
    put in or taken out (only they can differ), or, without them, from every file (5 000: 4 ms). A list the
    last state has is never changed: it is copied first."""
    kept = prev.keys if prev is not None else None
    if kept is None:
        return [p for p in sorted(files) if "error" not in files[p].data]
    keys = kept
    for path in sorted(changed):
        wanted = path in files and "error" not in files[path].data
        at = bisect.bisect_left(keys, path)
        if wanted != (at < len(keys) and keys[at] == path):
            if keys is kept:
                keys = list(kept)
            if wanted:
                keys.insert(at, path)
            else:
                del keys[at]
    return keys


def resolve_tree(
    prev: Optional[TreeState],
    files: Dict[str, FileEntry],
    imports_map: Dict[str, List[str]],
    changed: Set[str],
    disk_changed: bool,
    only: Optional[Set[str]] = None,
    keep: bool = True,
) -> Tuple[TreeState, Set[str]]:
    """The state after a change: the link rows of the files whose rows it can change resolved again
    (all of them without a previous state), every other file's kept. Returns (state, files resolved).
    `only` resolves just those files (a warm start's index-only run). `keep`: cgc's indices are kept per
    file (see "Kept indices") where that is possible; without it they are built from every file."""
    global _RUN, _SINK
    debug = DebugClock()
    keys = parsed_keys(prev, files, changed)

    def parsed_of(key: str) -> _Parsed:
        entry = files[key]
        fd = entry.parsed
        if fd is None or fd.key != key:
            fd = entry.parsed = _Parsed(entry.data)
            fd.key = key
        return fd

    data: List[_Parsed] = _FileList()
    last_data = prev.parsed_list if prev is not None and prev.keys is not None else None
    if last_data is not None and len(last_data) == len(prev.keys):  # type: ignore[union-attr, arg-type]
        # The last list with the changed files taken out and put in (only their entries can differ: an unchanged
        # file's entry, and its parsed copy, are the last state's; a pass over every file: 2 ms at 5 000).
        list.extend(data, list.__getitem__(last_data, slice(None)))
        last_keys = prev.keys  # type: ignore[union-attr]
        gone = {bisect.bisect_left(last_keys, key) for key in changed}  # type: ignore[arg-type]
        for at in sorted((at for at in gone if at < len(last_keys) and last_keys[at] in changed), reverse=True):  # type: ignore[arg-type, index]
            del data[at]
        for key in sorted(changed):
            at = bisect.bisect_left(keys, key)
            if at < len(keys) and keys[at] == key:
                data.insert(at, parsed_of(key))
        if len(data) != len(keys):
            raise NarrowingFailed(f"{len(data)} parsed files carried for {len(keys)} keys")
    else:
        for key in keys:
            data.append(parsed_of(key))
    if CHECK and any(files[key].parsed is not fd for key, fd in zip(keys, data)):
        raise NarrowingFailed("a carried parsed file is not its entry's")
    if type(imports_map) is not _ImportsMap:
        imports_map = _ImportsMap(imports_map)
    # The imports map's names whose paths may differ (a merged name's paths come from the files that import
    # or define it), those the change added or removed, and whether its key order may have changed.
    imports_touched: Set[str] = set()
    imports_reordered = prev is None or any(key not in prev.files for key in changed if key in files)
    if prev is not None:
        for key in changed:
            before, after = prev.files.get(key), files.get(key)
            old_names = list(before.imports) if before is not None else []
            new_names = list(after.imports) if after is not None else []
            imports_touched.update(old_names)
            imports_touched.update(new_names)
            imports_reordered = imports_reordered or old_names != new_names or (before is None) != (after is None)
    prev_imports = as_before(prev.imports_map) if prev is not None else {}  # as the last state had it (see Journal)
    flipped = {name for name in imports_touched
               if prev is not None and (name in prev_imports) != dict.__contains__(imports_map, name)}
    fast = keep and not full_indices_only() and bool(_LOOP_ROLES)
    keeper: Optional[_Keeper] = None
    if prev is not None and prev.kotlin is False and prev.keys is not None:
        # No Kotlin file before: one now only if a changed file is one.
        has_kotlin = any(key in files and "error" not in files[key].data and files[key].data.get("lang") == "kotlin"
                         for key in changed)
    else:
        has_kotlin = any(dict.get(fd, "lang") == "kotlin" for fd in data)
    if fast and not has_kotlin:
        keeper = _Keeper(prev, data, keys, changed, flipped)
    candidates = call_candidates(prev, files, keys, changed)
    journal = _JOURNAL if fast else None
    if journal is not None and prev is not None and prev.keys is not None and prev.label_index is not None:
        # Only a changed file's entry can differ (an entry is a function of the file's parse, and the parse of
        # an unchanged file is the last state's); an entry whose file is not parsed any more goes. Both dicts are
        # the last state's, changed in place under the journal (a copy and a new index: 1 ms at 5 000 files).
        labels, new_label_index = prev.labels, prev.label_index
        for key in changed:
            old = dict.get(labels, key)
            if old is not None:
                journal.delete(labels, key, ordered=False)
                journal.delete(new_label_index, old[0], ordered=False)
        for key in changed:
            entry = files.get(key)
            if entry is not None and "error" not in entry.data:
                path, names = node_labels_of(entry.data)
                if dict.__contains__(new_label_index, path):
                    raise NarrowingFailed(f"two files resolve to {path}")
                journal.set(labels, key, (path, names))
                journal.set(new_label_index, path, names)
        if len(labels) != len(keys) or len(new_label_index) != len(keys):
            raise NarrowingFailed(f"{len(labels)} node label entries for {len(keys)} parsed files")
        if CHECK and dict(new_label_index) != dict(label_index(labels, keys)):
            raise NarrowingFailed("the node label index kept in place is not the one built from every file")
    else:
        if prev is not None and prev.keys is not None:
            labels = dict(prev.labels)
            for key in changed:
                labels.pop(key, None)
            for key in changed:
                entry = files.get(key)
                if entry is not None and "error" not in entry.data:
                    labels[key] = node_labels_of(entry.data)
            if len(labels) != len(keys):
                raise NarrowingFailed(f"{len(labels)} node label entries for {len(keys)} parsed files")
        else:
            labels = {
                key: prev.labels[key] if prev is not None and key in prev.labels and key not in changed and prev.files.get(key) is files[key]
                else node_labels_of(files[key].data)
                for key in keys
            }
        new_label_index = label_index(labels, keys)

    def decide(info: Dict[str, Any]) -> Set[str]:
        debug.lap("cgc indices")
        if prev is None or info["skip_external"] != prev.skip_external:
            return set(keys)
        if only is not None:
            return set(only)
        if prev.indices is None:
            return set(keys)
        if NARROW_FAULT:
            return {key for key in keys if key in changed}
        found: Set[Tuple[str, Any]] = set()
        defined = info["defined"]
        kept: Optional[_Keeper] = info.get("keeper")
        if fast:
            # Only the keys the changed files touched can differ (the kept indices say which they touched).
            for name in CALL_INDEXES:
                if kept is not None and kept.usable:
                    diff_keys(name, as_before(prev.indices[name]), info["indices"][name], kept.touched.get(name, ()),
                              kept.reordered.get(name, False), found,
                              order_known=name not in kept.owed and name not in prev.order_owed)
                else:
                    diff_index(name, prev.indices[name], info["indices"][name], found)
            diff_keys("imports_map", prev_imports, imports_map, imports_touched, imports_reordered, found,
                      order_known=not imports_owed(prev.imports_map) and not imports_owed(imports_map))
            # The label index's keys are the files' paths in path order, each with its file's entry: only a
            # changed file's entry can differ, and the keys (so their order) only when a file came or went.
            prev_labels = as_before(prev.labels)  # changed in place under the journal (above)
            came_or_went = keys is not prev.keys if prev.keys is not None \
                else len(prev_labels) != len(labels) or any(k not in prev_labels for k in keys)
            before = dict(prev_labels.get(k) for k in changed if k in prev_labels)
            after = dict(labels[k] for k in changed if k in labels)
            moved = {path for path in before.keys() | after.keys() if before.get(path, _MISSING) != after.get(path, _MISSING)}
            found.update(("node_labels", path) for path in moved)
            if moved or came_or_went:
                found.add(("node_labels", ALL_ITEMS))
            if came_or_went:
                found.add(("node_labels", ALL_KEYS))
            if bool(len(prev_labels)) != bool(labels):
                found.add(("node_labels", NONEMPTY))
        else:
            for name in CALL_INDEXES:
                diff_index(name, prev.indices[name], info["indices"][name], found)
            diff_index("imports_map", as_before(prev.imports_map), imports_map, found)
            old_keys = [k for k in sorted(prev.files) if k in prev.labels]
            diff_index("node_labels", label_index(prev.labels, old_keys), new_label_index, found)
        found.update(("callback_fn", name)
                     for name in callback_names(prev.files, files, keys, changed, defined, candidates["passers"]))
        if disk_changed:
            found.add(("disk", None))
        if os.environ.get("PI_CGC_ENGINE_DEBUG"):
            log(f"changed keys: {sorted(map(str, (k for k in found if k[0] != 'callback_fn')))[:60]}")
            debug.lap("diff")
        last_deps = prev.deps
        dependents = (prev.candidates or {}).get("dependents")
        if dependents is None:
            return {key for key in keys if key in changed or key not in last_deps or not last_deps[key].isdisjoint(found)}
        # The files that read one of the changed keys, found by them (a test of every file: 4-5 ms at 5 000).
        # The last state has the reads of every file it parsed (carried), so a file without them is a changed one,
        # in the pool already, unless the counts say otherwise.
        present = SortedMembers(keys)
        pool = dependents.files_with(found)
        pool.update(changed)
        if prev.keys is None or len(last_deps) != len(prev.keys):
            pool.update(set(keys).difference(last_deps))
        elif CHECK and not set(keys).difference(last_deps) <= pool:
            raise NarrowingFailed("a file unchanged since the last state has no reads recorded")
        return {key for key in pool if key in present
                and (key in changed or key not in last_deps or not last_deps[key].isdisjoint(found))}

    debug.lap("labels")
    run = _CallRun(data, decide)
    run.prev = prev
    run.keeper = keeper
    run.debug = debug if debug.on else None
    run.files = files
    if fast:
        run.callers = candidates["callers"]
    # The last views serve again when the map is the same function of the same names in the same order; a
    # map or view whose order is owed counts as another order unless the names' order cannot have moved.
    owed = imports_owed(imports_map) or imports_owed(prev.imports_map) or bool(prev.views_owed) if prev is not None else False
    run.imports_map = imports_map
    run.imports_reordered = imports_reordered
    if prev is not None and prev.lang_views and (
        all(prev_imports.get(n) == dict.get(imports_map, n) for n in imports_touched)
        and (not imports_reordered or not owed and not order_differs(prev_imports, imports_map)) if fast
        else not owed and prev.imports_map is not imports_map and prev.imports_map == imports_map
        and list(prev.imports_map) == list(imports_map)
    ):
        run.reuse_views = prev.lang_views
        run.views_owed = set(prev.views_owed)
    elif fast and prev is not None and prev.lang_views:
        run.patch_views = (prev.lang_views, imports_touched)
        run.views_owed = set(prev.views_owed)
    else:
        settle_imports(imports_map, files)  # cgc builds every view from the map
    _RUN = run
    try:
        groups = build_function_call_groups(data, imports_map, None)
    finally:
        _RUN = None
        _SINK = None
        give_back(run.lent)
    if run.chosen is None or not run.swapped and run.chosen:
        raise NarrowingFailed("cgc's resolution did not reach the points the narrowing hooks")
    debug.lap("calls")
    chosen = run.chosen
    if len(groups) != CALL_GROUPS:
        raise NarrowingFailed(f"cgc returned {len(groups)} call groups")
    deps = run.deps
    rows: Dict[str, Dict[str, Any]] = {key: {"calls": [[] for _ in range(CALL_GROUPS)]} for key in chosen}
    owner_of = {norm(key): key for key in chosen}
    for index, group in enumerate(groups):
        for row in group:
            owner = owner_of.get(row.get("caller_file_path"))
            if owner is None:
                raise NarrowingFailed(f"a CALLS row of {row.get('caller_file_path')}, a file not resolved")
            rows[owner]["calls"][index].append(row)
            # The group a row lands in is read from file_symbol_labels of its target after the loop.
            deps.setdefault(owner, set()).add(
                ("file_symbol_labels", _calls_module._resolved_posix(row.get("called_file_path", ""))))
    for key in chosen:
        sink = deps.setdefault(key, set())
        if any(call.get("call_kind") == "dynamic_import" for call in files[key].data.get("function_calls") or []):
            sink.add(("disk", None))

    debug.lap("call rows")
    imports_rec = run.recording_imports(imports_map)
    labels_rec = lend(new_label_index, "node_labels", run.lent)
    inh._build_node_label_index = lambda _data: labels_rec
    try:
        for key in sorted(chosen):
            fd = files[key].data
            _SINK = deps[key]
            inherits, _csharp = inh.build_inheritance_and_csharp_files([fd], imports_rec)
            rows[key]["inherits"] = inherits
            rows[key]["decorated"] = inh.build_decorated_by_links([fd], imports_rec)
            rows[key]["metaclass"] = inh.build_metaclass_links([fd], imports_rec)
            _SINK = None
    finally:
        _SINK = None
        inh._build_node_label_index = _ORIGINAL_LABEL_INDEX
        give_back(run.lent)

    debug.lap("per-file kinds")
    if whole_kinds_kept(prev, files, changed, has_kotlin):
        whole = prev.whole  # type: ignore[union-attr]
    else:
        plain = [files[key].data for key in keys]
        implements = inh.build_go_implements_links(plain)
        implements.extend(inh.build_haskell_implements_links(plain))
        implements.extend(inh.build_elixir_implements_links(plain))
        whole = {
            "implements": implements,
            "embeds": inh.build_embeds_links(plain),
            "companion": inh.build_companion_of_links(plain),
            "partial": inh.build_partial_of_links(plain),
            "part_of": inh.build_part_of_links(plain),
            "binds": inh.build_binds_links(plain, imports_map),
            # Its rows come from Kotlin files only; without one it returns none (after an index of all).
            "previews": inh.build_previews_links(plain, imports_map) if has_kotlin else [],
        }
    debug.lap("whole kinds")
    targets: Dict[str, FrozenSet[str]] = {}
    for key in chosen:
        found_targets = set()
        for group in rows[key]["calls"]:
            found_targets |= _target_paths("calls", group)
        for kind in PER_FILE_KINDS:
            found_targets |= _target_paths(kind, rows[key][kind])
        targets[key] = frozenset(found_targets)
    if prev is None and any(key not in chosen for key in keys):
        raise NarrowingFailed("files left unresolved without a previous state")
    contrib = keeper.kept_contrib() if keeper is not None else None
    if keeper is not None and contrib is not None:
        candidates["testers"] = keeper.testers(contrib)
    # name -> files: the files whose rows point into a file (choose_links).
    targeters = (prev.candidates or {}).get("targeters") if prev is not None else None
    if targeters is None:
        targeters = CandidateIndex()
        for key in keys:
            targeters.add(key, targets[key] if key in chosen else prev.targets[key])  # type: ignore[union-attr]
    else:
        for key in chosen:
            targeters.add(key, targets[key])
    candidates["targeters"] = targeters
    keys_kept = prev is not None and prev.keys is not None  # `keys` is the last state's but for the changed files
    new_deps = carried(prev.deps if prev is not None else None, deps, keys, chosen, changed, keys_kept)
    # (index, key) -> files: the files whose resolution read it (decide).
    dependents = (prev.candidates or {}).get("dependents") if prev is not None else None
    if dependents is None:
        dependents = CandidateIndex()
        for key, read in new_deps.items():
            dependents.add(key, read)
    else:
        for key in chosen:
            dependents.add(key, new_deps[key])
    candidates["dependents"] = dependents
    state = TreeState(
        files=files,
        imports_map=imports_map,
        rows=carried(prev.rows if prev is not None else None, rows, keys, chosen, changed, keys_kept),
        whole=whole,
        deps=new_deps,
        labels=labels,
        label_index=new_label_index,
        targets=carried(prev.targets if prev is not None else None, targets, keys, chosen, changed, keys_kept),
        indices=run.indices,
        skip_external=run.skip_external,
        lang_views=run.views,
        views_owed=frozenset(run.views_owed),
        contrib=contrib,
        order_owed=frozenset(keeper.owed) if keeper is not None else frozenset(),
        contributors=keeper.contributors if keeper is not None else None,
        row_positions={slot: kept for slot, kept in prev.row_positions.items() if slot[0] in files and slot[0] not in chosen}
        if prev is not None else {},
        candidates=candidates,
        keys=keys,
        parsed_list=data,
        kotlin=has_kotlin,
    )
    if CHECK and keeper is not None:
        settled = {name: keeper.settled(name) if name in keeper.full else index for name, index in run.indices.items()}
        state.index_check = run.view_check + compare_kept_indices(settled, [files[key].data for key in keys],
                                                                  settled_imports(imports_map, files))
    elif CHECK:
        state.index_check = run.view_check
    debug.lap("state")
    debug.report(f"resolve_tree: {len(chosen)} of {len(keys)} files")
    return state, chosen


def assemble_links(state: TreeState) -> Dict[str, Any]:
    """The full link lists in the pipeline's order: each is the files' rows concatenated in path order."""
    links: Dict[str, Any] = {kind: [] for kind in LINK_KEYS if kind != "calls"}
    calls: List[List[Dict[str, Any]]] = [[] for _ in range(CALL_GROUPS)]
    for key in sorted(state.rows):
        own = state.rows[key]
        for index in range(CALL_GROUPS):
            calls[index].extend(own["calls"][index])
        for kind in PER_FILE_KINDS:
            links[kind].extend(own[kind])
    for kind in WHOLE_KINDS:
        links[kind] = list(state.whole.get(kind, []))
    links["calls"] = calls
    return links


def _row_text(row: Dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, default=str)


def compare_links(narrowed: Dict[str, Any], full: Dict[str, Any]) -> List[str]:
    """Where the narrowed rows differ from the full resolution's: per kind (per call group) and
    owner, the rows only one side has, then any difference of order. Empty when equal."""
    differences: List[str] = []
    for kind, index, mine, theirs in _link_lists(narrowed, full):
        if mine == theirs:
            continue
        owner_key = LINK_KEYS[kind][0]
        by_owner: Dict[str, Tuple[List[str], List[str]]] = {}
        for side, rows in ((0, mine), (1, theirs)):
            for row in rows:
                by_owner.setdefault(norm(row.get(owner_key)), ([], []))[side].append(_row_text(row))
        label = f"{kind}[{index}]" if index >= 0 else kind
        found = False
        for owner, (a, b) in sorted(by_owner.items()):
            if a != b:
                found = True
                ca, cb = collections.Counter(a), collections.Counter(b)
                for text in sorted((ca - cb).elements()):
                    differences.append(f"{label} {owner}: only narrowed: {text}")
                for text in sorted((cb - ca).elements()):
                    differences.append(f"{label} {owner}: only full: {text}")
                if ca == cb:
                    differences.append(f"{label} {owner}: same rows in another order")
        if not found:
            differences.append(f"{label}: same rows per owner, owners in another order")
    return differences


def _link_lists(a: Dict[str, Any], b: Dict[str, Any]) -> Iterator[Tuple[str, int, List[Any], List[Any]]]:
    for kind in LINK_KEYS:
        if kind == "calls":
            ga, gb = list(a.get("calls", [])), list(b.get("calls", []))
            for index in range(max(len(ga), len(gb))):
                yield kind, index, list(ga[index]) if index < len(ga) else [], list(gb[index]) if index < len(gb) else []
        else:
            yield kind, -1, list(a.get(kind, [])), list(b.get(kind, []))


def module_import_rows(data: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The rows add_file_to_graph MERGEs into Module nodes with coalesce(lang, full_import_name),
    built exactly as cgc 0.6.13's writer builds them (JS/TS imports set no Module metadata)."""
    from codegraphcontext.tools.indexing.persistence.writer import sort_import_rows_for_metadata

    lang = data.get("lang")
    if lang in {"javascript", "typescript", "tsx"}:
        return []
    rows = []
    for imp in data.get("imports", []):
        if lang == "python" and imp.get("source"):
            name = imp.get("source")
        else:
            name = imp.get("name") or imp.get("source") or imp.get("full_import_name")
        if not name:
            continue
        rows.append({
            "name": name,
            "full_import_name": imp.get("full_import_name") or imp.get("source") or name,
            "imported_name": imp.get("imported_name") or imp.get("name") or name,
            "alias": imp.get("alias"),
            "line_number": imp.get("line_number") or 0,
            "lang": imp.get("lang") or lang,
        })
    return sort_import_rows_for_metadata(rows)


def suffixes_after(last: Optional[FrozenSet[str]], files: Dict[str, FileEntry], added: Set[str],
                   removed: Set[str]) -> FrozenSet[str]:
    """The files' extensions after a change that added and removed these files: the last ones with the added
    files' (an extension of a removed file stays while another file has it), without a pass over every file."""
    if last is None:
        return frozenset(os.path.splitext(p)[1] for p in files)
    found = set(last)
    found.update(os.path.splitext(p)[1] for p in added)
    for ext in {os.path.splitext(p)[1] for p in removed} - {os.path.splitext(p)[1] for p in added}:
        if not any(os.path.splitext(p)[1] == ext for p in files):
            found.discard(ext)
    return frozenset(found)


def module_metadata(files: Dict[str, FileEntry], names: Set[str], row_by_row: bool,
                    order: Optional[List[str]] = None) -> Dict[str, Tuple[Any, Any]]:
    """What a full index leaves on each Module: files are written in path order, and the first file
    that sets a value keeps it (coalesce). Within one file it depends on the backend: cgc's Kùzu
    adapter runs that UNWIND row by row and Neo4j applies each row's SET before the next, so the file's
    first row wins; FalkorDB evaluates the batch against the value before the query, so the file's last
    row wins. `order`: the parsed files in path order where the state has them (a sort of 5 000 paths
    otherwise); the files whose parse failed set nothing."""
    result: Dict[str, List[Any]] = {name: [None, None] for name in names}
    if not names:
        return {}
    for path in (order if order is not None else sorted(files)):
        entry = files[path]
        data = entry.data
        if "error" in data:
            continue
        if entry.modnames is None:
            entry.modnames = frozenset(row["name"] for row in module_import_rows(data))
        if entry.modnames.isdisjoint(names):
            continue  # no row of it names one of these modules
        before = {name: list(slot) for name, slot in result.items()}
        for row in module_import_rows(data):
            slot = result.get(row["name"])
            if slot is None:
                continue
            for index, key in ((0, "lang"), (1, "full_import_name")):
                if row_by_row:
                    slot[index] = slot[index] if slot[index] is not None else row[key]
                elif before[row["name"]][index] is None:
                    slot[index] = row[key]
        if all(slot[0] is not None and slot[1] is not None for slot in result.values()):
            break  # a value once set is kept (coalesce): no later file changes any
    return {name: (v[0], v[1]) for name, v in result.items()}


# ---------------------------------------------------------------------------------------------
# The engine.


class Engine:
    def __init__(self, root: Path, cache_dir: Optional[Path], context: Optional[str], version: str):
        self.root = root
        self.version = version
        self.db = Database(root, context)
        self.tree = Tree(root, self.db.ctx.cgcignore_path)
        self.state = TreeState()
        self.cache_file = (cache_dir / (hashlib.sha1(root.as_posix().encode()).hexdigest() + ".pickle")) if cache_dir else None
        self.diverged = False
        self.pending: Set[str] = set()
        self.cache_dirty = False
        self.cached_state: Optional[TreeState] = None
        # A save in a child process (see save_cache_aside): its pid, the request count it was forked at, its
        # file, and whether the state it writes was the graph's model.
        self.saving: Optional[Tuple[int, int, Path, bool]] = None
        # Copies of saves a request overtook: killed, not yet reaped (see abandon_save), with their files.
        self.ending: List[Tuple[int, Path]] = []
        # When the save under way began, and how long the last save took (see SAVE_IDLE_S).
        self.save_started = 0.0
        self.last_save_s = 0.0
        self.pages = PageReclaim()  # after a save aside, this process's memory made writable again while idle
        # Requests handled: a save forked before the last one may not be what the engine now holds.
        self.requests = 0
        # True while the engine's state is what the graph holds: started from a cache nothing wrote the
        # graph after, or brought in line by an update or a rebuild since. Until then a requested path's
        # old content, as the graph has it, is unknown to the engine (see plan and apply_update).
        self.trusted = False
        # Paths the engine read after a rebuild that had read them before they changed (the caller names
        # them): what the graph holds of them is unknown, as for an engine that is not trusted.
        self.unknown: Set[str] = set()
        # The files dict the last plan made and the discovery it made it from (see plan).
        self.discovered: Optional[Tuple[Dict[str, FileEntry], List[Path]]] = None

    # -- start --------------------------------------------------------------------------------
    def start(self, from_disk: bool = False) -> Dict[str, Any]:
        """Reads the tree: from the warm cache when it is the graph's model (trusted), else from the disk
        (`from_disk`: the graph was just rebuilt from it), parsing what the cache does not have."""
        start = time.monotonic()
        cached = self.load_cache()
        cached_state = self.cached_state
        self.cached_state = None
        marker = self.dirty_marker()
        self.diverged = marker is not None and marker.exists()
        if cached_state is not None and not from_disk and not self.distrusted():
            # The cache is the engine's model of the graph (saved after its last update, and nothing else
            # wrote the graph since): start from it whatever the disk says now, so that the session's first
            # update knows each changed file's old content as the graph has it.
            self.state = self.resolve(cached_state, cached_state.files, cached_state.imports_map, set(), False, only=set())[0]
            for entry in self.state.files.values():
                call_facts(entry)
            # What a parse may give more of now goes with the next update (the graph has the failed parse).
            self.pending.update(p for p, e in self.state.files.items() if self.tree.parse_in_doubt(p, e))
            self.trusted = True
            return {"files": len(self.state.files), "startMs": ms_since(start), "warm": True,
                    "cached": len(self.state.files), "trusted": True, "diverged": self.diverged}
        files: Dict[str, FileEntry] = {}
        hits = 0
        for path in self.tree.discover():
            known = digest_of(path)
            hit = cached.get(path.as_posix())
            if hit is not None and (hit.size, hit.mtime_ns, hit.digest) == known and not self.tree.parse_in_doubt(path.as_posix(), hit):
                files[path.as_posix()] = hit
                hits += 1
            else:
                files[path.as_posix()] = self.tree.parse(path, known)
        if cached_state is None:
            imports_map = self.tree.merge_imports(files)
            self.state = self.resolve(None, files, imports_map, set(files), True)[0]
        else:
            # The cached tree is the previous state of an update to the tree on disk: its resolved rows (and
            # what each file's resolution read) are what resolving it gives, cgc's indices are built again
            # (they are not saved; no file resolved), and only what the differing files can change is
            # resolved again, as in an update (plan). A whole resolution is minutes at 1 000 files.
            base = self.resolve(cached_state, cached_state.files, cached_state.imports_map, set(), False, only=set())[0]
            came_or_went = set(files) ^ set(base.files)
            differing = came_or_went | {p for p in set(files) & set(base.files) if files[p].digest != base.files[p].digest}
            if not differing:
                self.state = dataclasses.replace(base, files=files)
            else:
                imports_map = self.tree.merge_imports(files)
                self.state = self.resolve(base, files, imports_map, differing, bool(came_or_went))[0]
                if CHECK:
                    differences = list(self.state.index_check or []) + compare_links(self.state.links, self.tree.resolve(files, imports_map))
                    for line in differences[:200]:
                        log(f"check: {line}")
                    if differences:
                        raise RuntimeError(f"the start's narrowed resolution differs from the full one: {differences[0]}")
        for entry in files.values():
            call_facts(entry)  # what an update's callback rule and pre-pass read of every file, computed once
        self.trusted = False
        self.save_cache()
        return {"files": len(files), "startMs": ms_since(start), "warm": hits > 0, "cached": hits,
                "trusted": False, "diverged": self.diverged}

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
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("another process held the database: it may have written the graph\n", encoding="utf-8")

    def trust(self) -> None:
        """The state is what the graph holds now (after an update or a rebuild)."""
        self.trusted = True
        self.unknown = set()
        if self.cache_file is not None:
            (self.cache_file.parent / WRITTEN_ELSEWHERE).unlink(missing_ok=True)

    def load_cache(self) -> Dict[str, FileEntry]:
        if self.cache_file is None:
            return {}
        for left in self.cache_file.parent.glob(self.cache_file.stem + ".*.saving"):
            left.unlink(missing_ok=True)  # a save aside stopped before it was done (its engine was killed)
        if not self.cache_file.exists():
            return {}
        try:
            with self.cache_file.open("rb") as handle:
                blob = pickle.load(handle)
            if blob.get("cgc") == self.version and blob.get("root") == self.root.as_posix() and blob.get("format") == CACHE_FORMAT:
                self.db.binder_failures.update(blob.get("binder_failures", {}))
                self.cached_state = blob.get("state")
                return blob["state"].files
        except Exception as error:  # noqa: BLE001 - a bad cache is a cold start, never a failure
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

    def write_cache(self, temp: Path) -> None:
        temp.parent.mkdir(parents=True, exist_ok=True)
        with temp.open("wb") as handle:
            pickle.dump({"cgc": self.version, "root": self.root.as_posix(), "format": CACHE_FORMAT, "state": self.state,
                         "binder_failures": self.db.binder_failures}, handle, protocol=pickle.HIGHEST_PROTOCOL)

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
        temp.parent.mkdir(parents=True, exist_ok=True)
        model = self.trusted and not self.unknown
        pid = os.fork()
        if pid == 0:  # the copy: writes the file and leaves without running anything of its parent's
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # a stop reaches the parent, which ends the copy
                if SAVE_GATE:
                    # Tests: the save of a large state (seconds) stood for by one that waits for a file, and
                    # takes it (the next save waits for the next one).
                    temp.write_bytes(b"")
                    while not Path(SAVE_GATE).exists():
                        time.sleep(0.05)
                    Path(SAVE_GATE).unlink(missing_ok=True)
                self.write_cache(temp)
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
            marker.write_text("this cache is not known to be what the graph holds\n", encoding="utf-8")
        temp.replace(self.cache_file)
        if marker is not None and model:
            marker.unlink(missing_ok=True)

    # -- resolution ---------------------------------------------------------------------------
    def resolve(self, prev: Optional[TreeState], files: Dict[str, FileEntry], imports_map: Dict[str, List[str]],
                changed: Set[str], disk_changed: bool, only: Optional[Set[str]] = None) -> Tuple[TreeState, Set[str]]:
        """resolve_tree, and the whole tree when the narrowing fails for a reason of its own."""
        try:
            return resolve_tree(prev, files, imports_map, changed, disk_changed, only)
        except Exception as error:  # noqa: BLE001 - NarrowingFailed, or a fault of the narrowing itself
            if prev is None:
                raise
            log(f"narrowed resolution not possible ({error!r}); resolving every file")
            return resolve_tree(None, files, imports_map, set(files), True, keep=False)

    # -- update -------------------------------------------------------------------------------
    def plan(self, paths: List[str]) -> Tuple[TreeState, Set[str], Set[str], Set[str], Set[str], Set[str]]:
        """The tree after the change, from the disk: (new state, changed, removed, added, re-resolved,
        unsure). Unsure are the changed paths whose old content the engine never held (see below)."""
        old = self.state.files
        posix = os.sep == "/"
        found = self.tree.discover()
        requested = [norm(p) for p in paths]
        dirs = [p for p in requested if Path(p).is_dir()]
        # The state's files are those of the last discovery when the last plan made them and they were kept
        # (its update committed): the kept walk's difference from that discovery is then the tree's change
        # (a pass over every file's path: 3-4 ms at 5 000 files, otherwise).
        basis, delta = getattr(self, "discovered", None), self.tree.kept_walk.delta
        if posix and basis is not None and delta is not None and basis[0] is old and basis[1] is delta[0]:
            removed = {p for p in delta[1] if p in old}
            added = {p for p in delta[2] if p not in old}
            # (dict.copy clones the table with the holes a deletion left; dict() re-inserts every key when there
            # are any: 0.5-0.7 ms at 5 000 files in each update after a file went)
            files = old.copy()
            for path in removed:
                del files[path]
            current: Dict[str, Path] = {p: Path(p) for p in added}
            held: Any = files.keys()
        else:
            # (str is as_posix where the separator is "/": half the cost at 5 000 files)
            current = {str(p) if posix else p.as_posix(): p for p in found}
            removed = set(old) - set(current)
            added = set(current) - set(old)
            files = {p: e for p, e in old.items() if p in current}
            held = current.keys() & old.keys()
        modified: Set[str] = set()
        unsure: Set[str] = set()
        # Not trusted (the engine read the tree from the disk at its start, which may have come after the
        # change), a requested path is rewritten even when its content equals what the engine holds: what
        # it holds says nothing about what the graph holds. Trusted, equal content is what the graph has.
        named = {p for p in requested if p in held}
        if dirs:
            named.update(path for path in held if any(path.startswith(d + "/") for d in dirs))
        for path in named:
            known = digest_of(current.get(path) or Path(path))
            entry = old[path]
            if not self.trusted or path in self.unknown:
                modified.add(path)
                unsure.add(path)
            if known[2] != entry.digest or self.tree.parse_in_doubt(path, entry):
                parsed = self.tree.parse(current.get(path) or Path(path), known)
                if known[2] != entry.digest or parsed.data != entry.data:
                    modified.add(path)
                elif path not in modified:
                    parsed.parsed = entry.parsed  # the same content: its copy given to cgc stands (resolve_tree)
                files[path] = parsed
                continue
            if known[:2] != (entry.size, entry.mtime_ns):
                # Derived from the data, which is the same: carried with it.
                files[path] = dataclasses.replace(entry, size=known[0], mtime_ns=known[1], digest=known[2])
        # Likewise a requested path gone from the disk that the engine never held: the graph may still have it.
        never_held = {
            p for p in requested
            if p not in files and p not in added and p not in old and not Path(p).is_dir()
            and (not self.trusted or p in self.unknown)
        }
        removed |= never_held
        unsure |= never_held
        for path in added:
            files[path] = self.tree.parse(current[path], digest_of(current[path]))
        changed = removed | added | modified
        self.discovered = (files, found)  # the files of this discovery (see above)
        if not changed:
            return dataclasses.replace(self.state, files=files), changed, removed, added, set(), set()
        owners: Optional[Dict[str, Tuple[str, ...]]] = None
        groups: Optional[List[str]] = None
        check: List[str] = list(self.tree.walk_check)
        self.tree.walk_check.clear()
        if full_indices_only():
            imports_map = self.tree.merge_imports(files)
        else:
            imports_map, owners, groups = self.tree.merge_imports_kept(self.state, files, changed)
            if CHECK:
                whole = self.tree.merge_imports(files)
                mine = settled_imports(imports_map, files)
                if dict(whole) != dict(mine) or list(whole) != list(mine):
                    check.append("the kept imports map differs from cgc's merge of every file")
        # What exists on disk changed (a JS/TS dynamic import probes it): files came or went, or a
        # path was named that is no indexed file.
        disk_changed = bool(added or removed) or any(p not in files for p in requested)
        new, resolved = self.resolve(self.state, files, imports_map, changed, disk_changed)
        new.import_owners = owners
        new.import_groups = groups
        if check:
            new.index_check = (new.index_check or []) + check
        return new, changed, removed, added, resolved, unsure

    def update(self, paths: List[str]) -> Dict[str, Any]:
        # Paths of an update that did not commit (BUSY, FAILED) are kept and tried again with the next.
        self.pending.update(paths)
        answer = self.apply_update(sorted(self.pending))
        if answer.get("ok"):
            self.pending.clear()
        return answer

    @contextlib.contextmanager
    def in_place(self, exact: Optional[bool] = None) -> Iterator[Optional[Journal]]:
        """An update's span: the last state's large dicts are changed in place under a journal (see Journal),
        undone when the span ends without a new state (PI_CGC_ENGINE_IN_PLACE=0: copied, for comparisons).
        `exact`: the key order is put back too (default: on an embedded database, or without one)."""
        global _JOURNAL
        last = self.state
        db = getattr(self, "db", None)
        journal = _JOURNAL = Journal(exact=exact if exact is not None else db is None or db.embedded) \
            if os.environ.get("PI_CGC_ENGINE_IN_PLACE") != "0" and _LOOP_ROLES else None
        try:
            yield journal
        finally:
            _JOURNAL = None
            if journal is not None and self.state is last:
                journal.undo()

    def apply_update(self, paths: List[str]) -> Dict[str, Any]:
        with self.in_place():
            return self._apply_update(paths)

    def _apply_update(self, paths: List[str]) -> Dict[str, Any]:
        if self.diverged:
            return {"ok": False, "code": "DIVERGED", "reason": "an earlier update left the graph unknown; rebuild"}
        start = time.monotonic()
        cpu_start = time.process_time()
        new, changed, removed, added, resolved, unsure = self.plan(paths)
        resolve_ms = ms_since(start)
        # CPU time as well: on a loaded machine the wall time says little about the work.
        resolve_cpu_ms = round((time.process_time() - cpu_start) * 1000)
        if not changed:
            self.state = new
            return {"ok": True, "written": [], "removed": [], "ms": ms_since(start), "lockMs": 0, "openMs": 0,
                    "resolveMs": resolve_ms, "resolved": 0, "reresolved": 0}
        check_ms = 0
        if CHECK:
            check_start = time.monotonic()
            differences = list(new.index_check or []) + compare_links(new.links, self.tree.resolve(new.files, new.imports_map))
            check_ms = ms_since(check_start)
            if differences:
                for line in differences[:200]:
                    log(f"check: {line}")
                return {"ok": False, "code": "FAILED",
                        "reason": f"narrowed resolution differs from the full one: {len(differences)} differences, "
                                  f"first: {differences[0]}"[:500]}
        rewritten = rewritten_owners(self.state, new, resolved, changed)
        present_changed = sorted(path for path in changed if path in new.files)
        names: Set[str] = set()
        for path in changed:
            for entry in (self.state.files.get(path), new.files.get(path)):
                if entry is not None and "error" not in entry.data:
                    names.update(row["name"] for row in module_import_rows(entry.data))
        new.suffixes = suffixes_after(self.state.suffixes, new.files, added, removed)
        # FalkorDB evaluates an UNWIND batch against the graph before it; Kùzu's adapter and Neo4j go row by row.
        row_by_row = not self.db.falkordb
        metadata = module_metadata(new.files, names, row_by_row=row_by_row, order=new.keys)
        repo_name = self.root.name
        root_str = self.root.as_posix()

        # Where the time under the lock goes, ms per phase of the last attempt (the answer's "phases").
        phases: Dict[str, int] = {}
        # Files the graph holds that the tree no longer has and the engine never held (see work).
        stale: Set[str] = set()
        # The modules the deleted files pointed to: the only ones the update can leave unreferenced (purge).
        orphan_candidates: Set[str] = set()
        # Whether the update took a node or an edge out (a file deleted or replaced, links written again, a repo-wide
        # pass): an update that only adds (a new file nothing else links to) leaves nothing dangling to purge.
        took_out = True
        # Whether it can leave an ExternalClass node without an edge (see PURGE_QUERIES).
        external_classes = True

        def work(writer: Any) -> None:
            nonlocal took_out, external_classes
            phases.clear()
            clock = [time.monotonic()]

            def lap(name: str) -> None:
                now = time.monotonic()
                phases[name] = phases.get(name, 0) + round((now - clock[0]) * 1000)
                clock[0] = now

            writer.add_repository_to_graph(self.root, False)
            lap("repository")
            # An engine that read the tree after the change cannot see a file the change took out of the
            # tree without naming it (a line in .cgcignore or .gitignore, a folder deleted whole): the graph
            # says which of its files the tree no longer has, and they go as removed files do.
            stale.clear()
            if unsure:
                known = {norm(p) for p in set(new.files) | changed}
                stale.update(p for p in self.graph_files(writer) if norm(p) not in known)
            # A path whose old content the engine never held may have been the first importer of a
            # module (its metadata comes from the first importer): the graph says what it imported.
            extra = self.modules_imported_by(writer, sorted(unsure | stale)) - names
            if extra:
                metadata.update(module_metadata(new.files, extra, row_by_row=row_by_row))
            lap("unsure")
            # A changed path whose old content the engine never held: any file's rows may have depended on
            # that content (an edge into it, or a name it defined that a call elsewhere resolved against),
            # and the rows the engine holds, resolved against the tree as it is now, cannot tell which. Every
            # file's links are written again. Where it held the old content, its rows are what the graph
            # has, and the re-resolution tells which differ.
            if unsure:
                rewritten.update(set(new.files) - changed)
            # cgc purges after every file it deletes, scanning every Parameter of the graph each time
            # (1.3 s at 1 000 files on FalkorDB); the one scoped purge after the update does that work.
            writer._purge_dangling_pathless_nodes = lambda: None
            held_files = self.state.files
            doomed = sorted({p for p in changed if p in held_files or p in removed} | stale)
            took_out = bool(doomed or rewritten or new.suffixes & CPP_SOURCES or ".java" in new.suffixes)
            orphan_candidates.clear()
            orphan_candidates.update(self.modules_linked_from(writer, doomed))
            # The graph's rows of the files whose edges go are the engine's last ones, where it held them.
            external_classes = bool(unsure or stale) or external_parents(as_before(self.state.rows),
                                                                          itertools.chain(doomed, rewritten))
            for path in doomed:
                if self.db.falkordb and not detach_on_falkordb():
                    delete_file_edges_first(writer, path)
                else:
                    writer.delete_file_from_graph(path)
            lap("deleteFiles")
            for path in present_changed:
                data = new.files[path].data
                if "error" not in data:
                    writer.add_file_to_graph(data, repo_name, new.imports_map, repo_path_str=root_str)
                elif not data.get("unsupported"):
                    writer.add_minimal_file_node(Path(path), self.root, False)
            lap("addFiles")
            self.delete_outgoing_links(writer, sorted(rewritten), not self.db.embedded)
            lap("deleteLinks")
            chosen = choose_links(new, {norm(p) for p in changed | rewritten}, changed, changed | rewritten)
            lap("chooseLinks")
            phases["linkRows"] = write_links(writer, chosen, new.imports_map)
            lap("writeLinks")
            self.reset_modules(writer, metadata)
            lap("modules")
            # These repo-wide passes match classes by name in any file, so any change can add an
            # edge to them: they run again whenever the tree has what they link (MERGE, idempotent).
            # (os.path's suffix where Path's would cost 50 ms at 5 000 files; the two differ only for
            # names ending in a dot, never one of these.)
            suffixes = new.suffixes
            if suffixes & CPP_SOURCES:
                writer.write_cpp_class_function_links(root_str)
            if ".java" in suffixes:
                self.rewrite_java_passes(writer, new)
            lap("repoPasses")

        def purge(writer: Any) -> None:
            purge_dangling(writer, sorted(norm(p) for p in changed | removed | stale), sorted(orphan_candidates),
                           self.db.backend, external_classes)

        try:
            open_ms = self.db.open()
        except Busy as error:
            self.distrust()
            return {"ok": False, "code": "BUSY", "reason": str(error)[:500]}
        lock_start = time.monotonic()
        # cgc stamps the Repository when it indexes (and this engine on each update): the stamp found before
        # this write says whether such a writer came since the stamp the caller last knew (it judges whose).
        held, stamp_before = self.repository_stamp()
        # A graph with no Repository node for the root holds no index of it (deleted since, or a server that
        # lost its data): the changed files written into it would make a graph of a few files, which a
        # read-back of those files would call fresh. Nothing is written; the caller probes again.
        if not held:
            return {"ok": False, "code": "NO_GRAPH",
                    "reason": f"the graph holds no index of {self.root.as_posix()} (deleted, or lost by its server)"}
        # Without transactions (FalkorDB) an update stopped halfway leaves the graph unknown; the
        # marker outlives this process so the next session says so ("diverged" in its ready line).
        marker = self.dirty_marker()
        if marker is not None and not self.db.embedded:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("an update did not finish\n", encoding="utf-8")
        # From the commit until the state below is the new one, neither the state nor a cache saved meanwhile
        # (on a stop, at exit) is what the graph holds.
        was_trusted = self.trusted
        self.trusted = False
        untrusted = self.untrusted_marker()
        if untrusted is not None:
            untrusted.parent.mkdir(parents=True, exist_ok=True)
            untrusted.write_text("the graph may have an update the saved cache does not\n", encoding="utf-8")
        try:
            info = self.db.write_transaction(work)
        except Exception as error:  # noqa: BLE001 - answered, and the state says what it knows
            if not self.db.embedded:
                self.diverged = True
                return {"ok": False, "code": "DIVERGED", "reason": f"{error}"[:500]}
            self.trusted = was_trusted  # rolled back: the graph is as it was
            return {"ok": False, "code": "FAILED", "reason": f"{error}"[:500]}
        self.state = new
        try:
            # cgc's purge of unreferenced Module/ExternalClass nodes runs in its own transaction: inside
            # the one that deleted and re-created their incoming edges, Kùzu 0.11.3's
            # `NOT ()-[]->(n)` still saw them as unreferenced and deleted live nodes.
            if took_out:
                purge_start = time.monotonic()
                self.db.write_transaction(purge)
                phases["purge"] = ms_since(purge_start)
        except Exception as error:  # noqa: BLE001 - the update is in; what is left over is not known
            self.diverged = True
            return {"ok": False, "code": "DIVERGED", "reason": f"purge failed: {error}"[:500]}
        stamp_after = self.repository_stamp()[1]
        lock_ms = ms_since(lock_start)
        if marker is not None and not self.db.embedded:
            marker.unlink(missing_ok=True)
        self.trust()
        return {
            "ok": True,
            "stampBefore": stamp_before,
            "stampAfter": stamp_after,
            "written": present_changed,
            "removed": sorted(removed | stale),
            "ms": ms_since(start),
            "lockMs": lock_ms,
            "openMs": open_ms,
            "resolveMs": resolve_ms,
            "resolveCpuMs": resolve_cpu_ms,
            "checkMs": check_ms,
            "resolved": len(new.files),
            "reresolved": len(resolved),
            "rewritten": len(rewritten),
            "unsure": len(unsure),
            "attempts": info.get("attempts", 1),
            "phases": phases,
        }

    def repository_stamp(self) -> Tuple[bool, Optional[str]]:
        """Whether the graph has the root's Repository node, and its `indexed_at` as cgc left it (None without)."""
        rows = self.db.read("MATCH (r:Repository {path: $p}) RETURN r.indexed_at AS at", p=self.root.as_posix())
        at = rows[0]["at"] if rows else None
        return bool(rows), None if at is None else str(at)

    def graph_files(self, writer: Any) -> Set[str]:
        """The paths of the File nodes the graph holds under the root."""
        with writer.driver.session() as session:
            rows = session.run("MATCH (f:File) WHERE f.path STARTS WITH $prefix RETURN f.path AS path",
                               prefix=self.root.as_posix().rstrip("/") + "/")
            return {row["path"] for row in rows if row["path"]}

    @staticmethod
    def modules_imported_by(writer: Any, paths: List[str]) -> Set[str]:
        """The modules the graph's files at `paths` import."""
        if not paths:
            return set()
        with writer.driver.session() as session:
            rows = session.run(
                "UNWIND $paths AS p MATCH (f:File {path: p})-[:IMPORTS]->(m:Module) RETURN DISTINCT m.name AS name",
                paths=paths,
            )
            return {row["name"] for row in rows if row["name"] is not None}

    @classmethod
    def modules_linked_from(cls, writer: Any, paths: List[str]) -> Set[str]:
        """The modules the graph's files at `paths` import, or a class of theirs includes."""
        if not paths:
            return set()
        from codegraphcontext.tools.indexing.persistence.writer import _is_binder_exception

        found = cls.modules_imported_by(writer, paths)
        try:
            with writer.driver.session() as session:
                rows = session.run(
                    "UNWIND $paths AS p MATCH (f:File {path: p})-[:CONTAINS]->(c:Class)-[:INCLUDES]->(m:Module) "
                    "RETURN DISTINCT m.name AS name",
                    paths=paths,
                )
                found.update(row["name"] for row in rows if row["name"] is not None)
        except TransactionLost:
            raise  # the transaction runs again, this statement known (TxnConnection)
        except Exception as error:  # noqa: BLE001 - as cgc: a label or edge this backend never made
            if not _is_binder_exception(error):
                raise
        return found

    @staticmethod
    def delete_outgoing_links(writer: Any, paths: List[str], per_label: bool) -> None:
        if not paths:
            return
        with writer.driver.session() as session:
            if per_label:
                # A server backend: one statement per label, each through its label's index on path. One
                # statement over unlabelled nodes scans the whole graph (28 ms at 1 000 files on FalkorDB,
                # against 8 ms for its 22 labels, whatever the graph's size).
                labels = [row["label"] for row in session.run("CALL db.labels()")]
                for label in labels:
                    session.run(
                        f"MATCH (a:`{label}`) WHERE a.path IN $paths MATCH (a)-[r]->() WHERE type(r) IN $types DELETE r",
                        paths=paths, types=list(LINK_TYPES),
                    )
                return
            for rel in LINK_TYPES:
                session.run(f"UNWIND $paths AS p MATCH (a)-[r:{rel}]->() WHERE a.path = p DELETE r", paths=paths)

    @staticmethod
    def reset_modules(writer: Any, metadata: Dict[str, Tuple[Any, Any]]) -> None:
        with writer.driver.session() as session:
            for name, (lang, full) in sorted(metadata.items()):
                sets = []
                params: Dict[str, Any] = {"name": name}
                for prop, value in (("lang", lang), ("full_import_name", full)):
                    if value is None:
                        sets.append(f"m.{prop} = NULL")
                    else:
                        sets.append(f"m.{prop} = ${prop}")
                        params[prop] = value
                session.run(f"MATCH (m:Module {{name: $name}}) SET {', '.join(sets)}", **params)

    @staticmethod
    def rewrite_java_passes(writer: Any, state: TreeState) -> None:
        """The pipeline's Spring and ORM passes match by name across files: run them whole again."""
        data = Tree.parsed(state.files)
        injections = [i for fd in data for i in fd.get("spring_injections") or []]
        if injections:
            writer.write_spring_inject_links(injections)
        endpoints = [
            {"func_name": fn["name"], "path": fn["path"], "line_number": fn["line_number"],
             "http_method": fn.get("http_method"), "http_path": fn.get("http_path")}
            for fd in data for fn in fd.get("functions", []) if fn.get("http_method")
        ]
        if endpoints:
            writer.write_spring_endpoint_properties(endpoints)
        orm = [m for fd in data for m in fd.get("orm_mappings") or []]
        if orm:
            writer.write_orm_mappings(orm)
            writer.write_query_links(orm)
            writer.write_spring_data_repo_links(orm)

    # -- verify -------------------------------------------------------------------------------
    def verify(self, paths: List[str]) -> Dict[str, Any]:
        try:
            self.db.open()
        except Busy as error:
            self.distrust()
            return {"ok": False, "code": "BUSY", "reason": str(error)[:500]}
        # The update's own walk said which files are indexed (its state's files); the disk is asked only about
        # the paths read back: a file gone since is unreflected, as is one whose content moved on (below). An
        # ignore rule changed since is a change of its own, which the next update takes. A second walk of the
        # tree here cost as much as the rest of the read-back at 5 000 files.
        reflected, unreflected = [], []
        for path in (norm(p) for p in paths):
            entry = self.state.files.get(path)
            if entry is not None and Path(path).is_file() and self.tree.parse_in_doubt(path, entry):
                again = self.tree.parse(Path(path), digest_of(Path(path)))
                if again.data != entry.data:
                    unreflected.append(path)  # the graph has the failed parse; the file parses now
                    continue
            indexable = entry is not None and not entry.data.get("unsupported") and Path(path).is_file()
            exists = bool(self.db.read("MATCH (f:File {path: $p}) RETURN f.path AS p", p=path))
            ok = exists == indexable
            if ok and indexable and Path(path).is_file() and digest_of(Path(path))[2] != entry.digest:
                ok = False  # the disk moved on since the engine last saw it
            if ok and indexable:
                for label, key in (("Function", "functions"), ("Class", "classes")):
                    graph = sorted(r["n"] for r in self.db.read(
                        f"MATCH (f:File {{path: $p}})-[:CONTAINS]->(x:{label}) RETURN x.name AS n", p=path))
                    disk = sorted(item["name"] for item in entry.data.get(key, []))
                    ok = ok and graph == disk
            (reflected if ok else unreflected).append(path)
        return {"ok": True, "reflected": reflected, "unreflected": unreflected}


# ---------------------------------------------------------------------------------------------
# The canonical dump: the repository's subgraph, one sorted line per node and per edge.

VOLATILE = {"_id", "_label", "_src", "_dst", "uid", "indexed_at"}
IDENTITY = ("path", "name", "line_number", "occurrence_index", "function_line_number")


def _props(value: Any) -> Tuple[str, Dict[str, Any]]:
    if isinstance(value, dict):  # KùzuDB
        return str(value.get("_label")), {k: v for k, v in value.items() if k not in VOLATILE and v is not None}
    labels = getattr(value, "labels", None)  # a FalkorDB node (a list) or a Neo4j node (a frozenset)
    if labels:
        label = labels[0] if isinstance(labels, list) else sorted(labels)[0]
    else:  # a FalkorDB edge (.relation) or a Neo4j relationship (.type)
        label = getattr(value, "relation", None) or getattr(value, "type", "?")
    properties = getattr(value, "properties", None)
    if properties is None:  # Neo4j: the entity is its own mapping
        properties = dict(value.items()) if hasattr(value, "items") else {}
    return str(label), {k: v for k, v in properties.items() if k not in VOLATILE and v is not None}


def canonical_dump(db: Database, root: Path, dangling: bool = False) -> List[str]:
    """Nodes and edges are rendered from their properties only. Internal ids are not used even to
    join: right after a write transaction Kùzu 0.11.3 answered `MATCH (n) RETURN n` and
    `MATCH (a)-[e]->(b)` with ids that did not agree, in the same process. A node without a path belongs to
    the repository through its edges; `dangling` (for a graph that holds this repository alone) adds those
    with no edge at all, which a purge should have taken (a full index leaves none)."""
    root_str = root.as_posix()

    def render(props: Dict[str, Any]) -> str:
        return json.dumps(props, sort_keys=True, default=str, ensure_ascii=False).replace(root_str, "<root>")

    def in_repo(props: Dict[str, Any]) -> bool:
        path = props.get("path")
        return isinstance(path, str) and (path == root_str or path.startswith(root_str + "/"))

    def ident(label: str, props: Dict[str, Any]) -> str:
        return f"{label}{render({k: props[k] for k in IDENTITY if k in props})}"

    lines: List[str] = []
    unplaced: Set[str] = set()
    for record in db.read("MATCH (n) RETURN n"):
        label, props = _props(record["n"])
        if in_repo(props):
            lines.append(f"N {label} {render(props)}")
        elif dangling and "path" not in props:
            unplaced.add(f"N {label} {render(props)}")
    pathless: Set[str] = set()
    linked: Set[str] = set()  # the pathless nodes at an end of any edge (dangling: the others)
    for record in db.read("MATCH (a)-[e]->(b) RETURN a, e, b"):
        (a_label, a), (e_label, e), (b_label, b) = _props(record["a"]), _props(record["e"]), _props(record["b"])
        ours = in_repo(a) or in_repo(b)
        if ours:
            lines.append(f"E {e_label} {ident(a_label, a)} -> {ident(b_label, b)} {render(e)}")
        for label, props in ((a_label, a), (b_label, b)):
            if "path" not in props and (ours or dangling):
                (pathless if ours else linked).add(f"N {label} {render(props)}")
    edgeless = [f"dangling {line}" for line in sorted(unplaced - pathless - linked)] if dangling else []
    return sorted(lines + sorted(pathless) + edgeless)


def write_dump(db: Database, root: Path, out: Optional[str], dangling: bool = False) -> int:
    lines = canonical_dump(db, root, dangling)
    text = "".join(line + "\n" for line in lines)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        _PROTOCOL.write(text)
        _PROTOCOL.flush()
    return len(lines)


# ---------------------------------------------------------------------------------------------
# serve: the JSON-lines loop, letting go of the database when idle.


class Stop(BaseException):
    """A stop signal. Not an Exception: cgc's library catches Exception around each file's parse (and a parser's
    start), so a stop raised there was once taken for the file's parse error, the update went on without the
    file, and the cache saved at exit kept it as unparseable (docs/reliability.md, seed 20261332)."""


def serve(args: argparse.Namespace, version: str) -> int:
    root = Path(args.root).resolve()
    engine = Engine(root, Path(args.cache_dir).resolve() if args.cache_dir else None, args.context, version)
    if engine.db.backend not in PROVEN_BACKENDS:
        refuse(f"backend {engine.db.backend} is not one the engine was proven on ({', '.join(sorted(PROVEN_BACKENDS))})")
    facts = engine.start()
    keep_heap()
    emit({"event": "ready", "cgcVersion": version, "backend": engine.db.backend, **facts})

    def on_signal(signum: int, _frame: Any) -> None:
        raise Stop(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    stdin = sys.stdin.buffer.raw if hasattr(sys.stdin.buffer, "raw") else sys.stdin.buffer
    buffer = b""
    close_at: Optional[float] = None
    save_at: Optional[float] = None
    requests_since_reclaim = 0
    try:
        while True:
            deadlines = [at for at in (close_at, save_at) if at is not None]
            timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
            if engine.saving is not None or engine.ending:
                timeout = SAVE_POLL_S if timeout is None else min(timeout, SAVE_POLL_S)
            elif engine.pages.pending:
                timeout = 0.0
            ready, _, _ = select.select([stdin], [], [], timeout)
            engine.finish_save()
            if not ready:
                engine.reap_ended()
                if engine.saving is None and engine.pages.pending:
                    engine.pages.step()
                now = time.monotonic()
                if close_at is not None and now >= close_at:
                    engine.db.close()
                    close_at = None
                    if requests_since_reclaim >= RECLAIM_EVERY:
                        keep_heap(reclaim=True)
                        requests_since_reclaim = 0
                if save_at is not None and now >= save_at:
                    save_at = None
                    if engine.cache_dirty:
                        engine.save_cache_aside()
                        if engine.ending:
                            save_at = now + SAVE_POLL_S  # not begun while an overtaken copy still ends
                continue
            chunk = os.read(stdin.fileno(), 1 << 16)
            if not chunk:
                return 0
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if not line.strip():
                    continue
                engine.overtake_save()
                engine.requests += 1
                if handle(engine, line) == "shutdown":
                    return 0
                keep_heap()
                requests_since_reclaim += 1
                close_at = time.monotonic() + args.hold_ms / 1000
                save_at = time.monotonic() + max(SAVE_IDLE_S, engine.last_save_s)
    except Stop as stop:
        log(f"stopping on {stop}")
        return 0
    finally:
        engine.db.close()
        try:
            engine.finish_save(wait=True)  # a save of what the engine holds now is let finish
            engine.reap_ended(wait=True)
            if engine.cache_dirty:
                engine.save_cache()
        except Exception as error:  # noqa: BLE001 - a cache is never worth a failed exit
            log(f"cache not saved: {error}")


# A fault for tests: a save made aside waits until this file exists (a large state's save takes seconds).
SAVE_GATE = os.environ.get("PI_CGC_ENGINE_SAVE_GATE")
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
        if not self.ranges and os.environ.get("PI_CGC_ENGINE_DEBUG"):
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
        if os.environ.get("PI_CGC_ENGINE_DEBUG"):
            log(f"idle collection: {found} unreachable, {round((time.process_time() - started) * 1000)} CPU ms")
    gc.freeze()


def handle(engine: Engine, line: bytes) -> Optional[str]:
    request: Dict[str, Any] = {}
    try:
        request = json.loads(line)
        op = request.get("op")
        if op == "update":
            answer = engine.update(list(request.get("paths") or []))
            # Saved when idle, not before answering: pickling a large tree costs time the caller waits.
            engine.cache_dirty = engine.cache_dirty or bool(answer.get("ok"))
        elif op == "verify":
            answer = engine.verify(list(request.get("paths") or []))
        elif op == "dump":
            try:
                engine.db.open()
                answer = {"ok": True, "lines": write_dump(engine.db, engine.root, request["out"], bool(request.get("dangling")))}
            except Busy as error:
                answer = {"ok": False, "code": "BUSY", "reason": str(error)[:500]}
        elif op == "rebuilt":
            # The caller rebuilt the graph with a full index: the tree on disk is what the graph holds.
            marker = engine.dirty_marker()
            if marker is not None:
                marker.unlink(missing_ok=True)
            engine.pending.clear()
            facts = engine.start(from_disk=True)
            engine.trust()
            engine.unknown = {norm(p) for p in request.get("unknown") or []}
            engine.save_cache()
            answer = {"ok": True, **facts, "trusted": True, "unknown": len(engine.unknown)}
        elif op == "shutdown":
            emit({"id": request.get("id"), "ok": True})
            return "shutdown"
        else:
            answer = {"ok": False, "code": "FAILED", "reason": f"unknown op {op!r}"}
    except Stop:
        raise
    except Exception as error:  # noqa: BLE001 - one bad request is answered, not fatal
        log(f"request failed: {error!r}")
        answer = {"ok": False, "code": "FAILED", "reason": f"{error}"[:500]}
    emit({"id": request.get("id"), **answer})
    return None


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(prog="pi_cgc_engine")
    sub = parser.add_subparsers(dest="command", required=True)
    serve_p = sub.add_parser("serve")
    serve_p.add_argument("--root", required=True)
    serve_p.add_argument("--cache-dir")
    serve_p.add_argument("--hold-ms", type=int, default=1000)
    serve_p.add_argument("--context")
    dump_p = sub.add_parser("dump")
    dump_p.add_argument("--root", required=True)
    dump_p.add_argument("--out")
    dump_p.add_argument("--dangling", action="store_true", help="also pathless nodes with no edge (a graph of this repository alone)")
    dump_p.add_argument("--context")
    if argv[:1] == ["cgc"]:
        return run_cgc_zero_safe(argv[1:])
    args = parser.parse_args(argv)
    version = load_cgc()
    if args.command == "serve":
        return serve(args, version)
    root = Path(args.root).resolve()
    db = Database(root, args.context)
    try:
        db.open()
        count = write_dump(db, root, args.out, args.dangling)
        log(f"{count} lines")
        return 0
    except Busy as error:
        log(f"BUSY: {error}")
        return 2
    finally:
        db.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
