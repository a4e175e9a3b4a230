"""The graph cgc 0.6.13's full index leaves, computed in memory from its pipeline's results (no database).

Pure: stdlib only, no import of codegraphcontext. Given what cgc's pipeline (tools/indexing/pipeline.py,
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
FalkorDB keeps was not predictable; see _refuse_conflicting_rows).

Not replicated (the caller must fall back to cgc's own index; `build_graph` raises NotReplicable, or the caller
checks first with `refusal`):
  - a database that already holds anything (Module and ExternalClass nodes are shared by name across
    repositories, the C++ pass and the C# parent match look across the whole graph): the replay models an empty
    graph;
  - ORM mappings (write_orm_mappings / write_query_links / write_spring_data_repo_links MERGE DbTable on a non-key
    property), Maven and Gradle build graphs, MyBatis mappers (the caller passes what cgc found; non-empty refuses);
  - SCIP indexing, ENABLE_VECTOR_RESOLVE, ENABLE_INHERIT_RESOLVE, REDACT_SECRETS=true (config; the caller checks);
  - any value whose type does not fit its KùzuDB column (cgc would have had the database cast it or fail the
    file's write and retry: not modelled), a NULL in a MERGE key, a node name that is not a string;
  - the languages in REFUSED_LANGUAGES (none known yet); PROVEN_LANGUAGES lists those a parity run proved.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

# Languages (cgc's file_data["lang"]) whose trees reached 0 differing lines against `cgc index --force`.
PROVEN_LANGUAGES = frozenset({"python", "javascript", "typescript", "go", "java"})
# Languages whose writes this module cannot replicate (none known: data-dependent cases raise NotReplicable).
REFUSED_LANGUAGES: frozenset = frozenset()


class NotReplicable(Exception):
    """The full index of this tree does something the replay does not model: use cgc's own index."""


# ---------------------------------------------------------------------------------------------------------------
# The backend profile: cgc 0.6.13's embedded KùzuDB (core/database_embedded_kuzu.py).

