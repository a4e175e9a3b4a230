"""Everything in pi-cgc's engine that reaches into cgc's code, and the contract it holds cgc to.

The engine runs inside cgc's own interpreter and uses cgc's library. Most of what it uses is public (the parser,
discovery, resolution builders, the writer, the database manager). This module holds the rest: every name that
starts with an underscore in cgc, every monkey-patch of a cgc module, every read or write of a running cgc frame,
every parse of cgc's source, and every swap of an object's class while cgc holds it. No other module of the
engine, nor engine/discover.py, imports codegraphcontext (engine/tests/test_contract.py fails otherwise).

The contract, checked by `load` before the engine serves (a failed check is a refusal, as an unproven cgc
version is: pi-cgc then falls back to full rebuilds and says so once). Each refusal names what changed: the
name and what kind of change (missing, not called, a changed source, no such local, ...):

- the version is one the engine was proven on (PROVEN_VERSIONS, read from proven-cgc-versions.json beside this
  module, which the extension reads too: the parity harness ran on each);
- these modules import, with these names (NEEDED): core.jobs.JobManager, tools.graph_builder.GraphBuilder,
  tools.indexing.discovery (discover_files_to_index, build_ignore_spec, safe_walk, and `os` as a module global),
  tools.indexing.pre_scan.pre_scan_for_imports, tools.indexing.persistence.writer (GraphWriter and its
  _purge_dangling_pathless_nodes, which delete_file_from_graph calls and the engine overwrites on a writer;
  _normalize_path, _is_binder_exception, sort_import_rows_for_metadata), tools.indexing.resolution.inheritance
  (the build_* functions in INHERITANCE_BUILDERS, which resolution calls, and _build_node_label_index),
  tools.indexing.resolution.calls (build_function_call_groups, _resolved_posix, strip_type_modifiers, and
  `enumerate` looked up as a module global), utils.tree_sitter_manager._execute_query_locked,
  cli.config_manager.resolve_context, core.get_database_manager;
- build_function_call_groups has the shape the narrowing was written for: seven loops over `all_file_data`
  that build, in turn, file_symbol_labels, type_aliases, the class and function indices, the Kotlin member
  types (two) and the callback pre-pass, plus one comprehension over it (the Kotlin check) (find_loop_roles);
  every local name the narrowing reads or sets in its running frame (FRAME_NAMES: CALL_INDEXES and
  CALL_LOCALS; CallGroupsFrame refuses any other) is a local of its code; _get_lang_imports a closure over
  imports_map and _lang_imports_cache; and the callback pre-pass the loop the engine runs in its place
  (PREPASS_SHA256);
- cgc's source that the engine copies is the source it copied (COPIED_SOURCES: the sha256 of each function's
  or method's source text as inspect.getsource gives it, in cgc 0.6.13): the writer's methods and helpers, the
  KùzuDB adapter's and FalkorDB's session, the pipeline's order and the sanitising that the replay of a full
  index (graph_replay, graph_rows, graph_model, graph_profiles, graph_sanitize) and the scoped purge
  (database.PURGE_QUERIES) follow; and cgc's module constants the replay holds copies of are equal to them
  (COPIED_VALUES);
- a running frame's locals can be set from a hook (PyFrame_LocalsToFast up to Python 3.12, the write-through
  f_locals proxy from 3.13): checked on a frame of this module's own;
- on KùzuDB, cgc's manager class (core.database_embedded_kuzu.EmbeddedGraphManager) keeps its connections in
  `_pool` (a queue), its database in `_db`, its write lock in `_write_lock` and its compatibility state in
  `_compat_state` (KUZU_MANAGER_NAMES: checked on the class at load, and `_pool`'s queue on the live manager at
  its first use), and core.database_embedded_kuzu.EmbeddedDriverWrapper takes (db, pool_or_lock, write_lock,
  compat_state, display_name, backend_id);
- on FalkorDB Lite, core.database_falkordb.FalkorDBManager.get_driver returns the driver the writer uses.

engine/discover.py (the count of files before consent) holds cgc to a smaller contract, load_discovery: the
version, the names it uses (DISCOVERY_NEEDED), and core.cgcignore.find_cgcignore, which it patches, looked up as
a module global by the build_ignore_spec that calls it.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import queue
import sys
import types
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from .context import RUN, NarrowingFailed
from .recording import LendableDict, OwedOrderDict, RecordingDict, refill_after

# The cgc versions the engine was proven on: one list, which the extension reads too (src/cgc/engine-script.ts).
PROVEN_VERSIONS = frozenset(json.loads(Path(__file__).with_name("proven-cgc-versions.json").read_text(encoding="utf-8"))["versions"])
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
# Every local of build_function_call_groups' running frame the narrowing reads or sets (call_run, kept_indices):
# CallGroupsFrame reads and sets no other, and load finds each among the function's locals.
FRAME_NAMES = frozenset((*CALL_INDEXES, *CALL_LOCALS))
# The inheritance builders resolution runs over the chosen files (tools.indexing.resolution.inheritance).
INHERITANCE_BUILDERS = (
    "build_inheritance_and_csharp_files", "build_decorated_by_links", "build_metaclass_links",
    "build_go_implements_links", "build_haskell_implements_links", "build_elixir_implements_links",
    "build_embeds_links", "build_companion_of_links", "build_partial_of_links", "build_part_of_links",
    "build_binds_links", "build_previews_links",
)
_WRITER = "tools.indexing.persistence.writer"
_KUZU = "core.database_embedded_kuzu"
# The names of cgc the engine uses, as "module:attribute[.attribute]" under codegraphcontext (load checks each).
NEEDED = (
    f"{_WRITER}:GraphWriter", f"{_WRITER}:GraphWriter._purge_dangling_pathless_nodes",
    f"{_WRITER}:GraphWriter.delete_file_from_graph", f"{_WRITER}:_normalize_path",
    f"{_WRITER}:_is_binder_exception", f"{_WRITER}:sort_import_rows_for_metadata",
    "tools.indexing.resolution.calls:build_function_call_groups", "tools.indexing.resolution.calls:_resolved_posix",
    "tools.indexing.resolution.calls:strip_type_modifiers",
    "tools.indexing.resolution.inheritance:_build_node_label_index",
    *(f"tools.indexing.resolution.inheritance:{name}" for name in INHERITANCE_BUILDERS),
    "tools.indexing.discovery:discover_files_to_index", "tools.indexing.discovery:build_ignore_spec",
    "tools.indexing.discovery:safe_walk", "tools.indexing.pre_scan:pre_scan_for_imports",
    "tools.indexing.schema:create_graph_schema", "utils.tree_sitter_manager:_execute_query_locked",
    "utils.git_utils:get_repo_commit_hash", "cli.config_manager:resolve_context",
    "cli.config_manager:get_config_value", "core:get_database_manager", "core.jobs:JobManager",
    "tools.graph_builder:GraphBuilder", f"{_KUZU}:EmbeddedDriverWrapper", f"{_KUZU}:EmbeddedGraphManager",
    "core.database_falkordb:FalkorDBManager.get_driver",
)
# What cgc's KùzuDB manager keeps where the engine reads it (kuzu_connection, kuzu_transaction_driver): class
# attributes of EmbeddedGraphManager, which an open manager sets on itself.
KUZU_MANAGER_NAMES = ("_pool", "_db", "_write_lock", "_compat_state")
# EmbeddedDriverWrapper's parameters, as kuzu_transaction_driver passes them.
KUZU_DRIVER_PARAMETERS = ("db", "pool_or_lock", "write_lock", "compat_state", "display_name", "backend_id")
# cgc's source that the engine copies, by the sha256 of each function's or method's source text (inspect.getsource)
# in cgc 0.6.13: the replay of a full index (graph_replay, graph_rows, graph_model, graph_profiles, graph_sanitize)
# follows the writer's statements, the pipeline's order, the sanitising and the backends' adapters; database's
# PURGE_QUERIES are _purge_dangling_pathless_nodes' queries. A changed source is a refusal: the copy is proven
# again against it (the parity harness) and its digest written here (copied_source_digests gives them).
COPIED_SOURCES: Dict[str, str] = {
    f"{_WRITER}:sort_import_rows_for_metadata": "b2a18e62bae499a3c72deb7b7a3e71dbc52b4787b092b3d4234323ee4d105e19",
    f"{_WRITER}:_normalize_path": "c1c0c87a3fb272b3f53df085381975c6f165bdc1e9d688e7b904ee2c558deacd",
    f"{_WRITER}:_coalesce_same_key_items": "a783003338a264758d962e88dc359183128e4d1460c6da18ae646d7afa6ada6b",
    f"{_WRITER}:_assign_occurrence_indices": "19d27c225a86c39e77674eb1e87cd881afbd662b00d2b490c8c9a15bb8a9923e",
    f"{_WRITER}:_cypher_label": "7918faa97fcf9e32bc0ea3790aaae8dbb91df9000a3b54f594a8a52efa2c26bf",
    f"{_WRITER}:_called_context_clause": "84e6008ef16e4a20b0f2d807059b0c780b4401516249ba9861853e6a8fca1dc2",
    f"{_WRITER}:GraphWriter.add_repository_to_graph": "2c64a566f9187b6310224a8766d5e22cc553aaae1965c089f008086b96d75e9a",
    f"{_WRITER}:GraphWriter.add_file_to_graph": "66de014f05675d42ce3db0e8d4498767e0bb9ba67260e99dc230676b1bdcd5e6",
    f"{_WRITER}:GraphWriter.add_minimal_file_node": "7d3b54a495fe885b69675b3ca596fbd2006c8591b4abeb2d36fdae32dcb824f8",
    f"{_WRITER}:GraphWriter.write_function_call_groups": "0a607f960e1dd10c460825294bff6618dd129a41af17c0e1ebf0986c91620530",
    f"{_WRITER}:GraphWriter._create_csharp_inheritance_and_interfaces":
        "dd8e9e944b093f289a8735ce1e8deb9a171b64afdf8f6b9b24e76e082724f1f5",
    f"{_WRITER}:GraphWriter.write_inheritance_links": "cc62f437e9a4e0e4536ae370bf1bfdfa70d58e3c2466327a076df48b1d53fe1b",
    f"{_WRITER}:GraphWriter.write_implements_links": "cce12f86243712b64078e3735cadcffaf989fa14f4721a04a3cdd0962eab183f",
    f"{_WRITER}:GraphWriter.write_partial_of_links": "ef7422cf2af69912be1ada46b26c71bf6d9d54749102deac8e7182879bccf183",
    f"{_WRITER}:GraphWriter.write_part_of_links": "e78085027ef362ecbf4060e745d9bdc1aa8eec18d063b5b9cf201daad6daf829",
    f"{_WRITER}:GraphWriter.write_decorated_by_links": "4faca3bc5d20038245259c989cc9be55de18ffcaa4bd32c70321d5b2be619559",
    f"{_WRITER}:GraphWriter.write_previews_links": "31e5a40b8d5af2384c4776c7e63fa6f6cb041a315caebb7f4350dd4f3553f435",
    f"{_WRITER}:GraphWriter.write_binds_links": "af79393e154a2fc963e09ed123c44f84a635acf9915a08ea62a7088bb5bbe8b8",
    f"{_WRITER}:GraphWriter.write_metaclass_links": "02fcebbbb4b76e5ff872c961d7e2c025c93754f73533f5031c4f9aebac13a51b",
    f"{_WRITER}:GraphWriter.write_companion_of_links": "44da7c4765400c3cde80a6144fc73a831eda615468d4efb3ce06ab69775b2a28",
    f"{_WRITER}:GraphWriter.write_embeds_links": "3ddbb3f16c9ecd533a8376e571bcc93fef9494519615cc6399996d2ca55776f4",
    f"{_WRITER}:GraphWriter.write_cpp_class_function_links":
        "4f7d39fc0ce25c6b432e93c012ccdba507ddf6b297b3a7274e3afb7916ba70ef",
    f"{_WRITER}:GraphWriter.write_spring_inject_links": "86e8bd81d9ca8b18e80f1d758fe2ba7edf61347198b384817636e5aa14137960",
    f"{_WRITER}:GraphWriter.write_spring_endpoint_properties":
        "234ac196e9262f0d10e5608df95654a2cfa7d2cd7b9588001e40cb063a798cb8",
    f"{_WRITER}:GraphWriter.write_orm_mappings": "514a90d13b246408a42a463b8f8cfd9bfc0e2b1a71a77d66d26c9cf228250ab7",
    f"{_WRITER}:GraphWriter.write_query_links": "e33efb5c0d5b793f670057e89ef91ca00a76ce100c0fd1d42e986e0a3e892eb1",
    f"{_WRITER}:GraphWriter.write_spring_data_repo_links": "552390e8cab624e112fb03961ec01e3630ccabed143a0b165dbfe25c4ad21bf0",
    f"{_WRITER}:GraphWriter._purge_dangling_pathless_nodes":
        "259838e71fe7619af3f3e97ac4aabf467258ca446fddaa0d9caf840dc2214bca",
    "tools.indexing.sanitize:sanitize_props_with_secrets": "3a257fcaacdbd8428d310d2f245e9a4ef0bdd37d716fe07b7740a1bc24794513",
    "tools.indexing.pipeline:run_tree_sitter_index_async": "93fedf6bc54cbfd7a103b6bed782104a1a337806357fb267600ac51fa4d1559f",
    f"{_KUZU}:EmbeddedGraphManager._initialize_schema": "097d28400295cf5f2fd9321b235b9a27bcca3fbc4e644dfd24152ee7ebb5ef86",
    f"{_KUZU}:EmbeddedSessionWrapper.__init__": "000d874e80cf4cd1bffb200e7e92672308b477d00af5d1c0b6c2477b4f94b001",
    f"{_KUZU}:EmbeddedSessionWrapper.run": "8a329ffba8ef8eeb5ccd4dfa1a9db351aa560eb3ccfd599dfdd460d77acc9c0e",
    f"{_KUZU}:EmbeddedSessionWrapper._sanitize_value": "ea509dca9291e3b983c1b0a96f05013971a57380c8f4e72d9b42d847a948f820",
    f"{_KUZU}:EmbeddedSessionWrapper._translate_query": "467aa28f22e6337baba90d2fef15eb1ea78dd1e389652a78d62563b218418b66",
    "core.database_falkordb:FalkorDBSessionWrapper.run": "37e4d6a301095298c9873c7155c8a61935d672f1e72c8610578e1be4949ba2e0",
}
# cgc's module constants the replay holds copies of: cgc's name, and the engine's module and name of the copy.
COPIED_VALUES = (
    (f"{_WRITER}:_NAME_ONLY_MERGE_LABELS", "graph_profiles", "NAME_ONLY_MERGE_LABELS"),
    (f"{_WRITER}:_COALESCE_SAME_KEY_LABELS", "graph_sanitize", "COALESCE_SAME_KEY_LABELS"),
    (f"{_WRITER}:_FUNCTION_CONTEXT_TYPES", "graph_sanitize", "FUNCTION_CONTEXT_TYPES"),
    ("tools.indexing.sanitize:MAX_STR_LEN", "graph_sanitize", "MAX_STR_LEN"),
)
# What engine/discover.py uses (load_discovery checks each), and the name it patches: find_cgcignore, which
# build_ignore_spec looks up as a global of its module.
DISCOVERY_NEEDED = (
    "core.cgcignore:find_cgcignore", "core.cgcignore:ensure_default_cgcignore", "core.cgcignore:build_ignore_spec",
    "tools.indexing.constants:DEFAULT_IGNORE_PATTERNS", "tools.indexing.discovery:discover_files_to_index",
    "cli.config_manager:resolve_context", "core.jobs:JobManager", "tools.graph_builder:GraphBuilder",
)
FIND_CGCIGNORE_PARAMETERS = ("ignore_root", "explicit_path")


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


def cgc_name(name: str) -> str:
    """A contract name ("module:attribute") as Python spells it."""
    module, _, attributes = name.partition(":")
    return ".".join(part for part in ("codegraphcontext", module, attributes) if part)


def resolve(name: str) -> Any:
    """cgc's object of this contract name ("module:attribute[.attribute]" under codegraphcontext); LookupError
    that says which part is missing."""
    import importlib

    module_name, _, attributes = name.partition(":")
    full_module = cgc_name(module_name)
    try:
        found: Any = importlib.import_module(full_module)
    except ImportError as error:
        raise LookupError(f"{full_module} (it does not import: {error})") from None
    missing = object()
    for attribute in attributes.split("."):
        value = getattr(found, attribute, missing)
        if value is missing:
            raise LookupError(cgc_name(name))
        found = value
    return found


def proven_version() -> str:
    """cgc's version, if it is one the engine was proven on; ContractBroken otherwise."""
    try:
        found = cgc_version()
    except Exception as error:  # any failure to find cgc is a refusal
        raise ContractBroken(f"codegraphcontext is not importable here: {error}") from None
    if found not in PROVEN_VERSIONS:
        raise ContractBroken(f"cgc {found} is not a version the engine was proven on ({', '.join(sorted(PROVEN_VERSIONS))})")
    return found


