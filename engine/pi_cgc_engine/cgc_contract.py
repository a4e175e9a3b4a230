"""Everything in pi-cgc's engine that reaches into cgc's code, and the contract it holds cgc to.

The engine runs inside cgc's own interpreter and uses cgc's library. Most of what it uses is public (the parser,
discovery, resolution builders, the writer, the database manager). This module holds the rest: every name that
starts with an underscore in cgc, every monkey-patch of a cgc module, every read or write of a running cgc frame,
every parse of cgc's source, and every swap of an object's class while cgc holds it. No other module of the
engine imports codegraphcontext (engine/tests/test_contract.py fails otherwise).

The contract, checked by `load` before the engine serves (a failed check is a refusal, as an unproven cgc
version is: pi-cgc then falls back to full rebuilds and says so once):

- the version is one the engine was proven on (PROVEN_VERSIONS: the parity harness ran on it);
- these modules import, with these names: core.jobs.JobManager, tools.graph_builder.GraphBuilder (its
  parse_file, parsers, get_parser and create_schema), tools.indexing.discovery (discover_files_to_index,
  build_ignore_spec, safe_walk, and `os` as a module global), tools.indexing.pre_scan.pre_scan_for_imports,
  tools.indexing.persistence.writer (GraphWriter and its _purge_dangling_pathless_nodes, _normalize_path,
  _is_binder_exception),
  tools.indexing.resolution.inheritance (the build_* functions and _build_node_label_index),
  tools.indexing.resolution.calls (build_function_call_groups, _resolved_posix, strip_type_modifiers, and
  `enumerate` looked up as a module global), utils.tree_sitter_manager._execute_query_locked,
  cli.config_manager.resolve_context, core.get_database_manager;
- build_function_call_groups has the shape the narrowing was written for: seven loops over `all_file_data`
  that build, in turn, file_symbol_labels, type_aliases, the class and function indices, the Kotlin member
  types (two) and the callback pre-pass, plus one comprehension over it (the Kotlin check) (find_loop_roles);
  the local names in CALL_INDEXES, _functions_by_name, callback_arg_targets, imports_map, skip_external,
  _lang_imports_cache, _get_lang_imports and functions_named; _get_lang_imports a closure over imports_map and
  _lang_imports_cache; and the callback pre-pass the loop the engine runs in its place (PREPASS_SHA256);
- a running frame's locals can be set from a hook (PyFrame_LocalsToFast up to Python 3.12, the write-through
  f_locals proxy from 3.13): checked on a frame of this module's own;
- on KùzuDB, cgc's manager keeps its connections in `_pool` (a queue), its database in `_db` and its write lock
  in `_write_lock`, and core.database_embedded_kuzu.EmbeddedDriverWrapper wraps a queue of connections
  (checked when a write transaction first runs);
- on FalkorDB Lite, core.database_falkordb.FalkorDBManager.get_driver returns the driver the writer uses.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import sys
import types
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from .context import RUN, NarrowingFailed
from .recording import RecordingDict, _LendableDict, _OwedOrderDict, refill_after

PROVEN_VERSIONS = {"0.6.13"}
# The indices the loop body of build_function_call_groups reads (the frame's local names).
CALL_INDEXES = (
    "file_symbol_labels", "type_aliases", "member_return_types", "member_return_types_full",
    "member_property_types", "global_class_bases", "class_method_names", "function_index", "class_index",
    "class_method_index", "extension_method_index", "global_variable_types", "interface_implementors",
)
# Other locals of build_function_call_groups the narrowing reads or sets.
CALL_LOCALS = ("_functions_by_name", "functions_named", "callback_arg_targets", "imports_map", "skip_external",
               "_lang_imports_cache", "_get_lang_imports")
# The callback pre-pass loop the engine runs in cgc's place (callback_prepass), in cgc 0.6.13: the sha256 of the
# loop as ast.unparse writes it (no comments, no layout), which Python 3.10 writes otherwise than 3.11-3.13.
PREPASS_SHA256 = frozenset({
    "c63a80ac8ef4d4598ee43d11b2b5527a78cc19b6eada15ddb1b5a9bc5e65bc7a",  # Python 3.11-3.13
    "e927c4c3507050f2648be35bd6cb0c0e3c96e64979853f38a6f00ee346c86bb0",  # Python 3.10
})
# The loops over all_file_data that find_loop_roles must find (their roles, sorted).
EXPECTED_LOOPS = ["aliases", "index", "kotlin-check", "labels", "member", "member", "prepass"]


class ContractBroken(Exception):
    """The installed cgc is not what this module was written against."""


# cgc's library as the engine uses it: set by load.
GraphBuilder: Any = None
GraphWriter: Any = None
JobManager: Any = None
discover_files_to_index: Any = None
pre_scan_for_imports: Any = None
build_function_call_groups: Any = None
inh: Any = None  # tools.indexing.resolution.inheritance: its public build_* functions
strip_type_modifiers: Any = None
sort_import_rows_for_metadata: Any = None  # the writer's order of a file's Module rows
resolve_context: Any = None
get_database_manager: Any = None
_calls: Any = None
_writer: Any = None
_node_label_index: Any = None


def cgc_version() -> str:
    from importlib.metadata import version

    return version("codegraphcontext")


def load() -> str:
    """Checks the contract and installs the engine's hooks; returns cgc's version. Raises ContractBroken."""
    global GraphBuilder, GraphWriter, JobManager, discover_files_to_index, pre_scan_for_imports
    global build_function_call_groups, inh, strip_type_modifiers, resolve_context, get_database_manager
    global sort_import_rows_for_metadata
    global _calls, _writer, _node_label_index
    try:
        found = cgc_version()
    except Exception as error:  # noqa: BLE001 - any failure to find cgc is a refusal
        raise ContractBroken(f"codegraphcontext is not importable here: {error}") from None
    if found not in PROVEN_VERSIONS:
        raise ContractBroken(f"cgc {found} is not a version the engine was proven on ({', '.join(sorted(PROVEN_VERSIONS))})")
    try:
        from codegraphcontext.cli.config_manager import resolve_context as resolve
        from codegraphcontext.core import get_database_manager as manager_of
        from codegraphcontext.core.jobs import JobManager as jobs
        from codegraphcontext.tools.graph_builder import GraphBuilder as builder
        from codegraphcontext.tools.indexing import discovery
        from codegraphcontext.tools.indexing.persistence import writer
        from codegraphcontext.tools.indexing.pre_scan import (
            pre_scan_for_imports as pre_scan,
        )
        from codegraphcontext.tools.indexing.resolution import calls, inheritance
        from codegraphcontext.utils import tree_sitter_manager as queries

        needed = [(writer, "GraphWriter"), (writer, "_normalize_path"), (writer, "_is_binder_exception"),
                  (writer, "sort_import_rows_for_metadata"),
                  (calls, "build_function_call_groups"), (calls, "_resolved_posix"), (calls, "strip_type_modifiers"),
                  (inheritance, "_build_node_label_index"), (inheritance, "build_inheritance_and_csharp_files"),
                  (discovery, "discover_files_to_index"), (discovery, "build_ignore_spec"), (discovery, "safe_walk"),
                  (queries, "_execute_query_locked")]
        missing = [f"{module.__name__}.{name}" for module, name in needed if not hasattr(module, name)]
        if missing:
            raise ContractBroken(f"cgc {found} lacks {', '.join(missing)}")
    except ContractBroken:
        raise
    except Exception as error:  # noqa: BLE001
        raise ContractBroken(f"cgc {found} does not expose the library the engine needs: {error}") from None
    GraphBuilder, GraphWriter, JobManager = builder, writer.GraphWriter, jobs
    sort_import_rows_for_metadata = writer.sort_import_rows_for_metadata
    discover_files_to_index, pre_scan_for_imports = discovery.discover_files_to_index, pre_scan
    build_function_call_groups, inh, strip_type_modifiers = calls.build_function_call_groups, inheritance, calls.strip_type_modifiers
    resolve_context, get_database_manager = resolve, manager_of
    _calls, _writer, _node_label_index = calls, writer, inheritance._build_node_label_index
    check_call_groups_shape()
    check_frame_writes()
    # The narrowed resolution's hook (see resolution): passes every call through unless a run of the engine's
    # is under way and cgc's loop enumerates the engine's own list.
    calls.enumerate = _enumerate_hook  # type: ignore[attr-defined]
    discovery.build_ignore_spec = _remembering_ignore_spec(discovery.build_ignore_spec)
    queries._execute_query_locked = _remembering_queries(queries._execute_query_locked)
    discovery.safe_walk = _kept_safe_walk(discovery.safe_walk)
    if type(getattr(discovery, "os", None)) is type(os):
        discovery.os = _DiscoveryOs()  # type: ignore[attr-defined]
    return found


def check_call_groups_shape() -> None:
    """build_function_call_groups' loops, locals and closure, as the narrowing was written for them."""
    code = build_function_call_groups.__code__
    local_names = set(code.co_varnames) | set(code.co_cellvars)
    missing = [name for name in (*CALL_INDEXES, *CALL_LOCALS) if name not in local_names]
    if missing:
        raise ContractBroken(f"build_function_call_groups has no local {', '.join(missing)}")
    maker = next((const for const in code.co_consts
                  if isinstance(const, types.CodeType) and const.co_name == "_get_lang_imports"), None)
    if maker is None or not {"imports_map", "_lang_imports_cache"} <= set(maker.co_freevars):
        raise ContractBroken("build_function_call_groups' _get_lang_imports is not a closure over its imports map")
    roles = find_loop_roles()
    if not roles:
        raise ContractBroken("build_function_call_groups' loops over all_file_data are not the ones the kept indices know")
    if prepass_digest() not in PREPASS_SHA256:
        raise ContractBroken("build_function_call_groups' callback pre-pass is not the loop the engine runs in its place")
    RUN.loop_roles.clear()
    RUN.loop_roles.update(roles)


