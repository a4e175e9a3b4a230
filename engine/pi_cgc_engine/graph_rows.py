"""The graph cgc 0.6.13's full index leaves, computed in memory from its pipeline's results (no database).

Pure: stdlib only, no import of codegraphcontext. The cgc source this replay (and graph_replay, graph_model,
graph_profiles, graph_sanitize) follows is fingerprinted in cgc_contract.COPIED_SOURCES and COPIED_VALUES: a cgc
whose copied source changed is refused at load. Given what cgc's pipeline (tools/indexing/pipeline.py,
run_tree_sitter_index_async) has in memory after its parse and resolution, `build_graph` replays, statement by
statement and in the pipeline's order, what cgc's GraphWriter (tools/indexing/persistence/writer.py) asks the
database to do, against an in-memory model of the graph, and returns every node (label, properties) and every
edge (type, endpoints, properties) it leaves. A loader (bulk_kuzu.py) then writes those tables in bulk.

What the replay follows, in order:
  1. add_repository_to_graph (Repository: path, name, is_dependency, commit_hash if the caller found one).
  2. Per parsed file, in path order: add_file_to_graph (File, the Directory chain with its CONTAINS edges, the
     item batches per label with _coalesce_same_key_items / _assign_occurrence_indices / sanitize_props' coercion /
     the per-key "dominant type" normalisation / key sorting, the File->item CONTAINS, HAS_PARAMETER/Parameter,
     EnumMember and class->method CONTAINS, nested-function CONTAINS, JS and other IMPORTS with the Module
     metadata's coalesce, INCLUDES); per file whose parse gave an error and that is not `unsupported`:
     add_minimal_file_node.
  3. write_inheritance_links (pair groups, child-only groups and legacy rows over the populated labels, external
     parents as ExternalClass, then _create_csharp_inheritance_and_interfaces per C# file), write_implements_links,
     write_embeds/companion_of/partial_of/part_of/metaclass/decorated_by/binds/previews_links,
     write_function_call_groups (CALLS and HEURISTIC_CALLS), write_cpp_class_function_links,
     write_spring_inject_links, write_spring_endpoint_properties.
A full index into an empty database runs no purge (cgc's _purge_dangling_pathless_nodes runs only on deletes), so
none is replayed.

What the backend changes is kept in a profile (KUZU below, cgc's embedded KùzuDB): which properties a SET keeps
(the adapter's SCHEMA_MAP and PK_MAP in core/database_embedded_kuzu.py, EmbeddedSessionWrapper._translate_query),
the uid a node of a positional label is keyed by (EmbeddedSessionWrapper.uid_map and the uid injection of
_translate_query 1.5b / 2), the parameter sanitising (EmbeddedSessionWrapper._sanitize_value: tuples to lists,
batch rows padded to every key, None line numbers to -1, identical rows of a non-relationship batch dropped), which
(from, to) pairs a relationship table has (a MATCH/MERGE over any other pair is a binder exception, which cgc's
writer swallows: the whole group is skipped), which columns a label has (a predicate on a missing column is a binder
exception: cgc's Function->Parameter CALLS group is skipped whole on KùzuDB for `called.line_number`), and the
batches the adapter runs row by row (an UNWIND with a node MERGE and a relationship: forced per-row fallback). On
KùzuDB each statement of a batch sees the effects of the rows before it, so the replay is sequential.

FALKORDB, FALKORDB_REMOTE and NEO4J are the schemaless profiles (bulk_cypher.py loads their rows): no uid, a node is
what its MERGE pattern names, every key of a `SET n += row` is kept, no binder exception, parameters as the drivers
send them. Neo4j applies an UNWIND row by row, as the replay does. FalkorDB's MERGE hands the rows to the SET after
it in an order of its own: a Module's `coalesce` keeps the statement's last row (batch_reads_before), and a JS or
other IMPORTS statement whose rows set one relationship to different values is refused (NotReplicable: the row
FalkorDB keeps was not predictable; see refuse_conflicting_rows).

Not replicated (the caller must fall back to cgc's own index; `build_graph` raises NotReplicable, or the caller
checks first with `refusal`):
  - a database that already holds anything (Module and ExternalClass nodes are shared by name across
    repositories, the C++ pass and the C# parent match look across the whole graph): the replay models an empty
    graph;
  - ORM mappings (write_orm_mappings / write_query_links / write_spring_data_repo_links MERGE DbTable on a non-key
    property), Maven and Gradle build graphs, MyBatis mappers (the caller passes what cgc found; non-empty refuses);
  - SCIP indexing, ENABLE_VECTOR_RESOLVE, ENABLE_INHERIT_RESOLVE, REDACT_SECRETS=true (config; the caller checks);
  - on FalkorDB, a parameter value with a NUL character outside add_file_to_graph (the client writes parameters into
    the query's text, which FalkorDB reads up to the NUL: cgc's statement fails). Within add_file_to_graph it is
    replicated: cgc's pipeline catches a file's failed write, keeps what its statements before the failing one
    wrote, and resolves no link of the file (it marks it as an error). The parse marks such a file the same way
    beforehand (write_fails: `write_failed`), so that the resolution leaves it out as cgc's does;
  - any value whose type does not fit its KùzuDB column (cgc would have had the database cast it or fail the
    file's write and retry: not modelled), a NULL in a MERGE key, a node name that is not a string;
  - the languages in REFUSED_LANGUAGES (none known yet); PROVEN_LANGUAGES lists those a parity run proved.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from .graph_model import GraphRows
from .graph_profiles import KUZU, PROFILES, REFUSED_LANGUAGES, NotReplicable, Profile, WriteFails
from .graph_replay import Writer, import_conflict
from .graph_sanitize import normalize_path

# ---------------------------------------------------------------------------------------------------------------
# The replay.


def write_fails(fd: Dict[str, Any], profile: Profile, repo_str: str,
                normalize: Callable[[Any], str] = normalize_path) -> Optional[str]:
    """The error the backend meets in cgc's add_file_to_graph of this parse (None: the file is written whole). Only
    on FalkorDB, a value with a NUL character (a docstring cgc's parser unescaped into one): the replay of the file's
    statements says whether one reaches the database as it is (cgc shortens long strings first)."""
    if not profile.params_as_text or not _holds_nul(fd):
        return None
    try:
        Writer(GraphRows(profile), normalize).add_file(fd, repo_str)
    except WriteFails as error:
        return str(error)
    except NotReplicable:
        return None  # the replay of the whole tree refuses it again
    return None


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_holds_nul(v) for v in value)
    return False


def refusal(parsed: Sequence[Dict[str, Any]], *, profile: Optional[Profile] = None, maven_data: Any = None,
            gradle_data: Any = None, mybatis_batch: Any = None) -> Optional[str]:
    """Why this tree's full index cannot be replayed (None when it can, as far as can be told before replaying).
    With the backend's profile, the IMPORTS statements whose row FalkorDB picks are checked too. A file whose
    write is to fail is left to the replay: its statements may stop before its imports."""
    for fd in parsed:
        lang = fd.get("lang")
        if lang in REFUSED_LANGUAGES:
            return f"{fd.get('path')}: language {lang} is refused"
        if fd.get("orm_mappings"):
            return f"{fd.get('path')}: ORM mappings (DbTable MERGEs) are not replicated"
        if profile is not None and profile.batch_reads_before and "error" not in fd and not fd.get("write_failed"):
            conflict = import_conflict(fd)
            if conflict is not None:
                return conflict
    if maven_data and maven_data.get("modules"):
        return "a Maven build graph is not replicated"
    if gradle_data and gradle_data.get("modules"):
        return "a Gradle build graph is not replicated"
    if mybatis_batch:
        return "MyBatis mappers are not replicated"
    return None


def build_graph(
    repo_root: Any,
    file_data: Sequence[Dict[str, Any]],
    imports_map: Dict[str, List[str]],
    links: Dict[str, Any],
    *,
    profile: Profile = KUZU,
    is_dependency: bool = False,
    commit_hash: Optional[str] = None,
    csharp_files: Optional[List[Dict[str, Any]]] = None,
    maven_data: Any = None,
    gradle_data: Any = None,
    mybatis_batch: Any = None,
    normalize: Callable[[Any], str] = normalize_path,
    indexed_at: Optional[str] = None,
    whole: Callable[[Dict[str, Any]], Dict[str, Any]] = lambda fd: fd,
    consume: bool = False,
) -> GraphRows:
    """The graph `cgc index --force repo_root` leaves in an empty database.

    repo_root: the indexed folder (cgc's `path`; the pipeline resolves it).
    file_data: every dict cgc's GraphBuilder.parse_file(repo_root, path, is_dependency) returned for the discovered
      files (those whose parse raised too: {"path", "error", "parse_failed"}; generic and unsupported ones), any
      order; they are not modified.
    imports_map: cgc's pre-scan map (kept for the writer's signature; cgc's writer reads it only in a no-op).
    links: the resolved rows, as the engine's Tree.resolve returns them: "inherits", "implements" (Go, Haskell and
      Elixir rows concatenated as the pipeline does), "embeds", "companion", "partial", "part_of", "metaclass",
      "decorated", "binds", "previews", and "calls" (build_function_call_groups' ten groups, in its order).
    csharp_files: build_inheritance_and_csharp_files' second result; None computes it as cgc does (the parsed
      files whose lang is "c_sharp", in path order).
    maven_data / gradle_data / mybatis_batch: what cgc's parse_repo_maven / parse_repo_gradle /
      find_and_parse_mybatis_mappers found for the root (non-empty refuses).
    whole: a file's data as the parse gave it, from the data given (the engine's full index keeps the fields
      only the writer reads aside: source_stash), asked once per file, as the file is written.
    consume: file_data is emptied, and each file let go of once written (the caller holds no other reference:
      the graph's rows then take the place the files held).
    """
    repo = Path(repo_root)
    why = refusal(file_data, profile=profile, maven_data=maven_data, gradle_data=gradle_data,
                  mybatis_batch=mybatis_batch)
    if why:
        raise NotReplicable(why)
    g = GraphRows(profile)
    w = Writer(g, normalize)
    repo_str = normalize(repo)
    w.add_repository(repo_str, repo.resolve().name, is_dependency, commit_hash,
                     indexed_at or datetime.now(timezone.utc).isoformat())
    ordered: List[Any] = sorted(file_data, key=lambda d: str(d.get("path") or ""))
    if consume:
        file_data.clear()  # type: ignore[attr-defined]
    # What the passes after the files read of them: the C# files, and those with Spring injections or endpoints.
    parsed = [fd for fd in ordered if "error" not in fd]
    if csharp_files is None:
        csharp_files = [fd for fd in parsed if fd.get("lang") == "c_sharp"]
    spring_files = [fd for fd in parsed if fd.get("spring_injections")
                    or any(fn.get("http_method") for fn in fd.get("functions", []))]
    del parsed
    for at, fd in enumerate(ordered):
        if consume:
            ordered[at] = None
        if fd.get("write_failed"):
            # cgc's pipeline: the file's statements up to the failing one stay written (write_fails).
            try:
                w.add_file(whole(fd), repo_str)
            except WriteFails:
                pass
            else:
                raise NotReplicable(f"{fd['path']}: its write was to fail, and did not")
        elif "error" not in fd:
            w.add_file(whole(fd), repo_str)
        elif not fd.get("unsupported"):
            w.add_minimal_file(fd["path"], repo_str, repo.resolve().name, is_dependency)
    w.inheritance(links.get("inherits") or [], csharp_files)
    w.simple_links("IMPLEMENTS", links.get("implements") or [], "Struct", "Interface", "INFERRED")
    w.embeds(links.get("embeds") or [])
    w.companion(links.get("companion") or [])
    w.simple_links("PARTIAL_OF", links.get("partial") or [], "Class", "Class", "INFERRED")
    w.part_of(links.get("part_of") or [])
    w.metaclass(links.get("metaclass") or [])
    w.decorated(links.get("decorated") or [])
    w.binds(links.get("binds") or [])
    w.previews(links.get("previews") or [])
    w.calls(list(links.get("calls") or [[]] * 10))
    w.cpp_class_functions(repo_str)
    w.spring(spring_files)
    g.drop_lookups()
    return g


# What the callers (indexer, the loaders, the tests) use: the replay's entry and its results.
__all__ = ["KUZU", "PROFILES", "GraphRows", "NotReplicable", "Profile", "WriteFails", "build_graph", "refusal",
           "write_fails"]
