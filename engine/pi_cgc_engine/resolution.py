"""resolve_tree: cgc's resolution of the link rows, narrowed to the files a change can affect."""

from __future__ import annotations

import bisect
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from . import cgc_contract as cgc
from .call_rows import NO_CALL_ROWS, CallRows
from .call_run import CallRun
from .cgc_contract import CALL_INDEXES, give_back, lend
from .context import RUN, NarrowingFailed
from .files import FileEntry, norm
from .journal import MISSING, Journal, as_before, order_differs
from .kept_indices import Keeper, compare_kept_indices
from .link_rows import CALL_GROUPS, PER_FILE_KINDS, target_paths
from .narrowing import (
    CandidateIndex,
    SortedMembers,
    call_candidates,
    callback_names,
    carried,
    diff_index,
    diff_keys,
    parsed_keys,
    whole_kinds_kept,
)
from .protocol import DebugClock, log
from .recording import (
    ALL_ITEMS,
    ALL_KEYS,
    NONEMPTY,
    ImportsMap,
    Parsed,
    imports_owed,
    settle_imports,
    settled_imports,
)
from .tree_state import TreeState, label_index, node_labels_of


def resolve_tree(
    prev: Optional[TreeState],
    files: Dict[str, FileEntry],
    imports_map: Dict[str, List[str]],
    changed: Set[str],
    disk_changed: bool,
    only: Optional[Set[str]] = None,
    keep: bool = True,
    also: FrozenSet[str] = frozenset(),
) -> Tuple[TreeState, Set[str]]:
    """The state after a change: the link rows of the files whose rows it can change resolved again
    (all of them without a previous state), every other file's kept. Returns (state, files resolved).
    `only` resolves just those files (a warm start's index-only run); `also` resolves those besides the ones the
    change reaches (their kept rows were resolved elsewhere: relocate.root_sensitive). `keep`: cgc's indices are kept per
    file (see "Kept indices") where that is possible; without it they are built from every file."""
    debug = DebugClock()
    keys = parsed_keys(prev, files, changed)
    data = parsed_list(prev, files, keys, changed)
    if type(imports_map) is not ImportsMap:
        imports_map = ImportsMap(imports_map)
    imports = ImportsChange(prev, files, changed, imports_map)
    fast = keep and not RUN.options.full_indices and bool(RUN.loop_roles)
    keeper: Optional[Keeper] = None
    has_kotlin = kotlin_in_tree(prev, files, changed, data)
    if fast and not has_kotlin:
        keeper = Keeper(prev, data, keys, changed, imports.flipped)
    candidates = call_candidates(prev, files, keys, changed)
    labels, new_label_index = node_labels_after(prev, files, keys, changed, RUN.journal if fast else None)
    decide = narrowing_decision(prev, files, keys, changed, disk_changed, only, fast, imports, labels,
                                new_label_index, candidates, debug)
    if also:
        decide = with_also(decide, set(also).intersection(files))

    debug.lap("labels")
    run = prepared_call_run(prev, files, data, imports, keeper, candidates, fast, decide, debug)
    groups, chosen = resolved_call_groups(run, data, imports.map)
    debug.lap("calls")
    deps = run.deps
    rows = call_rows_by_file(groups, chosen, files, deps)

    debug.lap("call rows")
    add_inheritance_rows(run, rows, chosen, files, deps, imports.map, new_label_index)

    reads = shared_reads(deps, chosen)
    debug.lap("per-file kinds")
    if whole_kinds_kept(prev, files, changed, has_kotlin):
        whole = prev.whole  # type: ignore[union-attr]
    else:
        whole = whole_tree_rows([files[key].data for key in keys], imports.map, has_kotlin)
    debug.lap("whole kinds")
    targets = {key: targets_of(rows[key]) for key in chosen}
    if prev is None and any(key not in chosen for key in keys):
        raise NarrowingFailed("files left unresolved without a previous state")
    contrib = keeper.kept_contrib() if keeper is not None else None
    if keeper is not None and contrib is not None:
        candidates["testers"] = keeper.testers(contrib)
    candidates["targeters"] = updated_targeters(prev, keys, chosen, targets)
    keys_kept = prev is not None and prev.keys is not None  # `keys` is the last state's but for the changed files
    new_deps = carried(prev.deps if prev is not None else None, reads, keys, chosen, changed, keys_kept)
    candidates["dependents"] = updated_dependents(prev, chosen, new_deps)
    state = TreeState(
        files=files,
        imports_map=imports.map,
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
    if RUN.options.check and keeper is not None:
        settled = {name: keeper.settled(name) if name in keeper.full else index for name, index in run.indices.items()}
        state.index_check = run.view_check + compare_kept_indices(settled, [files[key].data for key in keys],
                                                                  settled_imports(imports.map, files))
    elif RUN.options.check:
        state.index_check = run.view_check
    debug.lap("state")
    debug.report(f"resolve_tree: {len(chosen)} of {len(keys)} files")
    return state, chosen


def parsed_list(prev: Optional[TreeState], files: Dict[str, FileEntry], keys: List[str], changed: Set[str]) -> List[Parsed]:
    """The parsed copies cgc's resolution is given, in key order: the last state's list with the changed files
    taken out and put in where there is one, else a copy of each file's parse (kept on its entry)."""

    def parsed_of(key: str) -> Parsed:
        entry = files[key]
        fd = entry.parsed
        if fd is None or fd.key != key:
            fd = entry.parsed = Parsed(entry.data)
            fd.key = key
        return fd

    data: List[Parsed] = cgc.FileList()
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
    if RUN.options.check and any(files[key].parsed is not fd for key, fd in zip(keys, data)):
        raise NarrowingFailed("a carried parsed file is not its entry's")
    return data


class ImportsChange:
    """The imports map after a change, and how it may differ from the last state's: the names whose paths may
    differ (a merged name's paths come from the files that import or define it), those the change added or
    removed, and whether its key order may have changed."""

    def __init__(self, prev: Optional[TreeState], files: Dict[str, FileEntry], changed: Set[str],
                 imports_map: ImportsMap):
        self.map = imports_map
        self.touched: Set[str] = set()
        self.reordered = prev is None or any(key not in prev.files for key in changed if key in files)
        if prev is not None:
            for key in changed:
                before, after = prev.files.get(key), files.get(key)
                old_names = list(before.imports) if before is not None else []
                new_names = list(after.imports) if after is not None else []
                self.touched.update(old_names)
                self.touched.update(new_names)
                self.reordered = self.reordered or old_names != new_names or (before is None) != (after is None)
        # As the last state had it (see Journal).
        self.before: Dict[str, Any] = as_before(prev.imports_map) if prev is not None else {}
        self.flipped = {name for name in self.touched
                        if prev is not None and (name in self.before) != dict.__contains__(imports_map, name)}


def kotlin_in_tree(prev: Optional[TreeState], files: Dict[str, FileEntry], changed: Set[str], data: List[Parsed]) -> bool:
    if prev is not None and prev.kotlin is False and prev.keys is not None:
        # No Kotlin file before: one now only if a changed file is one.
        return any(key in files and "error" not in files[key].data and files[key].data.get("lang") == "kotlin"
                   for key in changed)
    return any(dict.get(fd, "lang") == "kotlin" for fd in data)


def node_labels_after(prev: Optional[TreeState], files: Dict[str, FileEntry], keys: List[str], changed: Set[str],
                      journal: Optional[Journal]) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """Each parsed file's node labels entry, and the node label index cgc's resolution reads."""
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
        if RUN.options.check and dict(new_label_index) != dict(label_index(labels, keys)):
            raise NarrowingFailed("the node label index kept in place is not the one built from every file")
        return labels, new_label_index
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
    return labels, label_index(labels, keys)


def with_also(decide: Callable[[Dict[str, Any]], Set[str]],
              also: Set[str]) -> Callable[[Dict[str, Any]], Set[str]]:
    """A choice of the files to resolve again that takes `also` besides."""
    return lambda info: decide(info) | also


def narrowing_decision(
    prev: Optional[TreeState],
    files: Dict[str, FileEntry],
    keys: List[str],
    changed: Set[str],
    disk_changed: bool,
    only: Optional[Set[str]],
    fast: bool,
    imports: ImportsChange,
    labels: Dict[str, Any],
    new_label_index: Dict[str, Any],
    candidates: Dict[str, Any],
    debug: DebugClock,
) -> Callable[[Dict[str, Any]], Set[str]]:
    """The choice of the files to resolve again, made once cgc's indices are built (CallRun calls it with them):
    the files that read a key of cgc's indices, the imports map or the node labels that the change changed."""
    imports_map, prev_imports, imports_touched = imports.map, imports.before, imports.touched

    def decide(info: Dict[str, Any]) -> Set[str]:
        debug.lap("cgc indices")
        if prev is None or info["skip_external"] != prev.skip_external:
            return set(keys)
        if only is not None:
            return set(only)
        if prev.indices is None:
            return set(keys)
        found: Set[Tuple[str, Any]] = set()
        defined = info["defined"]
        kept: Optional[Keeper] = info.get("keeper")
        if fast:
            # Only the keys the changed files touched can differ (the kept indices say which they touched).
            for name in CALL_INDEXES:
                if kept is not None and kept.usable:
                    diff_keys(name, as_before(prev.indices[name]), info["indices"][name], kept.touched.get(name, ()),
                              kept.reordered.get(name, False), found,
                              order_known=name not in kept.owed and name not in prev.order_owed)
                else:
                    diff_index(name, prev.indices[name], info["indices"][name], found)
            diff_keys("imports_map", prev_imports, imports_map, imports_touched, imports.reordered, found,
                      order_known=not imports_owed(prev.imports_map) and not imports_owed(imports_map))
            # The label index's keys are the files' paths in path order, each with its file's entry: only a
            # changed file's entry can differ, and the keys (so their order) only when a file came or went.
            prev_labels = as_before(prev.labels)  # changed in place under the journal (above)
            came_or_went = keys is not prev.keys if prev.keys is not None \
                else len(prev_labels) != len(labels) or any(k not in prev_labels for k in keys)
            before = dict(prev_labels.get(k) for k in changed if k in prev_labels)
            after = dict(labels[k] for k in changed if k in labels)
            moved = {path for path in before.keys() | after.keys() if before.get(path, MISSING) != after.get(path, MISSING)}
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
        if RUN.options.debug:
            log(f"changed keys: {sorted(map(str, (k for k in found if k[0] != 'callback_fn')))[:60]}")
            debug.lap("diff")
        last_deps = prev.deps
        dependents = (prev.candidates or {}).get("dependents")
        if dependents is None:
            return {key for key in keys if key in changed or key not in last_deps or not found.isdisjoint(last_deps[key])}
        # The files that read one of the changed keys, found by them (a test of every file: 4-5 ms at 5 000).
        # The last state has the reads of every file it parsed (carried), so a file without them is a changed one,
        # in the pool already, unless the counts say otherwise.
        present = SortedMembers(keys)
        pool = dependents.files_with(found)
        pool.update(changed)
        if prev.keys is None or len(last_deps) != len(prev.keys):
            pool.update(set(keys).difference(last_deps))
        elif RUN.options.check and not set(keys).difference(last_deps) <= pool:
            raise NarrowingFailed("a file unchanged since the last state has no reads recorded")
        return {key for key in pool if key in present
                and (key in changed or key not in last_deps or not found.isdisjoint(last_deps[key]))}

    return decide


def prepared_call_run(
    prev: Optional[TreeState],
    files: Dict[str, FileEntry],
    data: List[Parsed],
    imports: ImportsChange,
    keeper: Optional[Keeper],
    candidates: Dict[str, Any],
    fast: bool,
    decide: Callable[[Dict[str, Any]], Set[str]],
    debug: DebugClock,
) -> CallRun:
    """The narrowed run of cgc's call resolution, with the last state's language views of the imports map to
    serve again or to patch where they can."""
    imports_map, prev_imports, imports_touched, imports_reordered = imports.map, imports.before, imports.touched, imports.reordered
    run = CallRun(data, decide)
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
    return run


def resolved_call_groups(run: CallRun, data: List[Parsed], imports_map: ImportsMap) -> Tuple[List[Any], Set[str]]:
    """cgc's build_function_call_groups, run narrowed: its call groups, and the files `run` chose."""
    try:
        with RUN.resolving(run):
            groups = cgc.build_function_call_groups(data, imports_map, None)
    finally:
        give_back(run.lent)
    if run.chosen is None or not run.swapped and run.chosen:
        raise NarrowingFailed("cgc's resolution did not reach the points the narrowing hooks")
    return groups, run.chosen


def call_rows_by_file(groups: List[Any], chosen: Set[str], files: Dict[str, FileEntry],
                      deps: Dict[str, Set[Tuple[str, Any]]]) -> Dict[str, Dict[str, Any]]:
    """Each resolved file's CALLS rows, group by group (compact), and the reads they add to the file's."""
    if len(groups) != CALL_GROUPS:
        raise NarrowingFailed(f"cgc returned {len(groups)} call groups")
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
                ("file_symbol_labels", cgc.resolved_posix(row.get("called_file_path", ""))))
        # Each file's rows of the group kept compact, group by group: cgc's dicts go as each is done.
        group.clear()
        for key in chosen:
            own = rows[key]["calls"]
            own[index] = CallRows(own[index]) if own[index] else NO_CALL_ROWS
    for key in chosen:
        sink = deps.setdefault(key, set())
        if any(call.get("call_kind") == "dynamic_import" for call in files[key].data.get("function_calls") or []):
            sink.add(("disk", None))
    return rows