def check_frame_writes() -> None:
    """A local set from a hook takes in the running frame (the narrowing swaps cgc's indices so)."""
    marker = object()

    def set_callers_value() -> None:
        CallGroupsFrame(sys._getframe(1)).put({"value": marker})

    def holder() -> Any:
        value = None
        set_callers_value()
        return value

    if holder() is not marker:
        raise ContractBroken(f"a frame's locals cannot be set on Python {sys.version.split()[0]}")


# ---------------------------------------------------------------------------------------------
# cgc's private helpers, by what they do.


def resolved_posix(path: Any) -> str:
    """calls._resolved_posix: the path as cgc's call resolution keys files."""
    return _calls._resolved_posix(path)


def normalize_path(path: Any) -> str:
    """writer._normalize_path: the path as cgc's writer stores it."""
    return _writer._normalize_path(path)


def is_binder_exception(error: BaseException) -> bool:
    """writer._is_binder_exception: a query about a label or property this backend never made."""
    return _writer._is_binder_exception(error)


def node_label_index_of(data: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """inheritance._build_node_label_index, cgc's own, over these files."""
    return _node_label_index(data)


@contextlib.contextmanager
def node_label_index_as(index: Dict[str, Any]) -> Iterator[None]:
    """cgc's inheritance builders read this node label index instead of building one from their files."""
    inh._build_node_label_index = lambda _data: index
    try:
        yield
    finally:
        inh._build_node_label_index = _node_label_index


def without_purge_after_delete(writer: Any) -> None:
    """This GraphWriter no longer purges pathless nodes after each file it deletes (its
    _purge_dangling_pathless_nodes: a scan of every Parameter of the graph each time); the caller purges once."""
    writer._purge_dangling_pathless_nodes = lambda: None


def kuzu_transaction_driver(manager: Any, connection: Any) -> Any:
    """cgc's embedded KùzuDB driver over this one connection (an explicit transaction's), built as the manager
    builds its own from its pool."""
    from codegraphcontext.core.database_embedded_kuzu import EmbeddedDriverWrapper

    single: "queue.Queue[Any]" = queue.Queue()
    single.put(connection)
    return EmbeddedDriverWrapper(
        manager._db, single, manager._write_lock, compat_state=type(manager)._compat_state,
        display_name=manager.BACKEND_SPEC.display_name, backend_id=manager.BACKEND_SPEC.backend_id,
    )


@contextlib.contextmanager
def kuzu_connection(manager: Any) -> Iterator[Any]:
    """A connection of the KùzuDB manager's pool, given back after."""
    connection = manager._pool.get(timeout=30)
    try:
        yield connection
    finally:
        manager._pool.put(connection)


def repo_commit_hash(root: Path) -> Optional[str]:
    """utils.git_utils.get_repo_commit_hash: the commit cgc's Repository node records (None outside git)."""
    from codegraphcontext.utils.git_utils import get_repo_commit_hash

    return get_repo_commit_hash(root)


def create_graph_schema(manager: Any) -> None:
    """cgc's indexes and constraints on the manager's database (tools.indexing.schema.create_graph_schema, which
    GraphBuilder.__init__ runs before cgc's index writes anything); each statement is IF NOT EXISTS."""
    from codegraphcontext.tools.indexing.schema import create_graph_schema as create

    create(manager.get_driver(), manager)


def config_on(name: str) -> bool:
    """A cgc setting that is "true", as cgc reads it (cli.config_manager.get_config_value)."""
    from codegraphcontext.cli.config_manager import get_config_value

    return (get_config_value(name) or "false").lower() == "true"


def wrap_falkordb_drivers(wrap: Callable[[Any], Any]) -> None:
    """Every driver cgc's FalkorDB manager hands out in this process goes through `wrap`."""
    from codegraphcontext.core.database_falkordb import FalkorDBManager

    get_driver = FalkorDBManager.get_driver
    FalkorDBManager.get_driver = lambda self, *args, **kwargs: wrap(get_driver(self, *args, **kwargs))


def run_cli(argv: List[str]) -> int:
    """cgc's own command line, in this process."""
    from codegraphcontext.cli.main import app

    try:
        app(args=argv, prog_name="cgc")
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return 0


def parse_only_builder() -> Any:
    """cgc's GraphBuilder for parsing alone: no schema, no database."""

    class ParseOnlyBuilder(GraphBuilder):  # type: ignore[misc, valid-type]
        def create_schema(self, graph_name: Optional[str] = None) -> None:
            return None

    return ParseOnlyBuilder(_NoDatabase(), JobManager(), None)


class _NoDatabase:
    """Parsing needs no database: GraphBuilder asks its manager for a driver it never uses."""

    def get_driver(self, graph_name: Optional[str] = None) -> None:
        return None

    def get_backend_type(self) -> str:
        return "none"



# ---------------------------------------------------------------------------------------------
# Frames of cgc's build_function_call_groups.


class CallGroupsFrame:
    """A running frame, as the narrowing reads it and sets its locals (only build_function_call_groups' are)."""

    __slots__ = ("_frame", "_locals")

    def __init__(self, frame: Any):
        self._frame = frame
        self._locals = frame.f_locals

    @property
    def is_call_groups(self) -> bool:
        return self._frame.f_code is build_function_call_groups.__code__

    @property
    def line(self) -> int:
        return self._frame.f_lineno

    @property
    def role(self) -> Optional[str]:
        """What the loop over all_file_data at this line builds (find_loop_roles), if it is one."""
        return RUN.loop_roles.get(self._frame.f_lineno) if self.is_call_groups else None

    def get(self, name: str, default: Any = None) -> Any:
        return self._locals.get(name, default)

    def __getitem__(self, name: str) -> Any:
        return self._locals[name]

    def __contains__(self, name: str) -> bool:
        return name in self._locals

    def put(self, values: Dict[str, Any]) -> None:
        """Sets these locals in the running frame; NarrowingFailed unless every one took."""
        self._locals.update(values)
        ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(self._frame), ctypes.c_int(0))
        self.expect(values)

    def expect(self, values: Dict[str, Any]) -> None:
        """NarrowingFailed unless the frame holds these very objects."""
        after = self._frame.f_locals
        if any(after.get(name) is not value for name, value in values.items()):
            raise NarrowingFailed(f"cgc's {', '.join(values)} did not take in its running frame")