def _cols(text: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for part in text.split(","):
        name, kind = part.split()
        out[name] = kind
    return out


_POSITIONAL = "uid STRING, name STRING, path STRING, line_number INT64, occurrence_index INT64, end_line INT64, source STRING, docstring STRING, lang STRING, is_dependency BOOLEAN"
# EmbeddedGraphManager._initialize_schema's node tables (columns and types; the first column listed is not
# necessarily the key: see KUZU_PRIMARY_KEYS).
KUZU_NODE_TABLES: Dict[str, Dict[str, str]] = {
    "Repository": _cols("path STRING, name STRING, is_dependency BOOLEAN, indexed_at STRING, commit_hash STRING"),
    "File": _cols("path STRING, name STRING, relative_path STRING, package_name STRING, language STRING, is_dependency BOOLEAN"),
    "Directory": _cols("path STRING, name STRING"),
    "Module": _cols("name STRING, lang STRING, full_import_name STRING, path STRING, line_number INT64"),
    "Function": _cols("uid STRING, name STRING, path STRING, line_number INT64, occurrence_index INT64, end_line INT64, source STRING, docstring STRING, lang STRING, cyclomatic_complexity INT64, context STRING, context_type STRING, class_context STRING, class_context_line INT64, module_context STRING, is_dependency BOOLEAN, decorators STRING[], args STRING[], arg_types STRING[], http_method STRING, http_path STRING, embedding DOUBLE[], visibility STRING, modifiers STRING[], is_composable BOOLEAN"),
    "Class": _cols("uid STRING, name STRING, path STRING, line_number INT64, occurrence_index INT64, end_line INT64, source STRING, docstring STRING, lang STRING, node_type STRING, is_dependency BOOLEAN, decorators STRING[], visibility STRING, modifiers STRING[]"),
    "Variable": _cols("uid STRING, name STRING, path STRING, line_number INT64, occurrence_index INT64, source STRING, docstring STRING, lang STRING, value STRING, context STRING, is_dependency BOOLEAN"),
    "Trait": _cols(_POSITIONAL),
    "Interface": _cols(_POSITIONAL + ", decorators STRING[], visibility STRING, modifiers STRING[]"),
    "Macro": _cols(_POSITIONAL),
    "Struct": _cols(_POSITIONAL),
    "Enum": _cols(_POSITIONAL),
    "EnumMember": _cols("uid STRING, name STRING, path STRING, line_number INT64, occurrence_index INT64, lang STRING, is_dependency BOOLEAN"),
    "Union": _cols(_POSITIONAL),
    "Annotation": _cols("uid STRING, name STRING, path STRING, line_number INT64, end_line INT64, source STRING, docstring STRING, lang STRING, is_dependency BOOLEAN"),
    "Record": _cols(_POSITIONAL),
    "Property": _cols(_POSITIONAL),
    "Parameter": _cols("uid STRING, name STRING, path STRING, function_line_number INT64"),
    "Mixin": _cols(_POSITIONAL),
    "Extension": _cols(_POSITIONAL),
    "Object": _cols(_POSITIONAL + ", decorators STRING[], visibility STRING, modifiers STRING[]"),
    "ExternalClass": _cols("name STRING, path STRING"),
}
# _translate_query's PK_MAP (every other label is keyed by uid).
KUZU_PRIMARY_KEYS = {"Repository": "path", "File": "path", "Directory": "path", "Module": "name",
                     "DbTable": "fqn", "ExternalClass": "name"}
# EmbeddedSessionWrapper.uid_map (the labels the writer touches).
KUZU_UID_PARTS = {label: ["name", "path", "line_number", "occurrence_index"] for label in (
    "Function", "Class", "Variable", "Trait", "Interface", "Macro", "Struct", "Enum", "EnumMember", "Union",
    "Record", "Property", "Mixin", "Extension", "Object")}
KUZU_UID_PARTS.update({"Annotation": ["name", "path", "line_number"], "Parameter": ["name", "path", "function_line_number"]})
# _translate_query's SCHEMA_MAP: the properties a `SET n += row` keeps (the table's columns but `embedding`).
KUZU_SET_ALLOWED = {label: set(cols) - {"embedding"} for label, cols in KUZU_NODE_TABLES.items()
                    if label not in ("ExternalClass",)}

_ITEM_LABELS = ["Class", "Trait", "Interface", "Struct", "Enum", "Union", "Record", "Mixin", "Extension", "Module", "Object", "Variable"]


def _pairs(text: str) -> Set[Tuple[str, str]]:
    out = set()
    for part in text.split(","):
        words = part.replace("`", "").split()
        if words and words[0] == "FROM":
            out.add((words[1], words[3]))
    return out


_CALL_PAIRS = _pairs("""
    FROM Function TO Function, FROM Function TO Class, FROM Function TO Interface, FROM Function TO Trait,
    FROM Function TO Struct, FROM Function TO Enum, FROM Function TO Record, FROM Function TO Union,
    FROM Function TO Mixin, FROM Function TO Extension, FROM Function TO Object, FROM Function TO Parameter,
    FROM Class TO Function, FROM Class TO Class, FROM Class TO Interface, FROM Class TO Trait,
    FROM Class TO Struct, FROM Class TO Enum, FROM Class TO Record, FROM Class TO Union,
    FROM Interface TO Function, FROM Interface TO Class, FROM Interface TO Interface,
    FROM Trait TO Function, FROM Trait TO Class, FROM Trait TO Interface,
    FROM Mixin TO Function, FROM Mixin TO Class, FROM Mixin TO Interface,
    FROM Extension TO Function, FROM Extension TO Class, FROM Extension TO Interface,
    FROM Object TO Function, FROM Object TO Class, FROM Object TO Interface,
    FROM Union TO Function, FROM Union TO Class, FROM Union TO Interface,
    FROM Macro TO Function, FROM Macro TO Class, FROM Macro TO Interface,
    FROM File TO Function, FROM File TO Class, FROM File TO Interface, FROM File TO Trait,
    FROM File TO Struct, FROM File TO Enum, FROM File TO Record, FROM File TO Union,
    FROM Function TO File,
    FROM Variable TO Function, FROM Variable TO Class, FROM Variable TO Interface""")
_INHERIT_FROM = ["Class", "Trait", "Interface", "Struct", "Enum", "Union", "Record", "Mixin", "Extension", "Module", "Object"]
_INHERIT_PAIRS = {(a, b) for a in _INHERIT_FROM for b in _INHERIT_FROM + ["ExternalClass"]}
_INHERIT_PAIRS |= {("Variable", b) for b in _INHERIT_FROM + ["Variable", "ExternalClass"]}
_INHERIT_PAIRS |= {(a, "Variable") for a in _INHERIT_FROM}
# The relationship tables' (FROM, TO) pairs and property columns, as _initialize_schema creates them.
KUZU_REL_TABLES: Dict[str, Tuple[Set[Tuple[str, str]], Dict[str, str]]] = {
    "CONTAINS": (_pairs("""
        FROM File TO Function, FROM File TO Class, FROM File TO Variable, FROM File TO Trait, FROM File TO Interface,
        FROM File TO Macro, FROM File TO Struct, FROM File TO Enum, FROM File TO Union, FROM File TO Annotation,
        FROM File TO Record, FROM File TO Property, FROM File TO Mixin, FROM File TO Extension, FROM File TO Module,
        FROM File TO Object, FROM File TO EnumMember,
        FROM Repository TO Directory, FROM Directory TO Directory, FROM Directory TO File, FROM Repository TO File,
        FROM Class TO Function, FROM Module TO Function, FROM Interface TO Function, FROM Struct TO Function,
        FROM Record TO Function, FROM Trait TO Function, FROM Object TO Function, FROM Mixin TO Function,
        FROM Extension TO Function, FROM Class TO Class, FROM Class TO Interface, FROM Class TO Struct,
        FROM Class TO Variable, FROM Class TO EnumMember,
        FROM Module TO Class, FROM Module TO Module, FROM Macro TO Macro, FROM Function TO Function"""), {}),
    "CALLS": (_CALL_PAIRS, _cols("line_number INT64, args STRING[], full_call_name STRING, args_key STRING, confidence DOUBLE, resolution_tier INT64, confidence_label STRING, source STRING, resolution_method STRING, called_name STRING")),
    "HEURISTIC_CALLS": (_CALL_PAIRS, _cols("line_number INT64, args STRING[], full_call_name STRING, args_key STRING, confidence DOUBLE, resolution_tier INT64, confidence_label STRING, source STRING, resolution_method STRING, called_name STRING")),
    "IMPORTS": ({("File", "Module")}, _cols("alias STRING, full_import_name STRING, imported_name STRING, line_number INT64, lang STRING")),
    "PREVIEWS": ({("Function", "Function")}, _cols("line_number INT64")),
    "INHERITS": (_INHERIT_PAIRS, _cols("confidence_label STRING")),
    "HAS_PARAMETER": ({("Function", "Parameter")}, {}),
    "INCLUDES": ({("Class", "Module")}, {}),
    "IMPLEMENTS": (_pairs("FROM Class TO Interface, FROM Class TO Class, FROM Struct TO Interface, FROM Record TO Interface, FROM Mixin TO Interface, FROM Extension TO Interface, FROM Enum TO Interface, FROM Object TO Interface, FROM Union TO Interface, FROM Trait TO Interface, FROM Module TO Module, FROM Module TO Interface"), _cols("confidence_label STRING")),
    "METACLASS": ({("Class", "Class")}, _cols("line_number INT64, confidence_label STRING")),
    "DECORATED_BY": ({("Function", "Function"), ("Class", "Function")}, _cols("line_number INT64")),
    "COMPANION_OF": ({("Object", "Class")}, {}),
    "EMBEDS": ({("Struct", "Struct")}, _cols("line_number INT64")),
    "PARTIAL_OF": ({("Class", "Class")}, _cols("line_number INT64, confidence_label STRING")),
    "PART_OF": ({("File", "File")}, {}),
    "INJECTS": ({("Class", "Class")}, _cols("field_name STRING, inject_line INT64, confidence_label STRING")),
    "BINDS": (_pairs("FROM Interface TO Class, FROM Class TO Class, FROM Interface TO Interface"), _cols("line_number INT64, provider STRING, confidence_label STRING")),
}


@dataclass(frozen=True)
class Profile:
    """What a backend's adapter does to cgc's writer's statements.

    typed False (node_tables / rel_tables empty): a backend without a fixed schema (FalkorDB, Neo4j): any label, any property,
    any (from, to) pair, no binder exception, no cast; a SET of NULL removes the property. uid_parts empty: no uid
    is injected, a node is the one its MERGE pattern names (positional labels: name, path, line_number,
    occurrence_index; Parameter: name, path, function_line_number). kuzu_sanitize: the parameters go through
    EmbeddedSessionWrapper._sanitize_value (else only tuples become lists, as the drivers send them).
    batch_reads_before: an UNWIND's `SET m.x = coalesce(m.x, row.x)` reads, for every row, the value m had before
    the statement (FalkorDB: its update is eager, all rows evaluated and then applied, so the statement's last row
    wins), where KùzuDB (row by row) and Neo4j (each row's SET before the next row) read the value the earlier
    rows left (the first row wins)."""
    name: str
    node_tables: Dict[str, Dict[str, str]]
    primary_keys: Dict[str, str]
    uid_parts: Dict[str, List[str]]
    set_allowed: Dict[str, Set[str]]
    rel_tables: Dict[str, Tuple[Set[Tuple[str, str]], Dict[str, str]]]
    typed: bool = True
    kuzu_sanitize: bool = True
    batch_reads_before: bool = False

    def has_label(self, label: str) -> bool:
        return not self.typed or label in self.node_tables

    def has_pair(self, rel: str, a: str, b: str) -> bool:
        return not self.typed or (a, b) in self.rel_tables[rel][0]

    def columns(self, label: str) -> Optional[Dict[str, str]]:
        """The label's columns (None: a label the schema lacks, or no schema: any property)."""
        return self.node_tables.get(label) if self.typed else None


KUZU = Profile("kuzudb", KUZU_NODE_TABLES, KUZU_PRIMARY_KEYS, KUZU_UID_PARTS, KUZU_SET_ALLOWED, KUZU_REL_TABLES)
# The schemaless backends: cgc's FalkorDB adapters (core/database_falkordb.py's FalkorDBSessionWrapper, shared by
# database_falkordb_remote.py) pass the writer's Cypher through unchanged but for schema statements; cgc's Neo4j
# driver is the neo4j package's own. The MERGE keys of the writer's statements are the node's identity.
CYPHER_PRIMARY_KEYS = {"Repository": "path", "File": "path", "Directory": "path", "Module": "name",
                       "ExternalClass": "name", "DbTable": "fqn"}
FALKORDB = Profile("falkordb", {}, CYPHER_PRIMARY_KEYS, {}, {}, {}, typed=False, kuzu_sanitize=False,
                   batch_reads_before=True)
FALKORDB_REMOTE = Profile("falkordb-remote", {}, CYPHER_PRIMARY_KEYS, {}, {}, {}, typed=False, kuzu_sanitize=False,
                          batch_reads_before=True)
NEO4J = Profile("neo4j", {}, CYPHER_PRIMARY_KEYS, {}, {}, {}, typed=False, kuzu_sanitize=False)
PROFILES = {p.name: p for p in (KUZU, FALKORDB, FALKORDB_REMOTE, NEO4J)}
# The MERGE pattern's properties of the labels keyed by more than one (schemaless profiles).
_POSITIONAL_KEY = ("name", "path", "line_number", "occurrence_index")
_PARAMETER_KEY = ("name", "path", "function_line_number")


# ---------------------------------------------------------------------------------------------------------------
# cgc's helpers, replicated (the function each mirrors is named).

# writer.py
_NAME_ONLY_MERGE_LABELS = {"Module", "DbTable", "ExternalClass"}
_COALESCE_SAME_KEY_LABELS = {"Variable"}
_FUNCTION_CONTEXT_TYPES = {
    "function_definition", "function_declaration", "function_expression", "arrow_function", "generator_function",
    "generator_function_declaration", "method_definition", "method_declaration", "constructor_declaration",
    "local_function_statement", "func_literal", "function_item", "method", "singleton_method", "lambda_expression",
}
_ITEM_MAPPINGS = [("functions", "Function"), ("classes", "Class"), ("traits", "Trait"), ("variables", "Variable"),
                  ("interfaces", "Interface"), ("macros", "Macro"), ("structs", "Struct"), ("enums", "Enum"),
                  ("unions", "Union"), ("records", "Record"), ("properties", "Property"), ("mixins", "Mixin"),
                  ("extensions", "Extension"), ("modules", "Module"), ("objects", "Object"),
                  ("enum_members", "EnumMember")]
_CPP_EXTS = (".cpp", ".cc", ".cxx", ".c++", ".C")
MAX_STR_LEN = 4096  # sanitize.py
EXTERNAL = "__external__"
# EmbeddedSessionWrapper._sanitize_value's relationship-batch keys (such batches keep identical rows).
_REL_BATCH_KEYS = {"child_name", "parent_name", "resolved_parent_file_path", "caller_name", "called_name",
                   "caller_file_path", "called_file_path", "caller_line_number", "func_name", "arg_name",
                   "caller_symbol", "callee_name", "injector_class", "injected_class", "interface_name"}
_INT_KEYS = ("line_number", "function_line_number", "end_line")


def normalize_path(p: Any) -> str:
    """writer._normalize_path: Path(p).resolve().as_posix()."""
    return Path(p).resolve().as_posix()


def sort_import_rows_for_metadata(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """writer.sort_import_rows_for_metadata."""

    def metadata_priority(row: Dict[str, Any]) -> Tuple[str, int, str, int]:
        name = str(row.get("name") or "")
        full_name = str(row.get("full_import_name") or "")
        stripped = full_name.strip()
        if stripped == "use super::*;":
            priority = 0
        elif stripped.startswith("pub use ") and not stripped.rstrip(";").endswith("::*"):
            priority = 1
        elif "{" in stripped and "}" in stripped:
            priority = 2
        elif stripped.startswith("pub use "):
            priority = 3
        else:
            priority = 4
        return (name, priority, full_name, int(row.get("line_number") or 0))

    return sorted(rows, key=metadata_priority)


def _coalesce_same_key_items(items: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """writer._coalesce_same_key_items."""
    merged: Dict[Tuple[str, Any], Dict[str, Any]] = {}
    order: List[Tuple[str, Any]] = []
    for item in items:
        key = (str(item.get("name", "")), item.get("line_number"))
        if key in merged:
            merged[key].update(item)
        else:
            merged[key] = dict(item)
            order.append(key)
    return [merged[k] for k in order]


def _assign_occurrence_indices(items: List[Dict[str, Any]]) -> List[int]:
    """writer._assign_occurrence_indices (the indices only)."""
    seen: Dict[Tuple[str, Any], int] = {}
    indices: List[int] = []
    for item in items:
        key = (str(item.get("name", "")), item.get("line_number"))
        index = seen.get(key, 0)
        indices.append(index)
        seen[key] = index + 1
    return indices


def coerce_props(props: Dict[str, Any]) -> Dict[str, Any]:
    """sanitize.sanitize_props_with_secrets with redact=False (REDACT_SECRETS unset): values coerced, no secret
    replaced (scan_props_and_redact only reports then)."""
    MAX = MAX_STR_LEN

    def prim(v: Any) -> bool:
        return isinstance(v, (str, int, float, bool)) or v is None

    def coerce(v: Any) -> Any:
        if isinstance(v, str):
            return v[:MAX] if len(v) > MAX else v
        if prim(v):
            return v
        if isinstance(v, list) and all(prim(i) for i in v):
            return [s[:MAX] if isinstance(s, str) and len(s) > MAX else s for s in v]
        try:
            serialized = json.dumps(v, default=str)
            return serialized[:MAX] if len(serialized) > MAX else serialized
        except Exception:  # noqa: BLE001 - as cgc
            s = str(v)
            return s[:MAX] if len(s) > MAX else s

    return {k: coerce(v) for k, v in props.items()}


def _normalize_batch_types(batch: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """add_file_to_graph's per-key dominant-type normalisation and key sorting, in place as cgc does."""
    all_keys: Set[str] = set()
    for b in batch:
        all_keys.update(b.keys())
    for k in all_keys:
        counts: Dict[str, int] = {}
        for b in batch:
            v = b.get(k)
            if v is not None:
                tname = type(v).__name__
                counts[tname] = counts.get(tname, 0) + 1
        dominant = max(counts, key=counts.get) if counts else "str"
        for b in batch:
            v = b.get(k)
            if dominant == "list":
                if isinstance(v, list):
                    b[k] = [str(x) for x in v]
                elif isinstance(v, str) and v:
                    try:
                        p = json.loads(v)
                        b[k] = [str(x) for x in p] if isinstance(p, list) and p else []
                    except Exception:  # noqa: BLE001
                        b[k] = [v]
                else:
                    b[k] = []
            elif dominant == "int":
                if v is None or v == "":
                    b[k] = 0
                elif not isinstance(v, int):
                    try:
                        b[k] = int(v)
                    except Exception:  # noqa: BLE001
                        b[k] = 0
            elif dominant == "bool":
                b[k] = bool(v) if v is not None else False
            else:
                if v is None:
                    b.pop(k, None)
                elif isinstance(v, list):
                    b[k] = json.dumps(v)
                elif not isinstance(v, str):
                    b[k] = str(v)
    key_order = sorted(all_keys)
    return [{k: b[k] for k in key_order if k in b} for b in batch]


def _sanitize_value(v: Any) -> Any:
    """EmbeddedSessionWrapper._sanitize_value (KùzuDB's parameter sanitising)."""
    if isinstance(v, (tuple, set)):
        return [_sanitize_value(i) for i in v]
    if isinstance(v, list):
        sanitized = [_sanitize_value(i) for i in v]
        if sanitized and all(isinstance(i, dict) for i in sanitized):
            all_keys: Set[str] = set()
            for item in sanitized:
                all_keys.update(item.keys())
            if all_keys:
                key_order = sorted(all_keys)
                is_rel_batch = bool(all_keys & _REL_BATCH_KEYS)
                rows = []
                seen: Optional[Set[str]] = set() if not is_rel_batch else None
                for item in sanitized:
                    row = {k: item.get(k) for k in key_order}
                    for int_key in _INT_KEYS:
                        if int_key in row and row[int_key] is None:
                            row[int_key] = -1
                    if seen is not None:
                        row_key = json.dumps(row, sort_keys=True, default=str)
                        if row_key in seen:
                            continue
                        seen.add(row_key)
                    rows.append(row)
                return rows
        return sanitized
    if isinstance(v, dict):
        return {k: _sanitize_value(val) for k, val in v.items()}
    return v


def _refuse_conflicting_rows(rows: List[Dict[str, Any]], key: Tuple[str, ...], values: Tuple[str, ...]) -> None:
    """FalkorDB: rows of one UNWIND that MERGE one relationship and SET it to different values leave the value of
    a row FalkorDB's MERGE picks by its own record order (by experiment: not the last row; and cgc's index on a
    real tree kept another row than an isolated run of the same statement did): not modelled, refused."""
    seen: Dict[Tuple[Any, ...], Tuple[Any, ...]] = {}
    for row in rows:
        k = tuple(row.get(name) for name in key)
        v = tuple(row.get(name) for name in values)
        if seen.setdefault(k, v) != v:
            raise NotReplicable(f"FalkorDB: one statement's rows set the relationship {k} to different values")


def _plain(v: Any) -> Any:
    """A parameter as the neo4j and falkordb drivers send it: tuples as lists."""
    if isinstance(v, (tuple, list)):
        return [_plain(i) for i in v]
    if isinstance(v, dict):
        return {k: _plain(val) for k, val in v.items()}
    return v


def _row_uid(label: str, item: Dict[str, Any], fixed: Dict[str, Any], parts: List[str]) -> str:
    """_translate_query 1.5b: the uid of an UNWIND row (`fixed`: the parts given as query parameters)."""
    out = []
    for part in parts:
        if part in fixed:
            val = fixed[part]
            out.append(str(val) if val is not None else f"__missing_{part}")
            continue
        val = item.get(part)
        if val is not None and not (part in _INT_KEYS and val == -1):
            out.append(str(val))
        else:
            row_hash = hashlib.md5(str(sorted([(k, v) for k, v in item.items() if k != "uid"])).encode()).hexdigest()[:8]
            out.append(f"__fallback_{row_hash}")
    return "".join(out)


# ---------------------------------------------------------------------------------------------------------------
# The in-memory graph.

NodeId = Tuple[str, Any]  # (label, primary key value)


@dataclass
class GraphRows:
    """What build_graph returns. nodes[label] is {primary key value: properties} (properties include the key; on
    KùzuDB a positional label's key is cgc's uid). edges[type] is {(from id, to id, merge key): properties} in the
    order cgc first wrote them; an id is (label, primary key value); the merge key is the tuple of the
    properties cgc's MERGE pattern names (empty for most types)."""
    profile: Profile
    nodes: Dict[str, Dict[Any, Dict[str, Any]]] = field(default_factory=dict)
    edges: Dict[str, Dict[Tuple[NodeId, NodeId, Tuple[Any, ...]], Dict[str, Any]]] = field(default_factory=dict)
    _by_name: Dict[Tuple[str, Any], List[Any]] = field(default_factory=dict)
    # The same nodes by (label, name, path), each with its place in _by_name's list (a MATCH by name and path
    # reads only these: common names such as `__init__` have thousands of nodes, one scan each otherwise).
    _by_name_path: Dict[Tuple[str, Any, Any], List[Any]] = field(default_factory=dict)
    _name_seq: Dict[Tuple[str, Any], int] = field(default_factory=dict)
    _name_count: Iterator[int] = field(default_factory=itertools.count)

    # -- nodes
    def node(self, nid: NodeId) -> Optional[Dict[str, Any]]:
        return self.nodes.get(nid[0], {}).get(nid[1])

    def merge_node(self, label: str, key: Any, key_props: Optional[Dict[str, Any]] = None) -> Tuple[NodeId, Dict[str, Any]]:
        """MERGE (n:label {key}): key_props are the pattern's properties where the key is not one property."""
        if key is None or (key_props is not None and any(v is None for v in key_props.values())):
            raise NotReplicable(f"a {label} MERGE with a NULL key")
        table = self.nodes.setdefault(label, {})
        props = table.get(key)
        if props is None:
            props = table[key] = dict(key_props) if key_props is not None else {self.profile.primary_keys.get(label, "uid"): key}
            if "name" in props:
                self._index_name(label, key, props["name"], props.get("path"))
        return (label, key), props

    def _index_name(self, label: str, key: Any, name: Any, path: Any) -> None:
        self._by_name.setdefault((label, name), []).append(key)
        self._by_name_path.setdefault((label, name, path), []).append(key)
        self._name_seq[(label, key)] = next(self._name_count)

    def _unindex_name(self, label: str, key: Any, props: Dict[str, Any]) -> None:
        self._by_name[(label, props["name"])].remove(key)
        self._by_name_path[(label, props["name"], props.get("path"))].remove(key)

    def set(self, nid: NodeId, prop: str, value: Any) -> None:
        label, key = nid
        if self.profile.typed:
            columns = self.profile.columns(label)
            if columns is not None and prop not in columns:
                raise NotReplicable(f"SET {label}.{prop}: no such column")
            check_type(f"{label}.{prop}", columns[prop] if columns else None, value)
        props = self.nodes[label][key]
        if value is None and not self.profile.typed:  # a SET of NULL removes the property
            if prop == "name" and "name" in props:
                self._unindex_name(label, key, props)
            elif prop == "path" and "name" in props:
                self._move_path(label, key, props, None)
            props.pop(prop, None)
            return
        if prop == "name" and props.get("name") != value:
            if "name" in props:
                self._unindex_name(label, key, props)
            self._index_name(label, key, value, props.get("path"))
        elif prop == "path" and "name" in props and props.get("path") != value:
            self._move_path(label, key, props, value)
        props[prop] = value

    def _move_path(self, label: str, key: Any, props: Dict[str, Any], path: Any) -> None:
        """A named node's path changes: its (name, path) entry moves; its place in _by_name stays."""
        self._by_name_path[(label, props["name"], props.get("path"))].remove(key)
        self._by_name_path.setdefault((label, props["name"], path), []).append(key)

    def match(self, label: str, **where: Any) -> List[NodeId]:
        """MATCH (n:label {where}): a NULL in the pattern matches nothing; a property the table lacks is a binder
        exception (raised as _Binder)."""
        if self.profile.typed:
            columns = self.profile.columns(label)
            if columns is None:
                raise _Binder(label)
            for prop in where:
                if prop not in columns:
                    raise _Binder(f"{label}.{prop}")
        if any(v is None for v in where.values()):
            return []
        table = self.nodes.get(label, {})
        if "name" in where and "path" in where:
            found = self._by_name_path.get((label, where["name"], where["path"]), ())
            seq = self._name_seq
            keys = sorted(found, key=lambda k: seq[(label, k)]) if len(found) > 1 else list(found)
        elif "name" in where:
            keys = list(self._by_name.get((label, where["name"]), ()))
        elif self.profile.primary_keys.get(label) in where:
            pk = where[self.profile.primary_keys[label]]
            keys = [pk] if pk in table else []
        else:
            keys = list(table)
        return [(label, k) for k in keys if all(_equal(table[k].get(p), v) for p, v in where.items())]

    def populated(self, label: str) -> bool:
        return bool(self.nodes.get(label))

    # -- edges
    def merge_edge(self, rel: str, a: NodeId, b: NodeId, key: Tuple[Tuple[str, Any], ...] = ()) -> Dict[str, Any]:
        if not self.profile.has_pair(rel, a[0], b[0]):
            raise _Binder(f"{rel} {a[0]}->{b[0]}")
        if any(v is None for _, v in key):
            raise NotReplicable(f"a {rel} MERGE with a NULL in its key {key}")
        table = self.edges.setdefault(rel, {})
        ident = (a, b, tuple(v for _, v in key))
        props = table.get(ident)
        if props is None:
            props = table[ident] = {}
            for k, v in key:
                self.set_edge(rel, props, k, v)
        return props

    def set_edge(self, rel: str, props: Dict[str, Any], prop: str, value: Any) -> None:
        if not self.profile.typed:
            if value is None:
                props.pop(prop, None)
            else:
                props[prop] = value
            return
        columns = self.profile.rel_tables[rel][1]
        if prop not in columns:
            raise _Binder(f"{rel}.{prop}")
        check_type(f"{rel}.{prop}", columns[prop], value)
        props[prop] = value


class _Binder(Exception):
    """KùzuDB's binder exception: cgc's writer skips the statement (or the group)."""


def _equal(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return False
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    return a == b


def check_type(where: str, kind: Optional[str], value: Any) -> None:
    """Refuses a value cgc would have had KùzuDB cast (or reject): only values of the column's own type are modelled."""
    if value is None or kind is None:
        return
    ok = {
        "STRING": lambda v: isinstance(v, str),
        "INT64": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "BOOLEAN": lambda v: isinstance(v, bool),
        "DOUBLE": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "STRING[]": lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v),
    }.get(kind)
    if ok is None or not ok(value):
        raise NotReplicable(f"{where}: a {type(value).__name__} value for a {kind} column ({str(value)[:80]!r})")


# ---------------------------------------------------------------------------------------------------------------
# The replay.


def refusal(parsed: Sequence[Dict[str, Any]], *, maven_data: Any = None, gradle_data: Any = None,
            mybatis_batch: Any = None) -> Optional[str]:
    """Why this tree's full index cannot be replayed (None when it can, as far as can be told before replaying)."""
    for fd in parsed:
        lang = fd.get("lang")
        if lang in REFUSED_LANGUAGES:
            return f"{fd.get('path')}: language {lang} is refused"
        if fd.get("orm_mappings"):
            return f"{fd.get('path')}: ORM mappings (DbTable MERGEs) are not replicated"
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
    """
    repo = Path(repo_root)
    why = refusal(file_data, maven_data=maven_data, gradle_data=gradle_data, mybatis_batch=mybatis_batch)
    if why:
        raise NotReplicable(why)
    g = GraphRows(profile)
    w = _Writer(g, normalize)
    repo_str = normalize(repo)
    w.add_repository(repo_str, repo.resolve().name, is_dependency, commit_hash,
                     indexed_at or datetime.now(timezone.utc).isoformat())
    ordered = sorted(file_data, key=lambda d: str(d.get("path") or ""))
    for fd in ordered:
        if "error" not in fd:
            w.add_file(fd, repo_str)
        elif not fd.get("unsupported"):
            w.add_minimal_file(fd["path"], repo_str, repo.resolve().name, is_dependency)
    parsed = [fd for fd in ordered if "error" not in fd]
    if csharp_files is None:
        csharp_files = [fd for fd in parsed if fd.get("lang") == "c_sharp"]
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
    w.spring(parsed)
    return g


class _Writer:
    def __init__(self, g: GraphRows, normalize: Callable[[Any], str]):
        self.g = g
        self.p = g.profile
        self.normalize = normalize
        self.sanitize: Callable[[Any], Any] = _sanitize_value if self.p.kuzu_sanitize else _plain

    # -- add_repository_to_graph / add_minimal_file_node / add_file_to_graph

    def add_repository(self, path: str, name: str, is_dependency: bool, commit_hash: Optional[str], indexed_at: str) -> None:
        nid, _ = self.g.merge_node("Repository", path)
        self.g.set(nid, "name", name)
        self.g.set(nid, "is_dependency", is_dependency)
        self.g.set(nid, "indexed_at", indexed_at)
        if commit_hash:
            self.g.set(nid, "commit_hash", commit_hash)

    def _directories(self, file_path_str: str, repo_str: str) -> NodeId:
        try:
            rel = Path(file_path_str).relative_to(Path(repo_str))
        except ValueError:
            rel = Path(Path(file_path_str).name)
        parent = ("Repository", repo_str)
        parent_path = repo_str
        for part in rel.parts[:-1]:
            current = self.normalize(Path(parent_path) / part)
            if self.g.node(parent) is None:
                parent = None  # type: ignore[assignment]
            if parent is not None:
                nid, _ = self.g.merge_node("Directory", current)
                self.g.set(nid, "name", part)
                self.g.merge_edge("CONTAINS", parent, nid)
            parent_path = current
            parent = ("Directory", current)
        return parent

    def add_minimal_file(self, file_path: Any, repo_str: str, repo_name: str, is_dependency: bool) -> None:
        file_path_str = self.normalize(file_path)
        rid, _ = self.g.merge_node("Repository", repo_str)
        self.g.set(rid, "name", repo_name)
        fid, _ = self.g.merge_node("File", file_path_str)
        self.g.set(fid, "name", Path(file_path).name)
        self.g.set(fid, "is_dependency", is_dependency)
        parent = self._directories(file_path_str, repo_str)
        if self.g.node(parent) is not None:
            self.g.merge_edge("CONTAINS", parent, fid)

    def add_file(self, fd: Dict[str, Any], repo_str: str) -> None:
        g = self.g
        fps = self.normalize(fd["path"])
        is_dependency = fd.get("is_dependency", False)
        lang = fd.get("lang")
        try:
            relative_path = Path(fps).relative_to(Path(repo_str)).as_posix()
        except ValueError:
            relative_path = Path(fps).name
        fid, _ = g.merge_node("File", fps)
        g.set(fid, "name", Path(fps).name)
        g.set(fid, "relative_path", relative_path)
        g.set(fid, "is_dependency", is_dependency)
        g.set(fid, "language", lang)
        parent = self._directories(fps, repo_str)
        if g.node(parent) is not None:
            g.merge_edge("CONTAINS", parent, fid)

        params_batch: List[Dict[str, Any]] = []
        class_fn_batch: List[Dict[str, Any]] = []
        enum_member_batch: List[Dict[str, Any]] = []
        nested_fn_batch: List[Dict[str, Any]] = []
        for key, label in _ITEM_MAPPINGS:
            item_list = fd.get(key, [])
            if not item_list:
                continue
            keyed = label not in _NAME_ONLY_MERGE_LABELS
            if label in _COALESCE_SAME_KEY_LABELS:
                item_list = _coalesce_same_key_items(item_list)
            occurrences = _assign_occurrence_indices(item_list)
            batch: List[Dict[str, Any]] = []
            for occ, item in zip(occurrences, item_list):
                row = dict(item)
                row["path"] = fps
                if keyed:
                    row["occurrence_index"] = occ
                if label != "Module":
                    row.setdefault("is_dependency", is_dependency)
                if label == "Function" and "cyclomatic_complexity" not in row:
                    row["cyclomatic_complexity"] = 1
                batch.append(coerce_props(row))
                if label == "EnumMember":
                    enum_member_batch.append({"class_name": item.get("enum_name"),
                                              "class_line": item.get("enum_line_number", -1),
                                              "member_name": item["name"]})
                if label == "Function":
                    for arg_name in item.get("args", []):
                        params_batch.append({"func_name": item["name"], "line_number": item["line_number"],
                                             "occurrence_index": occ, "arg_name": arg_name})
                    if item.get("class_context"):
                        class_fn_batch.append({
                            "class_name": item["class_context"],
                            "class_line": item.get("class_context_line", -1) if item.get("class_context_line") is not None else -1,
                            "func_name": item["name"], "func_line": item["line_number"]})
                    if item.get("context_type") in _FUNCTION_CONTEXT_TYPES:
                        outer_ctx = item.get("context")
                        is_seq = isinstance(outer_ctx, (tuple, list)) and outer_ctx
                        outer_name = outer_ctx[0] if is_seq else outer_ctx
                        if is_seq and len(outer_ctx) > 2 and isinstance(outer_ctx[2], int):
                            outer_line = outer_ctx[2]
                        else:
                            raw_line = item.get("context_line", -1)
                            outer_line = raw_line if isinstance(raw_line, int) else -1
                        nested_fn_batch.append({"outer": outer_name, "outer_line": outer_line,
                                                "inner_name": item["name"], "inner_line": item["line_number"]})
            if batch:
                batch = _normalize_batch_types(batch)
            rows = self.sanitize(batch)
            self._merge_items(label, keyed, rows, fps, fid)

        if params_batch:
            seen: Set[Tuple[Any, ...]] = set()
            unique = []
            for p in params_batch:
                k = (p["func_name"], p["line_number"], p["occurrence_index"], p["arg_name"])
                if k not in seen:
                    seen.add(k)
                    unique.append(p)
            for row in self.sanitize(unique):  # per-row fallback (node MERGE with a relationship)
                for fn in g.match("Function", name=row["func_name"], path=fps, line_number=row["line_number"],
                                  occurrence_index=row["occurrence_index"]):
                    uid_vals = [row["arg_name"], fps, row["line_number"]]
                    if any(v is None for v in uid_vals):
                        raise NotReplicable("a Parameter without its uid parts (cgc drops the row after a retry)")
                    if not isinstance(row["arg_name"], str):
                        raise NotReplicable(f"a Parameter name that is not a string: {row['arg_name']!r}")
                    if self.p.uid_parts:
                        pid, _ = g.merge_node("Parameter", "".join(str(v) for v in uid_vals))
                    else:
                        pid, _ = g.merge_node("Parameter", tuple(uid_vals), dict(zip(_PARAMETER_KEY, uid_vals)))
                    g.set(pid, "name", row["arg_name"])
                    g.set(pid, "path", fps)
                    g.set(pid, "function_line_number", row["line_number"])
                    g.merge_edge("HAS_PARAMETER", fn, pid)

        if enum_member_batch:
            rows = self.sanitize(enum_member_batch)
            for label in ("Class", "Enum"):
                self._guarded(lambda label=label: [
                    self._edges("CONTAINS", [c for c in g.match(label, name=row["class_name"], path=fps)
                                             if _line_ok(row["class_line"], g.node(c))],
                                g.match("EnumMember", name=row["member_name"], path=fps), batch_check=(label, "EnumMember"))
                    for row in rows])

        if class_fn_batch:
            rows = self.sanitize(class_fn_batch)
            for label in ("Class", "Module", "Interface", "Struct", "Record", "Trait", "Object", "Mixin"):
                self._guarded(lambda label=label: [
                    self._edges("CONTAINS", [c for c in g.match(label, name=row["class_name"], path=fps)
                                             if _line_ok(row["class_line"], g.node(c))],
                                g.match("Function", name=row["func_name"], path=fps, line_number=row["func_line"]),
                                batch_check=(label, "Function"))
                    for row in rows])

        if nested_fn_batch:
            for row in self.sanitize(nested_fn_batch):
                outers = [o for o in g.match("Function", name=row["outer"], path=fps) if _line_ok(row["outer_line"], g.node(o))]
                if outers:
                    self._edges("CONTAINS", outers, g.match("Function", name=row["inner_name"], path=fps, line_number=row["inner_line"]))

        js_imports, other_imports = [], []
        for imp in fd.get("imports", []):
            if lang in {"javascript", "typescript", "tsx"}:
                module_name = imp.get("source")
                if module_name:
                    js_imports.append({"module_name": module_name, "imported_name": imp.get("name", "*"),
                                       "alias": imp.get("alias") or "", "line_number": imp.get("line_number") or 0,
                                       "lang": imp.get("lang") or lang})
            else:
                if lang == "python" and imp.get("source"):
                    module_name = imp.get("source")
                else:
                    module_name = imp.get("name") or imp.get("source") or imp.get("full_import_name")
                if not module_name:
                    continue
                full_import_name = imp.get("full_import_name") or imp.get("source") or module_name
                other_imports.append({"name": module_name, "full_import_name": full_import_name,
                                      "imported_name": imp.get("imported_name") or imp.get("name") or module_name,
                                      "alias": imp.get("alias"), "line_number": imp.get("line_number") or 0,
                                      "lang": imp.get("lang") or lang})
        if js_imports:
            rows = self.sanitize(js_imports)
            if self.p.batch_reads_before:
                _refuse_conflicting_rows(rows, ("module_name", "line_number"), ("imported_name", "alias", "lang"))
            for row in rows:  # per-row fallback (KùzuDB); one statement elsewhere
                mid, _ = g.merge_node("Module", row["module_name"])
                e = g.merge_edge("IMPORTS", fid, mid, (("line_number", row["line_number"]),))
                g.set_edge("IMPORTS", e, "imported_name", row["imported_name"])
                g.set_edge("IMPORTS", e, "alias", row["alias"])
                g.set_edge("IMPORTS", e, "lang", row["lang"])
        if other_imports:
            rows = self.sanitize(sort_import_rows_for_metadata(other_imports))
            before: Dict[Any, Tuple[Any, Any]] = {}
            if self.p.batch_reads_before:  # every row's coalesce reads the value before the statement
                for row in rows:
                    m = g.node(("Module", row["name"]))
                    before.setdefault(row["name"], (m.get("lang"), m.get("full_import_name")) if m else (None, None))
            edge_rows = rows
            if self.p.batch_reads_before:
                _refuse_conflicting_rows(rows, ("name", "line_number", "imported_name"), ("alias", "full_import_name", "lang"))
            for row in rows:  # per-row fallback (KùzuDB); one statement elsewhere
                mid, m = g.merge_node("Module", row["name"])
                lang_was, full_was = before[row["name"]] if self.p.batch_reads_before else (m.get("lang"), m.get("full_import_name"))
                g.set(mid, "lang", lang_was if lang_was is not None else row["lang"])
                g.set(mid, "full_import_name", full_was if full_was is not None else row["full_import_name"])
            for row in edge_rows:
                mid = ("Module", row["name"])
                e = g.merge_edge("IMPORTS", fid, mid, (("line_number", row["line_number"]), ("imported_name", row["imported_name"])))
                g.set_edge("IMPORTS", e, "alias", row["alias"] if row["alias"] is not None else "")
                g.set_edge("IMPORTS", e, "full_import_name", row["full_import_name"])
                g.set_edge("IMPORTS", e, "lang", row["lang"])
        inclusions = fd.get("module_inclusions", [])
        if inclusions:
            for row in self.sanitize([{"class_name": i["class"], "module_name": i["module"]} for i in inclusions]):
                classes = g.match("Class", name=row["class_name"], path=fps)
                for c in classes:
                    mid, _ = g.merge_node("Module", row["module_name"])
                    g.merge_edge("INCLUDES", c, mid)

    def _merge_items(self, label: str, keyed: bool, rows: List[Dict[str, Any]], fps: str, fid: NodeId) -> None:
        """`UNWIND $batch AS row MERGE (n:Label {key}) SET n += row`, then the File->item CONTAINS batch."""
        g = self.g
        if not rows:
            return
        if not self.p.typed:
            for row in rows:  # MERGE (n:Label {pattern}) SET n += row: each row's own keys
                if keyed:
                    key_props = {"name": row.get("name"), "path": fps, "line_number": row.get("line_number"),
                                 "occurrence_index": row.get("occurrence_index")}
                    nid, _ = g.merge_node(label, tuple(key_props[k] for k in _POSITIONAL_KEY), key_props)
                else:
                    nid, _ = g.merge_node(label, row.get("name"))
                for k, v in row.items():
                    g.set(nid, k, v)
        pk = self.p.primary_keys.get(label, "uid")
        allowed = self.p.set_allowed.get(label)
        sample = rows[0]
        set_keys = [k for k in sample if k not in ("uid", pk) and (not allowed or k in allowed)]
        parts = self.p.uid_parts.get(label) if keyed else None
        for row in rows if self.p.typed else ():
            if parts is not None:
                key = _row_uid(label, row, {"path": fps}, parts)
                displaced = [("name", row.get("name")), ("path", fps), ("line_number", row.get("line_number")),
                             ("occurrence_index", row.get("occurrence_index"))]
            else:
                key = row.get("name")
                displaced = []
            if key is not None and not isinstance(key, str):
                raise NotReplicable(f"a {label} key that is not a string: {key!r}")
            nid, _ = g.merge_node(label, key)
            for prop, value in displaced:
                g.set(nid, prop, value)
            for k in set_keys:
                g.set(nid, k, row.get(k))
        # The CONTAINS batch (relationship only: batched).
        for row in rows:
            if keyed:
                targets = g.match(label, name=row.get("name"), path=fps, line_number=row.get("line_number"),
                                  occurrence_index=row.get("occurrence_index"))
            else:
                targets = g.match(label, name=row.get("name"))
            self._edges("CONTAINS", [fid], targets)

    def _edges(self, rel: str, sources: Iterable[NodeId], targets: Iterable[NodeId],
               batch_check: Optional[Tuple[str, str]] = None) -> None:
        if batch_check is not None and not self.p.has_pair(rel, *batch_check):
            raise _Binder(f"{rel} {batch_check}")
        targets = list(targets)
        for a in sources:
            for b in targets:
                self.g.merge_edge(rel, a, b)

    @staticmethod
    def _guarded(run: Callable[[], Any]) -> None:
        """A statement (or a batch) whose binder exception cgc's writer swallows."""
        try:
            run()
        except _Binder:
            pass

    # -- write_inheritance_links

    def inheritance(self, batch: List[Dict[str, Any]], csharp_files: List[Dict[str, Any]]) -> None:
        g = self.g
        seen: Set[Tuple[Any, ...]] = set()
        deduped = []
        for r in batch:
            key = (r.get("child_name"), r.get("path"), r.get("parent_name"), r.get("resolved_parent_file_path"))
            if key not in seen:
                seen.add(key)
                deduped.append(r)
        internal = [r for r in deduped if r.get("resolved_parent_file_path") != EXTERNAL]
        external = [r for r in deduped if r.get("resolved_parent_file_path") == EXTERNAL]
        populated = {label for label in _ITEM_LABELS if g.populated(label)}
        internal_rows = self.sanitize(internal)

        def run_internal(rows: List[Dict[str, Any]], cl: str, pl: str) -> None:
            if not self.p.has_pair("INHERITS", cl, pl) or not self.p.has_label(cl) or not self.p.has_label(pl):
                return  # binder exception: the group is skipped
            for row in rows:
                for child in g.match(cl, name=row.get("child_name"), path=row.get("path")):
                    for parent in g.match(pl, name=row.get("parent_name"), path=row.get("resolved_parent_file_path")):
                        e = g.merge_edge("INHERITS", child, parent)
                        g.set_edge("INHERITS", e, "confidence_label", row.get("confidence_label") if row.get("confidence_label") is not None else "EXTRACTED")

        pair_groups: Dict[Tuple[str, str], List[Dict[str, Any]]] = {}
        child_only: Dict[str, List[Dict[str, Any]]] = {}
        legacy: List[Dict[str, Any]] = []
        for row in internal_rows:
            cl, pl = row.get("child_label"), row.get("parent_label")
            if cl and pl:
                pair_groups.setdefault((cl, pl), []).append(row)
            elif cl:
                child_only.setdefault(cl, []).append(row)
            else:
                legacy.append(row)
        # Each group was its own UNWIND over its rows (sanitised per chunk: same rows, as the batch is uniform).
        for (cl, pl), rows in pair_groups.items():
            run_internal(rows, cl, pl)
        for cl, rows in child_only.items():
            for pl in _ITEM_LABELS:
                if pl in populated:
                    run_internal(rows, cl, pl)
        if legacy:
            for cl in _ITEM_LABELS:
                if cl not in populated:
                    continue
                for pl in _ITEM_LABELS:
                    if pl in populated:
                        run_internal(legacy, cl, pl)

        def run_external(rows: List[Dict[str, Any]], cl: str) -> None:
            if not self.p.has_pair("INHERITS", cl, "ExternalClass") or not self.p.has_label(cl):
                return
            for row in rows:  # per-row fallback
                for child in g.match(cl, name=row.get("child_name"), path=row.get("path")):
                    pid, _ = g.merge_node("ExternalClass", row.get("parent_name"))
                    e = g.merge_edge("INHERITS", child, pid)
                    g.set_edge("INHERITS", e, "confidence_label", row.get("confidence_label") if row.get("confidence_label") is not None else "INFERRED")

        ext_by_child: Dict[str, List[Dict[str, Any]]] = {}
        ext_legacy: List[Dict[str, Any]] = []
        for row in self.sanitize(external):
            cl = row.get("child_label")
            if cl:
                ext_by_child.setdefault(cl, []).append(row)
            else:
                ext_legacy.append(row)
        for cl, rows in ext_by_child.items():
            run_external(rows, cl)
        if ext_legacy:
            for cl in _ITEM_LABELS:
                if cl in populated:
                    run_external(ext_legacy, cl)

        for fd in csharp_files:
            self._csharp(fd)

    def _csharp(self, fd: Dict[str, Any]) -> None:
        """writer._create_csharp_inheritance_and_interfaces."""
        g = self.g
        if fd.get("lang") != "c_sharp":
            return
        path = self.normalize(fd["path"])
        for list_name, type_label in (("classes", "Class"), ("structs", "Struct"), ("records", "Record"), ("interfaces", "Interface")):
            for item in fd.get(list_name, []):
                if not item.get("bases"):
                    continue
                for base_str in item["bases"]:
                    base_name = base_str.split("<")[0].strip()
                    is_interface = any(i["name"] == base_name for i in fd.get("interfaces", []))
                    base_index = item["bases"].index(base_str)
                    if is_interface or (base_index > 0 and type_label == "Class"):
                        for clab in ("Class", "Struct", "Record", "Mixin", "Extension"):
                            self._guarded(lambda clab=clab: self._edges(
                                "IMPLEMENTS", g.match(clab, name=item["name"], path=path),
                                g.match("Interface", name=base_name), batch_check=(clab, "Interface")))
                    else:
                        labels = ("Class", "Record", "Interface", "Mixin", "Extension")
                        for clab in labels:
                            for plab in labels:
                                self._guarded(lambda clab=clab, plab=plab: self._edges(
                                    "INHERITS", g.match(clab, name=item["name"], path=path),
                                    g.match(plab, name=base_name), batch_check=(clab, plab)))

    # -- the one-row-per-statement link writers

    def simple_links(self, rel: str, batch: List[Dict[str, Any]], child_default: str, parent_default: str,
                     confidence_default: str) -> None:
        """write_implements_links / write_partial_of_links."""
        g = self.g
        for row in batch:
            cl = row.get("child_label", child_default)
            pl = row.get("parent_label", parent_default)

            def one() -> None:
                if not self.p.has_label(cl) or not self.p.has_label(pl):
                    raise _Binder(f"{cl} or {pl}")
                children = g.match(cl, name=row["child_name"], path=row["path"])
                parents = g.match(pl, name=row["parent_name"], path=row["resolved_parent_file_path"])
                if not self.p.has_pair(rel, cl, pl):
                    raise _Binder(rel)  # the MERGE over a pair the table lacks
                conf = row.get("confidence_label", "INFERRED")
                for a in children:
                    for b in parents:
                        e = g.merge_edge(rel, a, b)
                        g.set_edge(rel, e, "confidence_label", conf if conf is not None else confidence_default)

            self._guarded(one)

    def embeds(self, batch: List[Dict[str, Any]]) -> None:
        g = self.g
        for row in batch:
            for a in g.match("Struct", name=row["child_name"], path=row["path"]):
                for b in g.match("Struct", name=row["parent_name"], path=row["resolved_parent_file_path"]):
                    e = g.merge_edge("EMBEDS", a, b)
                    g.set_edge("EMBEDS", e, "line_number", row.get("line_number", 0))

    def companion(self, batch: List[Dict[str, Any]]) -> None:
        g = self.g
        for row in batch:
            for a in g.match("Object", name=row["companion_name"], path=row["companion_path"], line_number=row["companion_line"]):
                for b in g.match("Class", name=row["owner_name"], path=row["owner_path"], line_number=row["owner_line"]):
                    g.merge_edge("COMPANION_OF", a, b)

    def part_of(self, batch: List[Dict[str, Any]]) -> None:
        g = self.g
        for row in batch:
            self._edges("PART_OF", g.match("File", path=row["child_path"]), g.match("File", path=row["parent_path"]))

    def metaclass(self, batch: List[Dict[str, Any]]) -> None:
        g = self.g
        for row in batch:
            for a in g.match("Class", name=row["child_name"], path=row["path"]):
                for b in g.match("Class", name=row["parent_name"], path=row["resolved_parent_file_path"]):
                    e = g.merge_edge("METACLASS", a, b)
                    g.set_edge("METACLASS", e, "line_number", row.get("line_number", 0))
                    conf = row.get("confidence_label", "EXTRACTED")
                    g.set_edge("METACLASS", e, "confidence_label", conf if conf is not None else "EXTRACTED")

    def decorated(self, batch: List[Dict[str, Any]]) -> None:
        g = self.g
        for row in batch:
            ctx = row.get("decorated_context", "")
            for label in ("Function", "Class"):
                decorated = g.match(label, name=row["decorated_name"], path=row["decorated_path"], line_number=row["decorated_line"])
                if label == "Function":
                    decorated = [d for d in decorated if ctx == "" or (ctx is not None and _equal(g.node(d).get("context"), ctx))]
                decorators = g.match("Function", name=row["decorator_name"], path=row["decorator_path"])
                made = False
                for a in decorated:
                    for b in decorators:
                        e = g.merge_edge("DECORATED_BY", a, b)
                        g.set_edge("DECORATED_BY", e, "line_number", row.get("line_number", row["decorated_line"]))
                        made = True
                if made:
                    break

    def binds(self, batch: List[Dict[str, Any]]) -> None:
        g = self.g
        for row in batch:
            for sl, tl in (("Interface", "Class"), ("Class", "Class"), ("Interface", "Interface")):
                made = False
                for a in g.match(sl, name=row["source_name"], path=row["source_path"]):
                    for b in g.match(tl, name=row["target_name"], path=row["target_path"]):
                        e = g.merge_edge("BINDS", a, b)
                        g.set_edge("BINDS", e, "line_number", row.get("line_number"))
                        g.set_edge("BINDS", e, "provider", row.get("provider"))
                        conf = row.get("confidence_label")
                        g.set_edge("BINDS", e, "confidence_label", conf if conf is not None else "EXTRACTED")
                        made = True
                if made:
                    break

    def previews(self, batch: List[Dict[str, Any]]) -> None:
        g = self.g
        for row in batch:
            for a in g.match("Function", name=row["preview_name"], path=row["preview_path"], line_number=row["preview_line"]):
                for b in g.match("Function", name=row["composable_name"], path=row["composable_path"]):
                    e = g.merge_edge("PREVIEWS", a, b)
                    g.set_edge("PREVIEWS", e, "line_number", row.get("line_number", row["preview_line"]))

    # -- write_function_call_groups

    def calls(self, groups: List[List[Dict[str, Any]]]) -> None:
        names = ["fn_to_fn", "fn_to_class", "fn_to_interface", "fn_to_object", "file_to_fn", "file_to_class",
                 "file_to_interface", "file_to_object", "fn_to_param", "fn_to_file"]
        by_name = dict(zip(names, list(groups) + [[]] * (10 - len(groups))))
        order = [("fn_to_fn", "Function", "Function"), ("fn_to_class", "Function", "Class"),
                 ("fn_to_interface", "Function", "Interface"), ("fn_to_object", "Function", "Object"),
                 ("fn_to_param", "Function", "Parameter"), ("fn_to_file", "Function", "File"),
                 ("file_to_fn", "File", "Function"), ("file_to_class", "File", "Class"),
                 ("file_to_interface", "File", "Interface"), ("file_to_object", "File", "Object")]
        for group, caller_label, called_label in order:
            batch_data = by_name[group] or []
            if not batch_data:
                continue
            sanitized = []
            for row in batch_data:
                if not isinstance(row, dict) or not row.get("caller_file_path") or not row.get("called_name"):
                    continue
                if row.get("called_line_number") is False or row.get("called_context") is False:
                    continue
                row = dict(row)
                if row.get("confidence") is None:
                    row["confidence"] = 0.0
                if row.get("resolution_tier") is None:
                    row["resolution_tier"] = -1
                if row.get("confidence_label") is None:
                    row["confidence_label"] = "EXTRACTED"
                val = row.get("called_line_number")
                if "called_line_number" not in row or not isinstance(val, int):
                    try:
                        row["called_line_number"] = int(val or 0)
                    except (ValueError, TypeError):
                        row["called_line_number"] = 0
                if row.get("called_context") is None:
                    row["called_context"] = ""
                if row.get("line_number") is None:
                    row["line_number"] = 0
                raw_args = row.get("args") or []
                row["args_key"] = json.dumps(raw_args, sort_keys=False) if isinstance(raw_args, list) else str(raw_args)
                sanitized.append(row)
            if not sanitized:
                continue
            seen: Set[Tuple[Any, ...]] = set()
            unique = []
            for row in sanitized:
                k = (row.get("caller_name", ""), row.get("caller_file_path", ""), row.get("caller_line_number", 0),
                     row.get("called_name", ""), row.get("called_file_path", ""), row.get("called_line_number", 0),
                     row.get("called_context", ""), row.get("line_number", 0), row.get("full_call_name", ""),
                     row.get("args_key", ""))
                if k not in seen:
                    seen.add(k)
                    unique.append(row)

            def tier(row: Dict[str, Any]) -> str:
                try:
                    t = int(row.get("resolution_tier"))
                except (TypeError, ValueError):
                    t = -1
                return "HEURISTIC_CALLS" if t >= 8 else "CALLS"

            for rel in ("CALLS", "HEURISTIC_CALLS"):
                rows = [r for r in unique if tier(r) == rel]
                for i in range(0, len(rows), 1000):
                    self._guarded(lambda chunk=rows[i:i + 1000], rel=rel: self._call_chunk(rel, caller_label, called_label, self.sanitize(chunk)))

    def _call_chunk(self, rel: str, caller_label: str, called_label: str, rows: List[Dict[str, Any]]) -> None:
        g = self.g
        columns = self.p.columns(called_label)
        line_predicate = called_label not in ("File", "Directory")
        if line_predicate and columns is not None and "line_number" not in columns:
            raise _Binder(f"{called_label}.line_number")
        if called_label == "Function":
            ctx_props = ["context", "class_context", "module_context"]
        elif called_label == "Variable":
            ctx_props = ["context"]
        else:
            ctx_props = []
        for p in ctx_props:
            if columns is not None and p not in columns:
                raise _Binder(f"{called_label}.{p}")
        if not self.p.has_pair(rel, caller_label, called_label):
            raise _Binder(rel)
        for row in rows:
            if caller_label == "File":
                callers = g.match("File", path=row.get("caller_file_path"))
            else:
                callers = g.match(caller_label, name=row.get("caller_name"), path=row.get("caller_file_path"),
                                  line_number=row.get("caller_line_number"))
            if not callers:
                continue
            called = []
            for c in g.match(called_label, name=row.get("called_name"), path=row.get("called_file_path")):
                node = g.node(c)
                if line_predicate:
                    cl = row.get("called_line_number")
                    if not (cl is not None and cl <= 0) and not _equal(node.get("line_number"), cl):
                        continue
                if ctx_props:
                    ctx = row.get("called_context")
                    if not (ctx == "" or ctx is None or any(_equal(node.get(p), ctx) for p in ctx_props)):
                        continue
                called.append(c)
            for a in callers:
                for b in called:
                    e = g.merge_edge(rel, a, b, (("line_number", row.get("line_number")),
                                                 ("full_call_name", row.get("full_call_name")),
                                                 ("args_key", row.get("args_key"))))
                    g.set_edge(rel, e, "args", row.get("args"))
                    g.set_edge(rel, e, "confidence", row.get("confidence"))
                    g.set_edge(rel, e, "resolution_tier", row.get("resolution_tier"))
                    g.set_edge(rel, e, "confidence_label", row.get("confidence_label"))

    # -- the post passes

    def cpp_class_functions(self, repo_str: str) -> None:
        """write_cpp_class_function_links (STARTS WITH the root without a slash, as cgc)."""
        g = self.g
        fns = [("Function", k) for k, n in g.nodes.get("Function", {}).items()
               if isinstance(n.get("path"), str) and n["path"].startswith(repo_str)
               and n.get("class_context") is not None and n["path"].endswith(_CPP_EXTS)]
        if not fns:
            return
        for clab in ("Class", "Struct", "Module"):
            if not self.p.has_pair("CONTAINS", clab, "Function"):
                continue
            for fn in fns:
                ctx = g.node(fn)["class_context"]
                for c in g.match(clab, name=ctx):
                    path = g.node(c).get("path")
                    if isinstance(path, str) and path.startswith(repo_str):
                        g.merge_edge("CONTAINS", c, fn)

    def spring(self, parsed: List[Dict[str, Any]]) -> None:
        """write_spring_inject_links and write_spring_endpoint_properties."""
        g = self.g
        injections = [i for fd in parsed for i in (fd.get("spring_injections") or [])]
        for row in self.sanitize(injections) if injections else []:
            for a in g.match("Class", name=row.get("injector_class"), path=row.get("injector_path")):
                for b in g.match("Class", name=row.get("injected_class")):
                    e = g.merge_edge("INJECTS", a, b)
                    g.set_edge("INJECTS", e, "field_name", row.get("field_name"))
                    g.set_edge("INJECTS", e, "inject_line", row.get("inject_line"))
                    g.set_edge("INJECTS", e, "confidence_label", "EXTRACTED")
        endpoints = [{"func_name": fn["name"], "path": fn["path"], "line_number": fn["line_number"],
                      "http_method": fn.get("http_method"), "http_path": fn.get("http_path")}
                     for fd in parsed for fn in fd.get("functions", []) if fn.get("http_method")]
        for row in self.sanitize(endpoints) if endpoints else []:
            for f in g.match("Function", name=row["func_name"], path=row["path"], line_number=row["line_number"]):
                g.set(f, "http_method", row["http_method"])
                g.set(f, "http_path", row["http_path"])


def _line_ok(wanted: Any, node: Optional[Dict[str, Any]]) -> bool:
    """`WHERE row.x_line < 0 OR n.line_number = row.x_line` (NULL is false)."""
    if wanted is None or node is None:
        return False
    if isinstance(wanted, (int, float)) and not isinstance(wanted, bool) and wanted < 0:
        return True
    return _equal(node.get("line_number"), wanted)