def check_names(found: str, names: Tuple[str, ...]) -> None:
    """ContractBroken naming every one of these names that cgc lacks (removed or renamed)."""
    missing: List[str] = []
    for name in names:
        try:
            resolve(name)
        except LookupError as error:
            missing.append(str(error))
        except Exception as error:  # a module that fails to import is a refusal
            missing.append(f"{cgc_name(name)} ({type(error).__name__}: {error})")
    if missing:
        raise ContractBroken(f"cgc {found} lacks {', '.join(missing)} (removed or renamed)")


def load() -> str:
    """Checks the contract and installs the engine's hooks; returns cgc's version. Raises ContractBroken."""
    global GraphBuilder, GraphWriter, JobManager, discover_files_to_index, pre_scan_for_imports
    global build_function_call_groups, inh, strip_type_modifiers, resolve_context, get_database_manager
    global sort_import_rows_for_metadata
    global _calls, _writer, _node_label_index
    found = proven_version()
    check_names(found, NEEDED)
    try:
        from codegraphcontext.cli.config_manager import resolve_context as resolve_ctx
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
    except Exception as error:
        raise ContractBroken(f"cgc {found} does not expose the library the engine needs: {error}") from None
    check_writer_purge(found)
    check_kuzu_manager(found)
    check_copied(found)
    GraphBuilder, GraphWriter, JobManager = builder, writer.GraphWriter, jobs
    sort_import_rows_for_metadata = writer.sort_import_rows_for_metadata
    discover_files_to_index, pre_scan_for_imports = discovery.discover_files_to_index, pre_scan
    build_function_call_groups, inh, strip_type_modifiers = calls.build_function_call_groups, inheritance, calls.strip_type_modifiers
    resolve_context, get_database_manager = resolve_ctx, manager_of
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