def caller_frame(depth: int) -> CallGroupsFrame:
    """The frame `depth` calls above the function that asks (1: its caller)."""
    return CallGroupsFrame(sys._getframe(depth + 1))


class FileList(list):
    """The engine's list of parsed files given to cgc: what a loop over it yields is the run's to say."""

    __slots__ = ()

    def __iter__(self) -> Iterator[Any]:
        run = RUN.call_run
        if run is not None and run.data is self:
            frame = sys._getframe(1)
            if frame.f_code is build_function_call_groups.__code__:
                return run.iterate(CallGroupsFrame(frame))
        return list.__iter__(self)


def _enumerate_hook(iterable: Any, start: int = 0) -> Any:
    """Installed as `enumerate` in cgc's calls module; only the loop over the engine's list differs."""
    run = RUN.call_run
    if run is not None:
        if iterable is run.data:
            return run.loop(CallGroupsFrame(sys._getframe(1)), start)
        if run.in_prepass:
            if id(iterable) not in run.param_lists:
                # The callback pre-pass's `enumerate(params)` over a function no chosen file defines:
                # what it would add is keyed by that function's file, which no chosen file reads.
                return iter(())
            return run.parameters(iterable, start)
    return enumerate(iterable, start)


def _call_groups_tree() -> Any:
    import ast
    import inspect
    import textwrap

    return ast.parse(textwrap.dedent(inspect.getsource(build_function_call_groups)))


