"""The engine: start, plan and apply an update, verify, and the warm-start cache."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import time
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from . import adopt, graph_rows
from . import cgc_contract as cgc
from .cache import CacheKeeping
from .context import RUN
from .database import (
    Busy,
    Database,
    TransactionLost,
)
from .files import FileEntry, SharedValues, compact_lists, digest_of, lean_nested, make_lean, norm, same_content
from .graph_profiles import PROFILES
from .journal import Journal
from .link_rows import (
    LINK_TYPES,
    assemble_links,
    compare_links,
    module_import_rows,
    module_metadata,
    rewritten_owners,
    suffixes_after,
)
from .memory import PageReclaim, collector_paused, release_free_memory
from .narrowing import call_facts
from .parse_pool import parse_all
from .possible_calls import Views
from .protocol import log, ms_since, plural
from .recording import settled_imports
from .resolution import resolve_tree
from .source_stash import SourceStash
from .tree import Tree
from .tree_state import TreeState
from .update_bulk import bulk_pays
from .update_write import UpdateWrite

# ---------------------------------------------------------------------------------------------
# The engine.

# An update that must write every file's links again (an engine that read the tree from the disk: the graph was
# written elsewhere, so what it holds of a file says nothing of what the graph holds) is left to pi-cgc's own full
# index on KùzuDB when the tree's calls times its functions reach this. There each call's link is a MATCH ... MERGE
# that Kùzu plans as a scan of the whole table, so the rewrite grows with about that product. Measured (Python
# files; the product, the rewrite, then pi-cgc's full index and the engine's re-read after it): 12 million, 4 s
# against 14 s (3 500 one-line functions); 34 million, 7.6 s against about 13 s (100 files of the standard
# library); 146 million, 25 s against about 17 s (300 files); 1 000 files, 478 s against about 35 s (beside the
# test suite). On a database server the rewrite is the faster one (12 s at 1 000 files on FalkorDB, the index 28 s).
REBUILD_RATHER_FROM = 100_000_000


def rewrite_cost(state: TreeState) -> int:
    """What writing every file's links again costs on KùzuDB, as REBUILD_RATHER_FROM counts it: the tree's calls
    times its functions."""
    functions = calls = 0
    for entry in state.files.values():
        functions += len(entry.data.get("functions") or ())
        calls += len(entry.data.get("function_calls") or ())
    return functions * calls


def lean_kept(state: TreeState) -> None:
    """Every kept file, and its share of the kept indices, without what nothing reads after it was written
    (files.make_lean): about half of what the engine holds. Files already lean are passed over."""
    contrib = state.contrib or {}
    for key, entry in state.files.items():
        if not entry.lean:
            make_lean(entry)
            lean_nested(contrib.get(key))


class Engine(CacheKeeping):
    """The engine of one workspace root: its model of the tree (state) and of the graph, and the updates that
    keep the graph equal to a full index of the tree."""

    def __init__(self, root: Path, cache_dir: Optional[Path], context: Optional[str], version: str):
        self.root = root
        self.version = version
        self.db = Database(root, context)
        self.tree = Tree(root, self.db.ctx.cgcignore_path)  # its write profile is set at the start (the backend's)
        self.state = TreeState()
        self.cache_file = (cache_dir / (hashlib.sha1(root.as_posix().encode()).hexdigest() + ".pickle")) if cache_dir else None
        self.diverged = False
        self.pending: Set[str] = set()
        # While a full index reads the tree: its files' source text and docstrings, on disk (see Engine.start).
        self.stash: Optional[SourceStash] = None
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
        # Each parsed file's view for the possible callers (see possible), kept while its content is the same.
        self.views = Views(root.as_posix())
        # The files dict the last plan made and the discovery it made it from (see plan).
        self.discovered: Optional[Tuple[Dict[str, FileEntry], List[Path]]] = None
        # The state is not trusted and still whole (read to be compared with the graph: adopt_graph).
        self.adoptable = False
        # Files whose links the state holds as resolved at another root (a worktree's state moved from its main
        # checkout's: relocate.root_sensitive): the next update resolves them again.
        self.foreign_rows: FrozenSet[str] = frozenset()

    # -- start --------------------------------------------------------------------------------
    def start(self, from_disk: bool = False, progress: Optional[Callable[[str], None]] = None,
              save: bool = True, writing: bool = False, adopting: bool = False) -> Dict[str, Any]:
        """Reads the tree: from the warm cache when it is the graph's model (trusted), else from the disk
        (`from_disk`: the graph was just rebuilt from it, or is about to be), parsing what the cache does not
        have. `progress` is told each phase; `save`: the state read from the disk is saved as the cache;
        `writing`: the whole state is about to be written (every file parsed in full, and kept so until
        lean_kept, its source text and docstrings in `stash`: self.stash.whole gives a file's data whole), else it
        is lean from the start. `adopting`: a state not trusted is kept whole too, until the graph is adopted
        (adopt_graph)."""
        with collector_paused():
            return self._start(from_disk, progress, save, writing, adopting)

    def _start(self, from_disk: bool, progress: Optional[Callable[[str], None]], save: bool,
               writing: bool, adopting: bool = False) -> Dict[str, Any]:
        # serve may have read the cache first
        start = self.cache_read_at if self.cache_read_at is not None else time.monotonic()
        cached = self.load_cache()
        self.cache_read_at = None  # a later start reads the cache again
        cached_state = self.cached_state
        self.cached_state = None
        # Known once cgc chose the database (Database), which the cache's read gave time to.
        self.tree.write_profile = PROFILES.get(self.db.backend)
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
            lean_kept(self.state)
            return {"files": len(self.state.files), "startMs": ms_since(start), "warm": True,
                    "cached": len(self.state.files), "trusted": True, "diverged": self.diverged}
        # Not the graph's model: kept whole until the graph is compared with it (adopt_graph).
        writing = writing or adopting
        self.adoptable = adopting
        self.drop_stash()  # a start's stash that no adoption took (a rebuild came first)
        if writing:
            self.stash = SourceStash()
        files, hits = self.read_tree(cached, progress, writing)
        # What the parse's results freed (the stashed text; unpickled results) goes back before cgc's resolution,
        # whose rows are small objects and would not reuse it: at 5 000 files, about 300 MB off the index's peak.
        release_free_memory()
        if progress is not None:
            progress(f"resolving links of {plural(len(files), 'file')}")
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
                if RUN.options.check:
                    differences = list(self.state.index_check or []) + compare_links(self.state.links, self.tree.resolve(files, imports_map))
                    for line in differences[:200]:
                        log(f"check: {line}")
                    if differences:
                        raise RuntimeError(f"the start's narrowed resolution differs from the full one: {differences[0]}")
        for entry in files.values():
            call_facts(entry)  # what an update's callback rule and pre-pass read of every file, computed once
        self.trusted = False
        if not writing:
            lean_kept(self.state)
        if save and not adopting:
            self.save_cache()
        return {"files": len(files), "startMs": ms_since(start), "warm": hits > 0, "cached": hits,
                "trusted": False, "diverged": self.diverged}

    def whole_data(self, data: Dict[str, Any]) -> Dict[str, Any]:
        """A file's data as the parse gave it: with what a full index's read put in the stash, if any."""
        return self.stash.whole(data) if self.stash is not None else data

    def drop_stash(self) -> None:
        if self.stash is not None:
            self.stash.close()
            self.stash = None

    def read_tree(self, cached: Dict[str, FileEntry], progress: Optional[Callable[[str], None]],
                  writing: bool = False) -> Tuple[Dict[str, FileEntry], int]:
        """Every file of the tree by path: the cached entry where its content is the same (and, `writing`, whole:
        not lean), else parsed (with both cores where that pays). Returns the files and how many came from the
        cache."""
        if progress is not None:
            progress("discovering files")
        files: Dict[str, FileEntry] = {}
        to_parse: List[Tuple[Path, Tuple[int, int, str]]] = []
        for path in self.tree.discover():
            known = digest_of(path)
            key = path.as_posix()
            hit = cached.get(key)
            if hit is not None and (hit.size, hit.mtime_ns, hit.digest) == known and not self.tree.parse_in_doubt(key, hit) \
                    and not (writing and hit.lean):
                files[key] = hit
            else:
                files[key] = None  # type: ignore[assignment]  # its place in discovery order, parsed below
                to_parse.append((path, known))
        total = len(to_parse)
        shown = [time.monotonic()]

        def parsed(count: int) -> None:
            # At most twice a second, and the last.
            if progress is not None and (count == total or time.monotonic() - shown[0] >= 0.5):
                shown[0] = time.monotonic()
                progress(f"parsing {count}/{plural(total, 'file')}")

        shared = SharedValues()
        for (path, _), entry in zip(to_parse, parse_all(self.tree, to_parse, parsed)):
            shared.share(entry.data)
            if self.stash is not None:
                self.stash.take(entry.data)
            # Its calls compact from here on (cgc's resolution goes through them once; its functions and variables,
            # read many times over, only after it: as dicts made again at each read, it took half as long again).
            compact_lists(entry, ("function_calls",))
            files[path.as_posix()] = entry
        return files, len(files) - total

    # -- resolution ---------------------------------------------------------------------------
    def resolve(self, prev: Optional[TreeState], files: Dict[str, FileEntry], imports_map: Dict[str, List[str]],
                changed: Set[str], disk_changed: bool, only: Optional[Set[str]] = None) -> Tuple[TreeState, Set[str]]:
        """resolve_tree, and the whole tree when the narrowing fails for a reason of its own."""
        try:
            return resolve_tree(prev, files, imports_map, changed, disk_changed, only, also=self.foreign_rows)
        except Exception as error:  # NarrowingFailed, or a fault of the narrowing itself
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
        # What to parse, gathered first: a checkout, a pull or a rebase changes hundreds of files at once, parsed
        # together on both cores (parse_pool), then resolved and written as one update.
        to_parse: List[Tuple[str, Path, Tuple[int, int, str]]] = []
        for path in named:
            known = digest_of(current.get(path) or Path(path))
            entry = old[path]
            if not self.trusted or path in self.unknown:
                modified.add(path)
                unsure.add(path)
            if known[2] != entry.digest or self.tree.parse_in_doubt(path, entry):
                to_parse.append((path, current.get(path) or Path(path), known))
            elif path in modified and entry.lean:
                # Written again (its old content as the graph has it is unknown): from a whole parse.
                to_parse.append((path, current.get(path) or Path(path), known))
            elif known[:2] != (entry.size, entry.mtime_ns):
                # Derived from the data, which is the same: carried with it.
                files[path] = dataclasses.replace(entry, size=known[0], mtime_ns=known[1], digest=known[2])
        added_order = list(added)
        to_parse.extend((path, current[path], digest_of(current[path])) for path in added_order)
        fresh = dict(zip((path for path, _, _ in to_parse),
                         parse_all(self.tree, [(where, known) for _, where, known in to_parse])))
        for path, _, known in to_parse:
            if path in added:
                continue
            entry, parsed = old[path], fresh[path]
            if known[2] != entry.digest or self.tree.parse_in_doubt(path, entry):
                if known[2] != entry.digest or not same_content(parsed.data, entry):
                    modified.add(path)
                elif path not in modified:
                    parsed.parsed = entry.parsed  # the same content: its copy given to cgc stands (resolve_tree)
            files[path] = parsed
        # Likewise a requested path gone from the disk that the engine never held: the graph may still have it.
        never_held = {
            p for p in requested
            if p not in files and p not in added and p not in old and not Path(p).is_dir()
            and (not self.trusted or p in self.unknown)
        }
        removed |= never_held
        unsure |= never_held
        for path in added_order:
            files[path] = fresh[path]
        changed = removed | added | modified
        self.discovered = (files, found)  # the files of this discovery (see above)
        if not changed and not self.foreign_rows:
            return dataclasses.replace(self.state, files=files), changed, removed, added, set(), set()
        owners: Optional[Dict[str, Tuple[str, ...]]] = None
        groups: Optional[List[str]] = None
        check: List[str] = list(self.tree.walk_check)
        self.tree.walk_check.clear()
        if RUN.options.full_indices:
            imports_map = self.tree.merge_imports(files)
        else:
            imports_map, owners, groups = self.tree.merge_imports_kept(self.state, files, changed)
            if RUN.options.check:
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
        undone when the span ends without a new state (--copy-state: copied, for comparisons).
        `exact`: the key order is put back too (default: on an embedded database, or without one)."""
        last = self.state
        db = getattr(self, "db", None)
        journal = Journal(exact=exact if exact is not None else db is None or db.embedded) \
            if RUN.options.in_place else None
        try:
            with RUN.journaling(journal):
                yield journal
        finally:
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
        if not changed and not resolved:
            self.state = new
            lean_kept(new)
            return {"ok": True, "written": [], "removed": [], "ms": ms_since(start), "lockMs": 0, "openMs": 0,
                    "resolveMs": resolve_ms, "resolved": 0, "reresolved": 0, "rewritten": 0}
        check_ms, refusal = self.check_against_full(new)
        if refusal is not None:
            return refusal
        if unsure and self.adoptable and not self.unknown:
            # The graph's old content is unknown, and the state is whole: the graph is compared with the state after
            # the change, and what differs is written (the change among it).
            adopted = self.adopt_graph(new, start)
            if adopted is not None:
                if adopted.get("ok"):
                    adopted.update(resolveMs=resolve_ms, resolveCpuMs=resolve_cpu_ms, checkMs=check_ms,
                                   reresolved=len(resolved), unsure=len(unsure),
                                   written=sorted(set(adopted["written"]) | {p for p in changed if p in new.files}))
                return adopted
        write = self.planned_write(new, changed, removed, added, resolved, unsure)
        replay_ms = 0
        if self.db.embedded and bulk_pays(new, set(write.present_changed), write.rewritten | (
                set(new.files) - changed if unsure else set())):
            replay_start = time.monotonic()
            write.bulk = self.replay(new)
            replay_ms = ms_since(replay_start)
        if write.bulk is None and unsure and self.db.embedded and rewrite_cost(new) >= REBUILD_RATHER_FROM:
            return {"ok": False, "code": "REBUILD",
                    "reason": f"the links of {len(new.files) - len(changed)} other files would be written again "
                              "(the graph was written elsewhere); on KùzuDB a full index is faster"}
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
        marker, was_trusted = self.mark_unfinished()
        try:
            info = self.db.write_transaction(write.work)
        except Exception as error:  # answered, and the state says what it knows
            if not self.db.embedded:
                self.diverged = True
                return {"ok": False, "code": "DIVERGED", "reason": f"{error}"[:500]}
            self.trusted = was_trusted  # rolled back: the graph is as it was
            return {"ok": False, "code": "FAILED", "reason": f"{error}"[:500]}
        self.state = new
        self.foreign_rows = frozenset()
        lean_kept(new)
        try:
            # cgc's purge of unreferenced Module/ExternalClass nodes runs in its own transaction: inside
            # the one that deleted and re-created their incoming edges, Kùzu 0.11.3's
            # `NOT ()-[]->(n)` still saw them as unreferenced and deleted live nodes.
            if write.took_out:
                purge_start = time.monotonic()
                self.db.write_transaction(write.purge)
                write.phases["purge"] = ms_since(purge_start)
        except Exception as error:  # the update is in; what is left over is not known
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
            "written": write.present_changed,
            "removed": sorted(removed | write.stale),
            "ms": ms_since(start),
            "lockMs": lock_ms,
            "openMs": open_ms,
            "resolveMs": resolve_ms,
            "resolveCpuMs": resolve_cpu_ms,
            "checkMs": check_ms,
            "replayMs": replay_ms,
            "bulk": write.bulk is not None,
            "resolved": len(new.files),
            "reresolved": len(resolved),
            "rewritten": len(write.rewritten),
            "unsure": len(unsure),
            "attempts": info.get("attempts", 1),
            "phases": write.phases,
        }

    def replay(self, state: TreeState) -> Optional[graph_rows.GraphRows]:
        """The rows a full index of `state` writes (graph_rows), or None where the replay refuses this tree."""
        profile = graph_rows.PROFILES.get(self.db.backend)
        datas = [entry.data for entry in state.files.values()]
        if profile is None or graph_rows.refusal(datas, profile=profile) is not None:
            return None
        try:
            return graph_rows.build_graph(self.root, datas, state.imports_map, assemble_links(state), profile=profile,
                                          normalize=cgc.normalize_path, commit_hash=cgc.repo_commit_hash(self.root),
                                          whole=self.whole_data)
        except graph_rows.NotReplicable as error:
            log(f"no full index of this tree is replayed ({error})")
            return None

    def adopt_graph(self, new: Optional[TreeState] = None, start: Optional[float] = None) -> Optional[Dict[str, Any]]:
        """Makes the graph a full index of `new` (the state, by default) by writing only what differs from it, and
        trusts the state (adopt.py). None where the full index of this tree is not one the replay makes (the
        caller writes as before); else an update's answer, or BUSY, NO_GRAPH, REBUILD, FAILED."""
        started = start if start is not None else time.monotonic()
        state = new if new is not None else self.state
        rows = self.replay(state)
        if rows is None:
            return None
        replay_ms = ms_since(started)
        try:
            open_ms = self.db.open()
        except Busy as error:
            self.distrust()
            return {"ok": False, "code": "BUSY", "reason": str(error)[:500]}
        lock_start = time.monotonic()
        held, stamp_before = self.repository_stamp()
        if not held:
            return {"ok": False, "code": "NO_GRAPH",
                    "reason": f"the graph holds no index of {self.root.as_posix()} (deleted, or lost by its server)"}
        found = adopt.differences(rows, self.db, self.root, state.files)
        compare_ms = ms_since(lock_start)
        facts = {"adopted": found.as_json(), "replayMs": replay_ms, "compareMs": compare_ms, "openMs": open_ms}
        for line in found.examples:
            log(f"adopt: {line}")
        if not found.none:
            bulk = self.db.embedded and bulk_pays(state, found.files, found.links)
            cost = sum(len(state.files[p].data.get("function_calls") or ()) for p in found.files | found.links
                       if p in state.files) * sum(len(e.data.get("functions") or ()) for e in state.files.values())
            if self.db.embedded and not bulk and cost >= REBUILD_RATHER_FROM:
                return {"ok": False, "code": "REBUILD",
                        "reason": f"{plural(len(found.files | found.links), 'file')} differ from a full index of the "
                                  "tree; on KùzuDB a full index is faster than writing them again"}
            self.state = state
            write = self.adoption_write(state, found)
            if bulk:
                write.bulk = rows
            marker, was_trusted = self.mark_unfinished()
            try:
                self.db.write_transaction(write.work)
            except Exception as error:  # answered, and the state says what it knows
                if not self.db.embedded:
                    self.diverged = True
                    return {"ok": False, "code": "DIVERGED", "reason": f"{error}"[:500]}
                self.trusted = was_trusted
                return {"ok": False, "code": "FAILED", "reason": f"{error}"[:500]}
            try:
                if write.took_out:
                    self.db.write_transaction(write.purge)
            except Exception as error:
                self.diverged = True
                return {"ok": False, "code": "DIVERGED", "reason": f"purge failed: {error}"[:500]}
            if marker is not None and not self.db.embedded:
                marker.unlink(missing_ok=True)
            facts["phases"] = write.phases
            facts["bulk"] = bulk
        del rows
        self.state = state
        replayed = self.replay(state) if RUN.options.check and not found.none else None
        if replayed is not None:
            left = adopt.differences(replayed, self.db, self.root, state.files)
            if not left.none:
                for line in left.examples:
                    log(f"check: {line}")
                self.diverged = True
                return {"ok": False, "code": "DIVERGED",
                        "reason": f"the adopted graph still differs from a full index: {left.as_json()}"}
        stamp_after = self.repository_stamp()[1]
        # The whole graph was compared: whatever an update stopped half-way left is written again now.
        if self.diverged:
            self.diverged = False
            dirty = self.dirty_marker()
            if dirty is not None:
                dirty.unlink(missing_ok=True)
        self.adoptable = False
        lean_kept(state)
        self.drop_stash()
        self.trust()
        self.cache_dirty = True
        return {"ok": True, "stampBefore": stamp_before, "stampAfter": stamp_after,
                "written": sorted(found.files), "removed": sorted(found.stale), "ms": ms_since(started),
                "lockMs": ms_since(lock_start), "resolved": len(state.files), "reresolved": 0,
                "rewritten": len(found.links), "attempts": 1, **facts}

    def adoption_write(self, state: TreeState, found: "adopt.Differences") -> UpdateWrite:
        """The write that makes the graph what a full index of `state` writes, from what differs (adopt_graph)."""
        changed = found.files | found.stale
        names = set(found.modules)
        for path in found.files:
            names.update(row["name"] for row in module_import_rows(state.files[path].data)
                         if "error" not in state.files[path].data)
        if changed:
            names |= self.modules_imported_by(self.db.writer(), sorted(changed))  # what the graph's files import
        if state.suffixes is None:
            state.suffixes = suffixes_after(None, state.files, set(), set())
        row_by_row = not self.db.falkordb
        metadata = module_metadata(state.files, names, row_by_row=row_by_row, order=state.keys)
        write = UpdateWrite(self, state, changed, set(found.stale), set(), set(found.links),
                            sorted(found.files), names, metadata, row_by_row)
        write.adopting = True
        write.extra_orphans = set(found.modules)
        return write

    def check_against_full(self, new: TreeState) -> Tuple[int, Optional[Dict[str, Any]]]:
        """With serve --check: the narrowed resolution compared with the whole one. (ms, the refusal if they differ)."""
        if not RUN.options.check:
            return 0, None
        check_start = time.monotonic()
        differences = list(new.index_check or []) + compare_links(new.links, self.tree.resolve(new.files, new.imports_map))
        check_ms = ms_since(check_start)
        if not differences:
            return check_ms, None
        for line in differences[:200]:
            log(f"check: {line}")
        return check_ms, {"ok": False, "code": "FAILED",
                          "reason": f"narrowed resolution differs from the full one: {len(differences)} differences, "
                                    f"first: {differences[0]}"[:500]}

    def planned_write(self, new: TreeState, changed: Set[str], removed: Set[str], added: Set[str], resolved: Set[str],
                      unsure: Set[str]) -> "UpdateWrite":
        """What the update writes, known before the graph is opened: the files whose links are written again, the
        modules whose metadata is reset (with what), the suffixes the repo-wide passes look for."""
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
        return UpdateWrite(self, new, changed, removed, unsure, rewritten, present_changed, names, metadata, row_by_row)

    def mark_unfinished(self) -> Tuple[Optional[Path], bool]:
        """The markers that outlive this process while the graph may hold a write the state does not say:
        (the dirty marker, whether the engine was trusted before)."""
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
        return marker, was_trusted

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
        except Exception as error:  # as cgc: a label or edge this backend never made
            if not cgc.is_binder_exception(error):
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
    def possible(self, targets: List[Dict[str, Any]]) -> Dict[str, Any]:
        """Each target function's possible call sites, from the tree as the engine last read it."""
        index = self.views.index(self.state.files)
        sites = [[site.as_json() for site in index.sites(norm(str(t.get("path"))), str(t.get("name")), int(t.get("line") or 0))]
                 for t in targets]
        return {"ok": True, "sites": sites}

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
        reflected: List[str] = []
        unreflected: List[str] = []
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
            if ok and indexable and entry is not None and Path(path).is_file() and digest_of(Path(path))[2] != entry.digest:
                ok = False  # the disk moved on since the engine last saw it
            # A file whose write the backend fails has in the graph what cgc's own index leaves of it (write_file).
            if ok and indexable and entry is not None and not entry.data.get("write_failed"):
                for label, key in (("Function", "functions"), ("Class", "classes")):
                    graph = sorted(r["n"] for r in self.db.read(
                        f"MATCH (f:File {{path: $p}})-[:CONTAINS]->(x:{label}) RETURN x.name AS n", p=path))
                    disk = sorted(item["name"] for item in entry.data.get(key, []))
                    ok = ok and graph == disk
            (reflected if ok else unreflected).append(path)
        return {"ok": True, "reflected": reflected, "unreflected": unreflected}
