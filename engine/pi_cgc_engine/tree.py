"""The tree on disk as cgc sees it: discovery, parsing, the imports map, a whole resolution."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set, Tuple

from . import cgc_contract as cgc
from .cgc_contract import parse_only_builder
from .context import RUN
from .files import FileEntry, canonical_order, ext_of, file_ext, merge_order_of
from .graph_profiles import Profile
from .graph_rows import write_fails
from .recording import ImportsMap, imports_owed, settle_imports, settled_imports
from .walk import KeptWalk

if TYPE_CHECKING:
    from .tree_state import TreeState


class Tree:
    def __init__(self, root: Path, cgcignore_path: Optional[str]):
        self.root = root
        self.root_str = root.as_posix()
        self.cgcignore_path = cgcignore_path
        self.builder = parse_only_builder()
        self.kept_walk = KeptWalk()
        self.walk_check: List[str] = []  # with serve --check: where a kept walk differed from cgc's
        # The backend's replay profile: a parse whose write that backend fails is marked as cgc's index marks it.
        self.write_profile: Optional[Profile] = None

    def discover(self) -> List[Path]:
        """cgc's discover_files_to_index, run again only where the tree changed (see "The kept walk")."""
        extensions = set(self.builder.parsers)
        if RUN.options.whole_walk:
            self.kept_walk.delta = None
            return cgc.discover_files_to_index(self.root, self.cgcignore_path, supported_extensions=extensions)[0]
        with RUN.keeping_walk(self.kept_walk):
            try:
                found, _ = cgc.discover_files_to_index(self.root, self.cgcignore_path, supported_extensions=extensions)
                files = self.kept_walk.finish(found)
            except BaseException:
                self.kept_walk.close()
                self.kept_walk = KeptWalk()  # a walk cut short keeps nothing
                raise
        if RUN.options.check:
            whole = cgc.discover_files_to_index(self.root, self.cgcignore_path, supported_extensions=extensions)[0]
            if [f.as_posix() for f in whole] != [f.as_posix() for f in files]:
                self.walk_check.append(f"the kept walk found {len(files)} files where cgc's finds {len(whole)}: "
                                       f"{sorted(set(map(str, files)) ^ set(map(str, whole)))[:5]}")
        return files

    def parse(self, path: Path, known: Tuple[int, int, str]) -> FileEntry:
        # The parse store first (parse_store.py): the same content at the same place was parsed before.
        store = RUN.parse_store
        slot = store.slot(self, path, known) if store is not None else None
        if slot is not None:
            assert store is not None
            kept = store.get(slot)
            if kept is not None:
                return FileEntry(known[0], known[1], known[2], *kept)
        entry = self.parse_now(path, known)
        # Never what a parse again may give more of: a failed parse is tried again.
        if slot is not None and not self.parse_in_doubt(path.as_posix(), entry) and (
                "error" not in entry.data or entry.data.get("write_failed")):
            assert store is not None
            store.put(slot, entry.data, entry.imports, path, known)
        return entry

    def parse_now(self, path: Path, known: Tuple[int, int, str]) -> FileEntry:
        # The pipeline parses with repo_path = the resolved root; a pre-scan of one file is that
        # file's share of the imports map.
        data = canonical_order(self.builder.parse_file(self.root, path, False))
        if self.write_profile is not None and "error" not in data:
            # cgc's pipeline marks a file whose write failed as an error after writing it, so that its resolution
            # leaves the file out; here before the resolution, for the same graph (graph_rows.write_fails).
            failure = write_fails(data, self.write_profile, cgc.normalize_path(self.root), cgc.normalize_path)
            if failure is not None:
                data["error"] = f"cgc's write of this file fails on {self.write_profile.name}: {failure}"
                data["write_failed"] = True
        imports = cgc.pre_scan_for_imports([path], self.builder.parsers.keys(), self.builder.get_parser)
        if not RUN.options.parse_order_as_parsed:
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
        merge_imports_kept, whose rebuild loop has the same shape: serve --check compares the kept
        map with this one, which must not share its code."""
        groups: Dict[str, List[str]] = {}
        for path in sorted(files):
            groups.setdefault(file_ext(Path(path)), []).append(path)
        merged: Dict[str, List[str]] = ImportsMap()
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
            or len(prev.import_groups) == 1 and bool(files) and all(ext_of(path) == prev.import_groups[0] for path in changed)
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
            merged: Dict[str, List[str]] = ImportsMap()
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
        journal = RUN.journal
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
            paths.sort(key=lambda p: (rank[ext_of(p)], p))
            if journal is not None:
                journal.set(kept_owners, name, tuple(paths))
            else:
                kept_owners[name] = tuple(paths)
            items: List[str] = []
            had: Set[str] = set()
            for path in paths:
                for item in files[path].imports[name]:
                    if item not in had:
                        had.add(item)
                        items.append(item)
            values[name] = items
        # The last map with the touched names set again or removed has the right names and paths; a new name
        # is at its end, so when the order may have changed it is owed, and settled (settle_imports) only
        # where something can see it (as the kept indices' order: the indices lent to cgc, the views).
        was_owed = imports_owed(prev.imports_map)
        if journal is not None and type(prev.imports_map) is ImportsMap:
            merged = prev.imports_map
            for name, paths in values.items():
                journal.set(merged, name, paths)
            for name in touched:
                if name not in values:
                    journal.delete(merged, name)
            journal.on_undo(merged, lambda moved: setattr(merged, "owed", was_owed or moved))
        else:
            merged = ImportsMap(prev.imports_map)
            dict.update(merged, values)
            removed = [name for name in touched if name not in values and dict.__contains__(merged, name)]
            for name in removed:
                dict.__delitem__(merged, name)
            if removed:
                merged = ImportsMap(dict.copy(merged))  # without the holes (see Keeper.merge)
        merged.owed = reordered or was_owed
        if RUN.options.order_at_once:
            settle_imports(merged, files)
        return merged, kept_owners, groups

    @staticmethod
    def parsed(files: Dict[str, FileEntry]) -> List[Dict[str, Any]]:
        return [files[p].data for p in sorted(files) if "error" not in files[p].data]

    def resolve(self, files: Dict[str, FileEntry], imports_map: Dict[str, List[str]]) -> Dict[str, Any]:
        """Every link row a full index would write, in the pipeline's order."""
        data = self.parsed(files)
        imports_map = settled_imports(imports_map, files)
        inherits, _csharp = cgc.inh.build_inheritance_and_csharp_files(data, imports_map)
        implements = cgc.inh.build_go_implements_links(data)
        implements.extend(cgc.inh.build_haskell_implements_links(data))
        implements.extend(cgc.inh.build_elixir_implements_links(data))
        return {
            "inherits": inherits,
            "implements": implements,
            "embeds": cgc.inh.build_embeds_links(data),
            "companion": cgc.inh.build_companion_of_links(data),
            "partial": cgc.inh.build_partial_of_links(data),
            "part_of": cgc.inh.build_part_of_links(data),
            "metaclass": cgc.inh.build_metaclass_links(data, imports_map),
            "decorated": cgc.inh.build_decorated_by_links(data, imports_map),
            "binds": cgc.inh.build_binds_links(data, imports_map),
            "previews": cgc.inh.build_previews_links(data, imports_map),
            "calls": list(cgc.build_function_call_groups(data, imports_map, None)),
        }