def check_writer_purge(found: str) -> None:
    """GraphWriter._purge_dangling_pathless_nodes, which without_purge_after_delete overwrites on a writer, takes no
    argument but the writer and is what delete_file_from_graph calls (else the overwrite would not take)."""
    import inspect

    purge = resolve(f"{_WRITER}:GraphWriter._purge_dangling_pathless_nodes")
    name = cgc_name(f"{_WRITER}:GraphWriter._purge_dangling_pathless_nodes")
    try:
        parameters = list(inspect.signature(purge).parameters)
    except (TypeError, ValueError):
        parameters = []
    if parameters != ["self"]:
        raise ContractBroken(f"cgc {found}'s {name} is not a method of no arguments (it takes {parameters})")
    if not _calls_self_method(resolve(f"{_WRITER}:GraphWriter.delete_file_from_graph"), "_purge_dangling_pathless_nodes"):
        raise ContractBroken(f"cgc {found}'s GraphWriter.delete_file_from_graph no longer calls {name} as "
                             "self._purge_dangling_pathless_nodes() (the engine's overwrite on a writer would not take)")


def _calls_self_method(function: Any, method: str) -> bool:
    """The function's source calls `self.<method>()`: looked up on the instance, where the engine overwrites it."""
    import ast
    import inspect
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return False
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method
               and isinstance(node.func.value, ast.Name) and node.func.value.id == "self" for node in ast.walk(tree))