def add_inheritance_rows(run: CallRun, rows: Dict[str, Dict[str, Any]], chosen: Set[str], files: Dict[str, FileEntry],
                         deps: Dict[str, Set[Tuple[str, Any]]], imports_map: ImportsMap,
                         new_label_index: Dict[str, Any]) -> None:
    """Each resolved file's INHERITS, DECORATED_BY and metaclass rows, cgc's per file, its reads recorded."""
    imports_rec = run.recording_imports(imports_map)
    labels_rec = lend(new_label_index, "node_labels", run.lent)
    try:
        with cgc.node_label_index_as(labels_rec):
            for key in sorted(chosen):
                fd = files[key].data
                with RUN.recording(deps[key]):
                    inherits, _csharp = cgc.inh.build_inheritance_and_csharp_files([fd], imports_rec)
                    rows[key]["inherits"] = inherits
                    rows[key]["decorated"] = cgc.inh.build_decorated_by_links([fd], imports_rec)
                    rows[key]["metaclass"] = cgc.inh.build_metaclass_links([fd], imports_rec)
    finally:
        give_back(run.lent)


def whole_tree_rows(plain: List[Dict[str, Any]], imports_map: ImportsMap, has_kotlin: bool) -> Dict[str, Any]:
    """The kinds of link rows cgc builds from every file at once."""
    implements = cgc.inh.build_go_implements_links(plain)
    implements.extend(cgc.inh.build_haskell_implements_links(plain))
    implements.extend(cgc.inh.build_elixir_implements_links(plain))
    return {
        "implements": implements,
        "embeds": cgc.inh.build_embeds_links(plain),
        "companion": cgc.inh.build_companion_of_links(plain),
        "partial": cgc.inh.build_partial_of_links(plain),
        "part_of": cgc.inh.build_part_of_links(plain),
        "binds": cgc.inh.build_binds_links(plain, imports_map),
        # Its rows come from Kotlin files only; without one it returns none (after an index of all).
        "previews": cgc.inh.build_previews_links(plain, imports_map) if has_kotlin else [],
    }


