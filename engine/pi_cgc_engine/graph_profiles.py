"""What each backend's adapter does to cgc's writer's statements (a Profile per backend): KùzuDB's schema,
keys and uids, and the schemaless FalkorDB and Neo4j; which languages the replay was proven on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

# Languages (cgc's file_data["lang"]) whose trees reached 0 differing lines against `cgc index --force`.
PROVEN_LANGUAGES = frozenset({"python", "javascript", "typescript", "go", "java"})
# Languages whose writes this module cannot replicate (none known: data-dependent cases raise NotReplicable).
REFUSED_LANGUAGES: frozenset = frozenset()


class NotReplicable(Exception):
    """The full index of this tree does something the replay does not model: use cgc's own index."""


class WriteFails(NotReplicable):
    """A statement of cgc's writer that the backend fails (a NUL character in a parameter FalkorDB reads as text).
    cgc's pipeline catches it per file (graph_rows.write_fails); anywhere else it is a refusal."""


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

ITEM_LABELS = ["Class", "Trait", "Interface", "Struct", "Enum", "Union", "Record", "Mixin", "Extension", "Module", "Object", "Variable"]


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
    params_as_text: bool = False

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
                   batch_reads_before=True, params_as_text=True)
FALKORDB_REMOTE = Profile("falkordb-remote", {}, CYPHER_PRIMARY_KEYS, {}, {}, {}, typed=False, kuzu_sanitize=False,
                          batch_reads_before=True, params_as_text=True)
NEO4J = Profile("neo4j", {}, CYPHER_PRIMARY_KEYS, {}, {}, {}, typed=False, kuzu_sanitize=False)
PROFILES = {p.name: p for p in (KUZU, FALKORDB, FALKORDB_REMOTE, NEO4J)}
# The MERGE pattern's properties of the labels keyed by more than one (schemaless profiles).
POSITIONAL_KEY = ("name", "path", "line_number", "occurrence_index")
PARAMETER_KEY = ("name", "path", "function_line_number")


# ---------------------------------------------------------------------------------------------------------------
# cgc's helpers, replicated (the function each mirrors is named).

# writer.py
NAME_ONLY_MERGE_LABELS = {"Module", "DbTable", "ExternalClass"}