def check_kuzu_manager(found: str) -> None:
    """cgc's KùzuDB manager class keeps what kuzu_connection and kuzu_transaction_driver read, and its driver
    takes what they pass."""
    import inspect

    manager = resolve(f"{_KUZU}:EmbeddedGraphManager")
    missing = [name for name in KUZU_MANAGER_NAMES if not hasattr(manager, name)]
    if missing:
        raise ContractBroken(f"cgc {found}'s KùzuDB manager ({cgc_name(f'{_KUZU}:EmbeddedGraphManager')}) has no "
                             f"attribute {', '.join(missing)}")
    wrapper = resolve(f"{_KUZU}:EmbeddedDriverWrapper")
    try:
        parameters = tuple(inspect.signature(wrapper).parameters)
    except (TypeError, ValueError):
        parameters = ()
    if parameters != KUZU_DRIVER_PARAMETERS:
        raise ContractBroken(f"cgc {found}'s {cgc_name(f'{_KUZU}:EmbeddedDriverWrapper')} takes ({', '.join(parameters)}), "
                             f"not ({', '.join(KUZU_DRIVER_PARAMETERS)})")


def source_digest(name: str) -> str:
    """The sha256 of the source text of cgc's function or method of this contract name (inspect.getsource)."""
    import hashlib
    import inspect

    return hashlib.sha256(inspect.getsource(resolve(name)).encode("utf-8")).hexdigest()