def prepass_digest() -> str:
    """The sha256 of build_function_call_groups' callback pre-pass loop as ast.unparse writes it ("" if none)."""
    import ast
    import hashlib

    for node in ast.walk(_call_groups_tree()):
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Name) and node.iter.id == "all_file_data" \
                and any(isinstance(n, ast.Name) and n.id == "callback_arg_targets" for n in ast.walk(node)):
            return hashlib.sha256(ast.unparse(node).encode()).hexdigest()
    return ""


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
    return roles if sorted(roles.values()) == EXPECTED_LOOPS else {}


def lang_view_of(make: Any, lang: str, imports_map: Dict[str, List[str]]) -> Dict[str, List[str]]:
    """cgc's _get_lang_imports(lang) (a closure of build_function_call_groups) over another imports map."""
    cells = []
    for index, name in enumerate(make.__code__.co_freevars):
        if name == "imports_map":
            cells.append(types.CellType(imports_map))
        elif name == "_lang_imports_cache":
            cells.append(types.CellType({}))
        else:
            cells.append(make.__closure__[index])
    return types.FunctionType(make.__code__, make.__globals__, make.__name__, make.__defaults__, tuple(cells))(lang)



# ---------------------------------------------------------------------------------------------
# Class swaps: the engine's own dicts, lent to cgc as recording dicts in place.


def swap_class(obj: Any, cls: type) -> None:
    """`obj` becomes a `cls` in place (both share one layout: recording._LendableDict's slots)."""
    obj.__class__ = cls


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


# ---------------------------------------------------------------------------------------------
# Hooks in cgc's discovery and parser.


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


class _DiscoveryOs:
    """The `os` module as cgc's discovery module sees it: its walk goes through the kept walk under way."""

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    @staticmethod
    def walk(top: Any, topdown: bool = True, onerror: Any = None, followlinks: bool = False) -> Any:
        kept = RUN.keeping
        if kept is None or not kept.walking or not topdown or followlinks:
            return os.walk(top, topdown=topdown, onerror=onerror, followlinks=followlinks)
        return kept.walk(str(top), onerror)


def _kept_safe_walk(original: Callable[..., List[Path]]) -> Callable[..., List[Path]]:
    def safe_walk(path: Path, spec: Any = None, ignore_dirs: Any = None, ignore_root: Any = None) -> List[Path]:
        kept = RUN.keeping
        if kept is None:
            return original(path, spec, ignore_dirs, ignore_root)
        return kept.safe_walk(original, path, spec, ignore_dirs, ignore_root)

    return safe_walk
