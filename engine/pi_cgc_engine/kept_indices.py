"""Kept indices: cgc's tree-wide indices patched per file instead of built from every file."""

from __future__ import annotations

import bisect
import itertools
import operator
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Set,
    Tuple,
)

from . import cgc_contract as cgc
from .cgc_contract import CALL_INDEXES
from .context import RUN, NarrowingFailed
from .journal import MISSING, Journal, as_before, before_reorder
from .narrowing import CandidateIndex, SortedMembers, same_but_unread
from .recording import KeptDict, Parsed, entries_at, refill_after

if TYPE_CHECKING:
    from .tree_state import TreeState


# ---------------------------------------------------------------------------------------------
# Kept indices: cgc's tree-wide indices patched per file instead of built from every file.
#
# cgc's build_function_call_groups builds its indices in loops over `all_file_data` (the engine's list, a
# cgc_contract.FileList): file_symbol_labels, then type_aliases, then (one loop) class_index, global_class_bases,
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
# is settled when something does: cgc, through the recording dicts it is given (OwedOrderDict: iterating one
# settles the kept index, and a copy of it), or the engine (interface_implementors, the check); the diff takes
# an owed order as changed. A file that came or went counts only by its keys (none in an index: no
# change). interface_implementors is cgc's own loop over global_class_bases, run again only when that
# changed; _functions_by_name is function_index's entries by name, kept like the others.
# A file's contribution depends on its own data, on type_aliases (canonical_type_for_maps) and on which
# names the imports map has (`in imports_map`, recorded per file while cgc builds its share): every file is
# taken again when type_aliases changed, and a file that asked about a name the change added to or removed
# from the map is taken again. Not kept (cgc builds everything from every file, as before): a tree with a
# Kotlin file (its member-type pass and has_kotlin read every file), the first resolution of a state
# (there is nothing kept yet: every file is taken, and its contribution kept), serve --full-indices
# (for comparisons), and any fault of the hooks. The callback pre-pass loop (a call x every same-named
# function) sees only the files that have a call named like a function of a file being resolved that
# passes a bare name (the others add nothing a resolved file reads; see function_calls). The diff the
# narrowing takes (decide) looks only at the keys the taken files touched. serve --check also
# builds cgc's indices from every file after each kept build and refuses the update unless every one is
# equal, values and key order.
# The imports map is kept the same way (Tree.merge_imports_kept: a name's paths merged again only when a
# changed file has the name), and so are cgc's per-language views of it (a view is the map's names, in its
# order, each with what _get_lang_imports makes of its paths: the names whose paths may differ go through
# cgc's own function, on a map of just them); their order is owed likewise (settle_imports,
# CallRun.settle_view). The check compares both, settled, with cgc's own.

# name -> how the files' contributions combine: "file" (keys of the file's own), "last" (the last file's
# value), "concat" (lists, in file order), "union" (sets).
KEPT_INDEXES: Dict[str, str] = {
    "file_symbol_labels": "file", "type_aliases": "last", "class_index": "file", "function_index": "file",
    "global_class_bases": "last", "global_variable_types": "last", "class_method_names": "union",
    "class_method_index": "concat", "extension_method_index": "concat", "_functions_by_name": "concat",
}
# Kept in cgc's key order at every update: the engine compares type_aliases' order (every file is taken
# again when it changed); it is small. The others' order may be owed (see Keeper.settle), unless
# serve --order-at-once (for comparisons).
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
    strip = cgc.strip_type_modifiers

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