def copied_source_digests() -> Dict[str, str]:
    """The digests of COPIED_SOURCES' names in the installed cgc ("" where a name is missing or has no source)."""
    digests: Dict[str, str] = {}
    for name in COPIED_SOURCES:
        try:
            digests[name] = source_digest(name)
        except (LookupError, OSError, TypeError):
            digests[name] = ""
    return digests


def check_copied(found: str) -> None:
    """The cgc source the engine copies has not changed (COPIED_SOURCES), and the constants it copies are equal to
    cgc's (COPIED_VALUES); ContractBroken naming each that changed."""
    import importlib

    changed: List[str] = []
    for name, digest in copied_source_digests().items():
        if not digest:
            changed.append(f"{cgc_name(name)} (missing, or without source)")
        elif digest != COPIED_SOURCES[name]:
            changed.append(f"{cgc_name(name)} (its source changed: sha256 {digest[:12]}…, the engine copies {COPIED_SOURCES[name][:12]}…)")
    for name, module, copy in COPIED_VALUES:
        try:
            value = resolve(name)
        except LookupError:
            changed.append(f"{cgc_name(name)} (missing)")
            continue
        if value != getattr(importlib.import_module(f"{__package__}.{module}"), copy):
            changed.append(f"{cgc_name(name)} (its value changed: not {module}.{copy})")
    if changed:
        raise ContractBroken(f"cgc {found}'s code that the engine copies has changed: {'; '.join(changed)}")