def targets_of(file_rows: Dict[str, Any]) -> FrozenSet[str]:
    """The paths one file's rows point into."""
    found_targets = set()
    for group in file_rows["calls"]:
        found_targets |= target_paths("calls", group)
    for kind in PER_FILE_KINDS:
        found_targets |= target_paths(kind, file_rows[kind])
    return frozenset(found_targets)


def updated_targeters(prev: Optional[TreeState], keys: List[str], chosen: Set[str],
                      targets: Dict[str, FrozenSet[str]]) -> CandidateIndex:
    """name -> files: the files whose rows point into a file (choose_links)."""
    targeters = (prev.candidates or {}).get("targeters") if prev is not None else None
    if targeters is None:
        targeters = CandidateIndex()
        for key in keys:
            targeters.add(key, targets[key] if key in chosen else prev.targets[key])  # type: ignore[union-attr]
    else:
        for key in chosen:
            targeters.add(key, targets[key])
    return targeters


def updated_dependents(prev: Optional[TreeState], chosen: Set[str],
                       new_deps: Dict[str, Any]) -> CandidateIndex:
    """(index, key) -> files: the files whose resolution read it (decide)."""
    dependents = (prev.candidates or {}).get("dependents") if prev is not None else None
    if dependents is None:
        dependents = CandidateIndex()
        for key, read in new_deps.items():
            dependents.add(key, read)
    else:
        for key in chosen:
            dependents.add(key, new_deps[key])
    return dependents


def shared_reads(deps: Dict[str, Set[Tuple[str, Any]]], keys: Iterable[str]) -> Dict[str, Tuple[Tuple[str, Any], ...]]:
    """What each of these files' resolution read, as the state keeps it: a tuple (the reads are only looked
    through, never looked up: a set of them is four times the size), and one tuple per read (index, key) among the
    files (at 5 000 files, 657 000 reads of 232 000 distinct ones). The cache keeps them shared."""
    one: Dict[Tuple[str, Any], Tuple[str, Any]] = {}
    return {key: tuple(one.setdefault(item, item) for item in deps.get(key, ())) for key in keys}
