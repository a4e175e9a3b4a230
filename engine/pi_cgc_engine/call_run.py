"""One narrowed run of cgc's build_function_call_groups."""

from __future__ import annotations

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
from .call_rows import CallRows
from .callback_prepass import callback_arg_targets
from .cgc_contract import CALL_INDEXES, CallGroupsFrame, lend
from .context import RUN, NarrowingFailed
from .files import FileEntry
from .journal import before_reorder
from .kept_indices import LOOP_DICTS, Keeper
from .narrowing import IDENTIFIER, CandidateIndex, call_names, call_positions
from .protocol import DebugClock
from .recording import (
    CallbackRecordingDict,
    FunctionsByName,
    KeptDict,
    LendableDict,
    Parsed,
    RecordingDict,
    entries_at,
    imports_owed,
    settle_imports,
    settled_imports,
)

if TYPE_CHECKING:
    from .tree_state import TreeState


def names_of_calls(calls: Iterable[Dict[str, Any]]) -> Iterable[Any]:
    """The names of a file's parsed calls (a lean file keeps them compact: its column, without a dict a row)."""
    return calls.column("name") if isinstance(calls, CallRows) else [call.get("name") for call in calls]


class CallRun:
    """One call of cgc's build_function_call_groups that resolves only the files `decide` picks."""

    def __init__(self, data: List[Parsed], decide: Callable[[Dict[str, Any]], Set[str]]):
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
        # The (file, function name) pairs whose callback entries cgc's loop can read: see capture.
        self.callback_readers: Set[Tuple[str, Any]] = set()
        self.in_prepass = False
        self.in_parameters = False
        self.reuse_views: Dict[str, Dict[str, List[str]]] = {}
        self.views: Dict[str, Dict[str, List[str]]] = {}
        # The last resolution's views and the imports map's names whose paths may differ since (the views
        # are patched: see loop), and with serve --check where a patched view differs from cgc's.
        self.patch_views: Optional[Tuple[Dict[str, Dict[str, List[str]]], Set[str]]] = None
        self.view_check: List[str] = []
        # The views whose order is owed (as the imports map's: see Tree.merge_imports_kept): those of the last
        # resolution given again, and those patched when the map's order may have changed or a name came.
        self.views_owed: Set[str] = set()
        self.imports_map: Dict[str, List[str]] = {}
        self.imports_reordered = True
        # The kept indices of this run (None: cgc builds them from every file), and the files by the names
        # of their calls passing a bare name (None: the callback pre-pass sees every file).
        self.keeper: Optional[Keeper] = None
        self.callers: Optional[CandidateIndex] = None
        self.files: Dict[str, FileEntry] = {}
        self.debug: Optional[DebugClock] = None
        self.lent: List[Tuple[Any, type]] = []  # the indices lent to cgc in place (give_back after the run)
        self.prev: Optional["TreeState"] = None  # the last state (an undone update may leave its views owed)

    def owe_view_on_undo(self, lang: str) -> Callable[[bool], None]:
        """What an undone update whose journal moved this view's key order leaves: the view's order owed."""
        prev = self.prev

        def owe(moved: bool) -> None:
            if moved and prev is not None:
                prev.views_owed = prev.views_owed | {lang}

        return owe

    def iterate(self, frame: CallGroupsFrame) -> Iterator[Any]:
        """A loop of cgc's over the engine's list (see "Kept indices")."""
        role = frame.role
        keeper = self.keeper
        if role in LOOP_DICTS and keeper is not None:
            return keeper.take(role, keeper.files_for(role), frame)  # type: ignore[arg-type]
        if role == "kotlin-check" and keeper is not None:
            return iter(())  # kept only for a tree without a Kotlin file: any() over it is False
        if role == "prepass":
            if self.chosen is None:
                self.capture(frame)
            if self.callers is not None:
                names, files = self.names, self.files
                # In path order, as the list: the files with a call named like one of `names` passing a bare name.
                seen: Iterable[Any] = [
                    files[key].parsed for key in sorted(self.callers.files_with(names))
                    if key in files and "error" not in files[key].data and not call_names(files[key]).isdisjoint(names)
                ]
            else:
                seen = list.__iter__(self.data)
            # The pre-pass's result, made here (compact: see callback_prepass); cgc's own loop then has nothing to do.
            frame.put({"callback_arg_targets": callback_arg_targets(seen, frame["functions_named"], cgc.resolved_posix,
                                                                    self)})
            return iter(())
        if keeper is not None:
            raise NarrowingFailed(f"a loop over every file that the kept indices do not know (line {frame.line})")
        return list.__iter__(self.data)

    def capture(self, frame: CallGroupsFrame) -> None:
        if not frame.is_call_groups:
            raise NarrowingFailed("the hook was not called from build_function_call_groups")
        keeper = self.keeper
        if keeper is not None:
            # The full indices go where cgc's (built from the taken files, then emptied) were.
            full: Dict[str, Any] = {}
            for name in (*LOOP_DICTS["labels"], *LOOP_DICTS["index"], "interface_implementors"):
                if type(frame.get(name)) is not dict or frame[name]:
                    raise NarrowingFailed(f"cgc's {name} is not the empty dict the kept indices left")
                full[name] = keeper.full[name]
            full["_functions_by_name"] = keeper.full["_functions_by_name"]
            frame.put(full)
        loc = frame
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
        # The parameter lists of the chosen files' functions, as the pre-pass reads them from the index entries
        # (shallow copies of the parsed functions: the same list objects). And the callback readers: cgc's loop
        # reads a callback entry (file, function, parameter) only for a call, in that file, of a parameter of the
        # function the call is in, so the pre-pass makes entries only for the (file, name) of a chosen file's
        # function with a parameter the file calls (callback_prepass; at 5 000 files the other entries were
        # 9.5 million runs, about 20 s).
        chosen_paths = set()
        for _, fd in chosen_data:
            path = cgc.resolved_posix(dict.__getitem__(fd, "path"))
            chosen_paths.add(path)
            called: Optional[Set[Any]] = None
            for fn in dict.get(fd, "functions") or []:
                params = fn.get("args") or fn.get("parameters")
                if params:
                    self.param_lists.add(id(params))
                    if called is None:
                        called = set(names_of_calls(dict.get(fd, "function_calls") or []))
                    if any(type(param) is str and param in called for param in params):
                        self.callback_readers.add((path, fn.get("name")))
        if type(functions_by_name) is KeptDict:
            # The kept index becomes the narrowed one in place until give_back (a copy: 5-10 ms at 5 000 files).
            narrowed: LendableDict = functions_by_name
            cgc.swap_class(narrowed, FunctionsByName)
            self.lent.append((narrowed, KeptDict))
            settle = keeper.settle_of("_functions_by_name") if keeper is not None else None
            narrowed.settle = (lambda _narrowed: settle()) if settle is not None else None  # type: ignore[misc]
        else:
            narrowed = FunctionsByName(functions_by_name)
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
        if keeper is None or RUN.options.check:
            filtered = {name: [pair for pair in dict.get(functions_by_name, name, []) if pair[0] in chosen_paths]
                        for name in self.names}
            if narrowed.chosen_only is not None and narrowed.chosen_only != filtered:
                raise NarrowingFailed("the chosen files' shares of _functions_by_name are not its entries of theirs")
            narrowed.chosen_only = filtered
        frame.put({"_functions_by_name": narrowed})
        if keeper is not None:
            frame.expect({name: self.indices[name] for name in CALL_INDEXES})
        if self.debug is not None:
            self.debug.lap("capture")
        self.in_prepass = True

    def parameters(self, params: Any, start: int) -> Iterator[Tuple[int, Any]]:
        self.in_parameters = True
        try:
            yield from enumerate(params, start)
        finally:
            self.in_parameters = False

    def function_calls(self, fd: Parsed, default: Any) -> Any:
        calls = dict.get(fd, "function_calls", default)
        if self.swapped:
            return calls  # the loop: only the chosen files get here, and see all their calls
        if self.chosen is None:
            frame = cgc.caller_frame(2)
            if "_functions_by_name" not in frame:
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

    def loop(self, frame: CallGroupsFrame, start: int) -> Iterator[Tuple[int, Any]]:
        if self.chosen is None:
            self.capture(frame)
        self.in_prepass = False
        if self.debug is not None:
            self.debug.lap("pre-pass")
        loc = frame
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
                fresh = cgc.lang_view_of(make, lang, sub)
                came = gone = False
                journal = RUN.journal
                if journal is not None and type(old) is KeptDict:
                    view = old  # in place (see Journal)
                    for name in touched:
                        if name in fresh:
                            came = came or not dict.__contains__(view, name)
                            journal.set(view, name, fresh[name])
                        elif dict.__contains__(view, name):
                            journal.delete(view, name)
                    journal.on_undo(view, self.owe_view_on_undo(lang))
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
                        view = KeptDict(view)  # without the holes (see Keeper.merge)
                if came or self.imports_reordered:
                    self.views_owed.add(lang)
                cache[lang] = view
                if RUN.options.order_at_once:
                    self.views[lang] = view
                    self.settle_view(lang)
                if RUN.options.check:
                    whole = cgc.lang_view_of(make, lang, settled_imports(imports_map, self.files))
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
        frame.put(swapped)
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
        for at, fd in self.chosen_data():
            # cgc finds each call's enclosing function by reading every one of the file's functions, and a lean
            # file's are kept compact (a dict made at each read): over a whole file that took 2.4× the time of the
            # same resolution on the parse's dicts. Read as dicts while cgc is in the file, compact again after.
            functions = dict.get(fd, "functions")
            compact = isinstance(functions, CallRows)
            if isinstance(functions, CallRows):
                dict.__setitem__(fd, "functions", list(functions))
            try:
                with RUN.recording(self.deps.setdefault(fd.key, set())):
                    yield start + at, fd
            finally:
                if compact:
                    dict.__setitem__(fd, "functions", functions)

    def chosen_data(self) -> List[Tuple[int, "Parsed"]]:
        return entries_at(self.data, self.chosen or ())