def load_discovery() -> str:
    """engine/discover.py's contract: the version, the names it uses, and find_cgcignore patchable as it patches it.
    Sets GraphBuilder, JobManager, discover_files_to_index and resolve_context (no hook is installed); returns cgc's
    version. Raises ContractBroken."""
    global GraphBuilder, JobManager, discover_files_to_index, resolve_context
    import inspect

    found = proven_version()
    check_names(found, DISCOVERY_NEEDED)
    find = resolve("core.cgcignore:find_cgcignore")
    name = cgc_name("core.cgcignore:find_cgcignore")
    try:
        parameters = tuple(inspect.signature(find).parameters)
    except (TypeError, ValueError):
        parameters = ()
    if parameters != FIND_CGCIGNORE_PARAMETERS:
        raise ContractBroken(f"cgc {found}'s {name} takes ({', '.join(parameters)}), not ({', '.join(FIND_CGCIGNORE_PARAMETERS)})")
    build = resolve("core.cgcignore:build_ignore_spec")
    if "find_cgcignore" not in getattr(getattr(build, "__code__", None), "co_names", ()):
        raise ContractBroken(f"cgc {found}'s core.cgcignore.build_ignore_spec no longer calls {name} (a patch of it would not take)")
    GraphBuilder, JobManager = resolve("tools.graph_builder:GraphBuilder"), resolve("core.jobs:JobManager")
    discover_files_to_index = resolve("tools.indexing.discovery:discover_files_to_index")
    resolve_context = resolve("cli.config_manager:resolve_context")
    return found