class Keeper:
    """The kept indices of one run: which files each loop takes, their contributions, the full indices."""

    def __init__(self, prev: Optional["TreeState"], data: List["Parsed"], keys: List[str], changed: Set[str],
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
            if RUN.options.check and (base != {key for key in changed if key in present} | (set(keys) - contributed)
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

    def files_for(self, role: str) -> List["Parsed"]:
        taken = self.taken[role]
        if len(taken) == len(self.data):
            return list.copy(self.data)  # every file (taken holds only keys of the list)
        return [fd for _, fd in entries_at(self.data, taken)]

    def take(self, role: str, files: List["Parsed"], frame: cgc.CallGroupsFrame) -> Iterator["Parsed"]:
        """The loop of `role` over the taken files; what cgc adds for each is that file's contribution."""
        names = LOOP_DICTS[role]
        dicts = [frame.get(name) for name in names]
        if any(type(d) is not dict or d for d in dicts):
            raise NarrowingFailed(f"cgc's {role} indices are not the empty dicts the kept indices expect")
        for fd in files:
            tests: Set[Any] = set()
            with RUN.asking(tests if role == "index" else None):
                yield fd
            own = self.contrib.setdefault(fd.key, {}).setdefault(role, {})
            for name, built in zip(names, dicts):
                if built:
                    own[name] = dict(built)
                    built.clear()
            if role == "index":
                own["tests"] = frozenset(tests)  # type: ignore[assignment]
                if "function_index" in own:
                    own["_functions_by_name"] = _names_of_functions(own["function_index"])
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
                    and all(as_before(old_gcb).get(k, MISSING) == dict.get(gcb, k, MISSING)
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
        """The kept index `name` after this run: the last one with the keys the taken and gone files touched set
        again (its key order owed where it may have moved), or built from every file's contribution."""
        kind = KEPT_INDEXES[name]
        loop_taken = self.taken[ROLE_OF[name]]
        prev_full = self.prev_full.get(name)
        if prev_full is None:
            self._merge_all(name, kind)
            return
        changed_files = sorted(loop_taken) + sorted(self.gone)  # the taken files are among the keys, in path order
        touched, reordered = self._touched_keys(name, kind, changed_files)
        # Under a journal the last state's dicts are changed in place (see Journal), else copied.
        journal = RUN.journal if name not in ALWAYS_ORDERED else None
        contributors_new: Dict[Any, Tuple[str, ...]] = {}
        owners_before: Dict[Any, Tuple[str, ...]] = {}  # the touched keys' contributors before (set in place below)
        if kind != "file":
            self.contributors[name] = self._merge_contributors(name, changed_files, touched, journal, contributors_new,
                                                               owners_before)
        else:
            self.contributors[name] = {}
        values = self._touched_values(name, kind, prev_full, changed_files, touched, contributors_new, owners_before)
        if not reordered or name not in ALWAYS_ORDERED and not RUN.options.order_at_once:
            full = self._patched(name, prev_full, touched, values, journal)
            if reordered:
                self.owed.add(name)
        else:
            full = self._rebuilt_in_order(name, kind, prev_full, touched, values)
        self.full[name] = full
        self.touched[name] = touched
        self.reordered[name] = reordered

    def _merge_all(self, name: str, kind: str) -> None:
        """Nothing kept: built from every file's contribution (every file was taken)."""
        full: Dict[Any, Any] = KeptDict()
        owners_of: Dict[Any, List[str]] = {}
        for key in self.keys:
            part = self.part_of(key, name)
            if not part:
                continue
            if kind == "last" or kind == "file":
                full.update(part)
            if kind != "file":
                for item in part:
                    owners_of.setdefault(item, []).append(key)
        if kind in ("concat", "union"):
            for item, owners in owners_of.items():
                full[item] = self._combine(kind, name, item, owners)
        self.full[name] = full
        self.contributors[name] = {k: tuple(v) for k, v in owners_of.items()} if kind != "file" else {}
        self.touched[name] = set(full)
        self.reordered[name] = True
        self.owed.discard(name)

    def _touched_keys(self, name: str, kind: str, changed_files: List[str]) -> Tuple[Set[Any], bool]:
        """The keys of `name` the changed files had or have, and whether the index's key order may have moved."""
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
        return touched, reordered

    def _merge_contributors(self, name: str, changed_files: List[str], touched: Set[Any], journal: Optional[Journal],
                            contributors_new: Dict[Any, Tuple[str, ...]],
                            owners_before: Dict[Any, Tuple[str, ...]]) -> Dict[Any, Tuple[str, ...]]:
        """Each touched key's contributors (the files whose share has it, in path order) after this run, noted in
        `contributors_new` (and those before in `owners_before`); returns the contributors of every key."""
        prev_contributors = self.prev_contributors.get(name, {})
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
            if RUN.options.check and owners != sorted([k for k in before if k not in changed_set] + [
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
        return contributors

    def _touched_values(self, name: str, kind: str, prev_full: Dict[Any, Any], changed_files: List[str],
                        touched: Set[Any], contributors_new: Dict[Any, Tuple[str, ...]],
                        owners_before: Dict[Any, Tuple[str, ...]]) -> Dict[Any, Any]:
        """The touched keys' values after this run (a key no file has any more is left out)."""
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
        return values

    def _patched(self, name: str, prev_full: Dict[Any, Any], touched: Set[Any], values: Dict[Any, Any],
                 journal: Optional[Journal]) -> Dict[Any, Any]:
        """The last index with the touched keys set again or removed."""
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

            def owe(moved: bool) -> None:
                if moved and prev is not None:
                    prev.order_owed = prev.order_owed | {name}

            journal.on_undo(full, owe)
            return full
        full = KeptDict(prev_full) if touched or type(prev_full) is not KeptDict else prev_full
        full.update(values)
        removed = [item for item in touched if item not in values and item in full]
        for item in removed:
            del full[item]
        if removed:
            # Without the holes deletions leave: a dict with holes is copied key by key (every later
            # update's copy), a dict without them as one block.
            full = KeptDict(full)
        return full

    def _rebuilt_in_order(self, name: str, kind: str, prev_full: Dict[Any, Any], touched: Set[Any],
                          values: Dict[Any, Any]) -> Dict[Any, Any]:
        """The index in cgc's key order: first insertion, file after file (dict.update keeps a key where it is),
        with the last file's value; a key of several files in a list or set index then gets its value."""
        full = KeptDict()
        for own in self._owns(ROLE_OF[name]):
            share = own.get(name)
            if share:
                full.update(share)
        if kind in ("concat", "union"):
            rest = prev_full.copy()
            for item in touched:
                rest.pop(item, None)
            full.update(rest)
            full.update(values)
        return full

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
        for where, _owner, length, new_part in events:
            if where < done:
                return None
            joined.extend(last[done:where])
            if new_part:
                joined.extend(new_part)
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
    indices built by cgc from every file (serve --check)."""

    def __init__(self, data: List[Any]):
        self.data = data
        self.indices: Dict[str, Any] = {}
        self.in_prepass = False

    def iterate(self, frame: cgc.CallGroupsFrame) -> Iterator[Any]:
        if frame.role == "prepass":
            self.indices = {name: frame.get(name) for name in (*CALL_INDEXES, "_functions_by_name")}
            raise _Captured()
        return list.__iter__(self.data)

    def function_calls(self, fd: Any, default: Any) -> Any:
        return dict.get(fd, "function_calls", default)

    def loop(self, frame: cgc.CallGroupsFrame, start: int) -> Iterator[Tuple[int, Any]]:
        self.indices = {name: frame.get(name) for name in (*CALL_INDEXES, "_functions_by_name")}
        raise _Captured()


def compare_kept_indices(kept: Dict[str, Dict[Any, Any]], data: List[Dict[str, Any]], imports_map: Dict[str, List[str]]) -> List[str]:
    """Each kept index against the one cgc builds from every file: values and key order."""
    files = cgc.FileList()
    for fd in data:
        parsed = Parsed(fd)
        files.append(parsed)
    capture = _IndexCapture(files)
    with RUN.resolving(capture):
        try:
            cgc.build_function_call_groups(files, imports_map, None)
        except _Captured:
            pass
    differences: List[str] = []
    for name, theirs in capture.indices.items():
        mine = kept.get(name)
        if theirs is None or mine is None:
            differences.append(f"index {name}: missing on one side")
            continue
        # The kept entries are lean (files.make_lean): the fields nothing reads are not compared.
        keys = [k for k in set(mine) | set(theirs)
                if mine.get(k, MISSING) != theirs.get(k, MISSING)
                and not same_but_unread(mine.get(k, MISSING), theirs.get(k, MISSING))]
        if keys:
            differences.append(f"index {name}: {len(keys)} keys differ, e.g. {sorted(map(str, keys))[:3]}")
        elif list(mine) != list(theirs):
            differences.append(f"index {name}: same items in another key order")
    if not capture.indices:
        differences.append("the check run did not reach cgc's callback pre-pass")
    return differences
