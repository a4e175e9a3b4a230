"""The link rows (CALLS, INHERITS, …): which an update writes again, and cgc's writers that write them."""

from __future__ import annotations

import collections
import itertools
import json
import os
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    FrozenSet,
    Iterable,
    Iterator,
    List,
    Optional,
    Set,
    Tuple,
)

from . import cgc_contract as cgc
from .call_rows import CallRows
from .files import FileEntry, norm
from .graph_sanitize import JS_IMPORT_LANGS, module_metadata_row
from .journal import as_before

if TYPE_CHECKING:
    from .tree_state import TreeState


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


EXTERNAL_PARENT = "__external__"  # cgc's resolved_parent_file_path of an inheritance row it could not resolve


def external_parents(rows_of: Dict[str, Any], keys: Iterable[str]) -> bool:
    """Whether any of these files' inheritance rows (as the graph has them) points to an ExternalClass."""
    return any(row.get("resolved_parent_file_path") == EXTERNAL_PARENT
               for key in keys for row in (rows_of.get(key) or {}).get("inherits", ()))


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
        elif not state.targets[key].isdisjoint(changed):
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
            if norm(r.get(owner_key)) in owners or (norm(r.get(target_key)) in changed)
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


def rows_by_target(rows: List[Dict[str, Any]] | CallRows, target: str, changed: Set[str], into: bool,
                   positions_of: Dict[Tuple[str, str, int], Any], slot: Tuple[str, str, int]) -> List[Dict[str, Any]]:
    """The rows whose target (normalized) is in `changed` (`into`), or the others, in their order; each
    distinct target is normalized once."""
    def column() -> List[Any]:
        return rows.column(target) if isinstance(rows, CallRows) else [row.get(target) for row in rows]

    if len(rows) >= BIG_ROW_LIST:
        kept = positions_of.get(slot)
        if kept is None or kept[0] is not rows:
            positions: Dict[Any, List[int]] = {}
            for at, raw in enumerate(column()):
                positions.setdefault(raw, []).append(at)
            kept = positions_of[slot] = (rows, positions)
        hit_at = sorted(at for raw, ats in kept[1].items() if norm(raw) in changed for at in ats)
        if into:
            return [rows[at] for at in hit_at]
        if not hit_at:
            return list(rows)
        dropped = set(hit_at)
        return [row for at, row in enumerate(rows) if at not in dropped]
    targets = column()
    hits = {raw for raw in set(targets) if norm(raw) in changed}
    if not hits:
        return [] if into else list(rows)
    return [rows[at] for at, raw in enumerate(targets) if (raw in hits) is into]


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
CALL_GROUPS = 10
PER_FILE_KINDS = ("inherits", "decorated", "metaclass")
WHOLE_KINDS = ("implements", "embeds", "companion", "partial", "part_of", "binds", "previews")


def target_paths(kind: str, rows: Iterable[Dict[str, Any]]) -> Set[str]:
    target_key = LINK_KEYS[kind][1]
    raws = set(rows.column(target_key)) if isinstance(rows, CallRows) else {row.get(target_key) for row in rows}
    return {norm(raw) for raw in raws}


def assemble_links(state: TreeState, lazy_calls: bool = False) -> Dict[str, Any]:
    """The full link lists in the pipeline's order: each is the files' rows concatenated in path order.
    `lazy_calls`: each call group is an iterator over the files' rows instead (read once; a million rows at 5 000
    files, made only as they are read)."""
    links: Dict[str, Any] = {kind: [] for kind in LINK_KEYS if kind != "calls"}
    calls: List[Any] = [[] for _ in range(CALL_GROUPS)]
    keys = sorted(state.rows)
    for key in keys:
        own = state.rows[key]
        if not lazy_calls:
            for index in range(CALL_GROUPS):
                calls[index].extend(own["calls"][index])
        for kind in PER_FILE_KINDS:
            links[kind].extend(own[kind])
    if lazy_calls:
        calls = [_group_rows(state.rows, keys, index) for index in range(CALL_GROUPS)]
    for kind in WHOLE_KINDS:
        links[kind] = list(state.whole.get(kind, []))
    links["calls"] = calls
    return links


def _group_rows(rows: Dict[str, Dict[str, Any]], keys: List[str], index: int) -> Iterator[Dict[str, Any]]:
    """One call group's rows, file by file (the state's rows only: the rest of the state can go meanwhile)."""
    return itertools.chain.from_iterable(rows[key]["calls"][index] for key in keys)


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
    lang = data.get("lang")
    if lang in JS_IMPORT_LANGS:
        return []
    rows = [row for row in (module_metadata_row(imp, lang) for imp in data.get("imports", [])) if row is not None]
    return cgc.sort_import_rows_for_metadata(rows)


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