@contextlib.contextmanager
def cgcignore_found_elsewhere(stand_in: Path) -> Iterator[None]:
    """While it lasts, where cgc finds no .cgcignore for a tree it finds `stand_in`, which holds the default cgc
    would otherwise write into the tree (ensure_default_cgcignore, written there once). After load_discovery."""
    cgcignore: Any = sys.modules["codegraphcontext.core.cgcignore"]
    find = cgcignore.find_cgcignore

    def find_without_writing(ignore_root: Path, explicit_path: Optional[str] = None) -> Optional[Path]:
        found = find(ignore_root, explicit_path)
        if found is not None:
            return found
        if not stand_in.exists():
            defaults = resolve("tools.indexing.constants:DEFAULT_IGNORE_PATTERNS")
            cgcignore.ensure_default_cgcignore(stand_in, list(defaults))
        return stand_in

    cgcignore.find_cgcignore = find_without_writing
    try:
        yield
    finally:
        cgcignore.find_cgcignore = find


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
        CallGroupsFrame(sys._getframe(1))._put({"value": marker})

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
        _kuzu_internal(manager, "_db"), single, _kuzu_internal(manager, "_write_lock"),
        compat_state=_kuzu_internal(type(manager), "_compat_state"),
        display_name=manager.BACKEND_SPEC.display_name, backend_id=manager.BACKEND_SPEC.backend_id,
    )


@contextlib.contextmanager
def kuzu_connection(manager: Any) -> Iterator[Any]:
    """A connection of the KùzuDB manager's pool, given back after."""
    pool = _kuzu_internal(manager, "_pool")
    if not (callable(getattr(pool, "get", None)) and callable(getattr(pool, "put", None))):
        raise ContractBroken(f"cgc's KùzuDB manager {type(manager).__name__}'s _pool is a {type(pool).__name__}, not "
                             "the queue of connections the engine takes one from")
    connection = pool.get(timeout=30)
    try:
        yield connection
    finally:
        pool.put(connection)


def _kuzu_internal(manager: Any, name: str) -> Any:
    """What cgc's open KùzuDB manager keeps in `name` (KUZU_MANAGER_NAMES); ContractBroken naming it if nothing."""
    value = getattr(manager, name, None)
    if value is None:
        owner = manager.__name__ if isinstance(manager, type) else type(manager).__name__
        raise ContractBroken(f"cgc's KùzuDB manager {owner} holds nothing in {name} (the engine reads its "
                             f"{'connection pool' if name == '_pool' else 'database' if name == '_db' else name} there)")
    return value


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
        return self._locals.get(_listed(name), default)

    def __getitem__(self, name: str) -> Any:
        return self._locals[_listed(name)]

    def __contains__(self, name: str) -> bool:
        return _listed(name) in self._locals

    def put(self, values: Dict[str, Any]) -> None:
        """Sets these locals in the running frame; NarrowingFailed unless every one took."""
        for name in values:
            _listed(name)
        self._put(values)

    def _put(self, values: Dict[str, Any]) -> None:
        self._locals.update(values)
        ctypes.pythonapi.PyFrame_LocalsToFast(ctypes.py_object(self._frame), ctypes.c_int(0))
        self.expect(values)

    def expect(self, values: Dict[str, Any]) -> None:
        """NarrowingFailed unless the frame holds these very objects."""
        after = self._frame.f_locals
        if any(after.get(name) is not value for name, value in values.items()):
            raise NarrowingFailed(f"cgc's {', '.join(values)} did not take in its running frame")


def _listed(name: str) -> str:
    """The name, if it is one of FRAME_NAMES (the locals load checked); NarrowingFailed naming it otherwise."""
    if name not in FRAME_NAMES:
        raise NarrowingFailed(f"{name} is not a local of build_function_call_groups the contract lists (FRAME_NAMES)")
    return name


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
    """`obj` becomes a `cls` in place (both share one layout: recording.LendableDict's slots)."""
    obj.__class__ = cls


def lend(index: Dict[Any, Any], tag: str, lent: List[Tuple[Any, type]],
         settle: Optional[Callable[[], None]] = None) -> RecordingDict:
    """The index as cgc reads it while the chosen files resolve: every read noted. An index the engine built
    (a KeptDict, the imports map) becomes that RecordingDict in place until give_back: a copy of each of
    the 18 indices at every update cost 10-17 ms at 5 000 files. Any other index is copied. `settle`
    puts an owed key order right in the index (see "Kept indices"); the recording dict then sees it."""
    if isinstance(index, LendableDict) and not isinstance(index, OwedOrderDict):
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
            except Exception:  # cgc's own fallback (an older tree-sitter) and its errors
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
