"""The engine's model of the tree: parsed files, the imports map, resolved link rows, what each resolution read."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Optional,
    Set,
    Tuple,
)

from . import cgc_contract as cgc
from .context import NarrowingFailed
from .files import FileEntry
from .link_rows import assemble_links
from .recording import KeptDict

if TYPE_CHECKING:
    from .narrowing import CandidateIndex


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
    deps: Dict[str, Tuple[Tuple[str, Any], ...]] = field(default_factory=dict)
    # Per parsed file: cgc's node label index entry of the file (name -> labels), by normalized path.
    labels: Dict[str, Tuple[str, Dict[str, Set[str]]]] = field(default_factory=dict)
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
    # The kept indices in `indices` whose key order is owed (see Keeper.settle; not cached, as the indices),
    # and the views in `lang_views` whose order is (see CallRun.settle_view; not cached either).
    order_owed: FrozenSet[str] = frozenset()
    views_owed: FrozenSet[str] = frozenset()
    # With serve --check: where the kept indices differ from cgc's own build from every file.
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

    # What the cache does not keep: rebuilt at the engine's start from the rest.
    UNSAVED = ("indices", "label_index", "lang_views", "contrib", "contributors", "index_check", "import_owners",
               "import_groups", "candidates", "keys", "parsed_list", "kotlin")

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        for name in self.UNSAVED:
            state[name] = None
        state["row_positions"] = {}
        state["order_owed"] = state["views_owed"] = frozenset()
        return state

    def shed_unsaved(self) -> None:
        """Lets go of what the cache does not keep (the kept indices, cgc's copies of the files: a large share of
        the state), for a process that will only write this state and save it (the full index)."""
        self.__dict__.update(self.__getstate__())
        for entry in self.files.values():
            entry.parsed = None

    def __setstate__(self, state: Dict[str, Any]) -> None:
        # A cache saved by an engine before a field was added lacks it: the field's default.
        defaults = {f.name: f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default  # type: ignore[misc]
                    for f in dataclasses.fields(self)}
        self.__dict__.update({**defaults, **state})

    @property
    def links(self) -> Dict[str, Any]:
        return assemble_links(self)


# One set per distinct group of labels, shared by every name that has it (nearly all have one label: {"Class"},
# {"Variable"}; a set is 216 bytes, about 20 MB at 5 000 files). cgc only reads the node label index.
_LABEL_SETS: Dict[FrozenSet[str], Set[str]] = {}


def node_labels_of(data: Dict[str, Any]) -> Tuple[str, Dict[str, Set[str]]]:
    """cgc's node label index entry of one file: (normalized path, name -> labels)."""
    index = cgc.node_label_index_of([data])
    if len(index) != 1:
        raise NarrowingFailed(f"the node label index of {data.get('path')} has {len(index)} entries")
    path, names = next(iter(index.items()))
    for name, labels in names.items():
        names[name] = _LABEL_SETS.setdefault(frozenset(labels), labels)
    return path, names


def label_index(labels: Dict[str, Tuple[str, Dict[str, Set[str]]]], keys: Iterable[str]) -> Dict[str, Dict[str, Set[str]]]:
    index: Dict[str, Dict[str, Set[str]]] = KeptDict()
    for key in keys:
        path, entry = labels[key]
        if path in index:
            raise NarrowingFailed(f"two files resolve to {path}")
        index[path] = entry
    return index
