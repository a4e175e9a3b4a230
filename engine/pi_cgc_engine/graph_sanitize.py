"""cgc 0.6.13's writer helpers and parameter sanitising, replicated for the replay (each names the function it
mirrors)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

from .graph_profiles import NotReplicable, WriteFails

COALESCE_SAME_KEY_LABELS = {"Variable"}
FUNCTION_CONTEXT_TYPES = {
    "function_definition", "function_declaration", "function_expression", "arrow_function", "generator_function",
    "generator_function_declaration", "method_definition", "method_declaration", "constructor_declaration",
    "local_function_statement", "func_literal", "function_item", "method", "singleton_method", "lambda_expression",
}
ITEM_MAPPINGS = [("functions", "Function"), ("classes", "Class"), ("traits", "Trait"), ("variables", "Variable"),
                  ("interfaces", "Interface"), ("macros", "Macro"), ("structs", "Struct"), ("enums", "Enum"),
                  ("unions", "Union"), ("records", "Record"), ("properties", "Property"), ("mixins", "Mixin"),
                  ("extensions", "Extension"), ("modules", "Module"), ("objects", "Object"),
                  ("enum_members", "EnumMember")]
CPP_EXTS = (".cpp", ".cc", ".cxx", ".c++", ".C")
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


# The languages whose imports add_file_to_graph writes as IMPORTS rows only, with no Module metadata.
JS_IMPORT_LANGS = frozenset({"javascript", "typescript", "tsx"})


def module_metadata_row(imp: Dict[str, Any], lang: Any) -> Optional[Dict[str, Any]]:
    """One import's row of add_file_to_graph's Module batch (a file not in JS_IMPORT_LANGS), as cgc 0.6.13's
    writer builds it; None when the import names no module."""
    if lang == "python" and imp.get("source"):
        name = imp.get("source")
    else:
        name = imp.get("name") or imp.get("source") or imp.get("full_import_name")
    if not name:
        return None
    return {
        "name": name,
        "full_import_name": imp.get("full_import_name") or imp.get("source") or name,
        "imported_name": imp.get("imported_name") or imp.get("name") or name,
        "alias": imp.get("alias"),
        "line_number": imp.get("line_number") or 0,
        "lang": imp.get("lang") or lang,
    }


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


def coalesce_same_key_items(items: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
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


def assign_occurrence_indices(items: List[Dict[str, Any]]) -> List[int]:
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
        except Exception:  # as cgc
            s = str(v)
            return s[:MAX] if len(s) > MAX else s

    return {k: coerce(v) for k, v in props.items()}


def normalize_batch_types(batch: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
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
        dominant = max(counts, key=lambda name: counts[name]) if counts else "str"
        for b in batch:
            v = b.get(k)
            if dominant == "list":
                if isinstance(v, list):
                    b[k] = [str(x) for x in v]
                elif isinstance(v, str) and v:
                    try:
                        p = json.loads(v)
                        b[k] = [str(x) for x in p] if isinstance(p, list) and p else []
                    except Exception:
                        b[k] = [v]
                else:
                    b[k] = []
            elif dominant == "int":
                if v is None or v == "":
                    b[k] = 0
                elif not isinstance(v, int):
                    try:
                        b[k] = int(v)
                    except Exception:
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


def sanitize_value(v: Any) -> Any:
    """EmbeddedSessionWrapper._sanitize_value (KùzuDB's parameter sanitising)."""
    if isinstance(v, (tuple, set)):
        return [sanitize_value(i) for i in v]
    if isinstance(v, list):
        sanitized = [sanitize_value(i) for i in v]
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
        return {k: sanitize_value(val) for k, val in v.items()}
    return v


def refuse_conflicting_rows(rows: List[Dict[str, Any]], key: Tuple[str, ...], values: Tuple[str, ...]) -> None:
    """FalkorDB: rows of one UNWIND that MERGE one relationship and SET it to different values leave the value of
    a row FalkorDB's MERGE picks by its own record order (by experiment: not the last row; and cgc's index on a
    real tree kept another row than an isolated run of the same statement did): not modelled, refused."""
    seen: Dict[Tuple[Any, ...], Tuple[Any, ...]] = {}
    for row in rows:
        k = tuple(row.get(name) for name in key)
        v = tuple(row.get(name) for name in values)
        if seen.setdefault(k, v) != v:
            raise NotReplicable(f"FalkorDB: one statement's rows set the relationship {k} to different values")


def plain(v: Any) -> Any:
    """A parameter as the neo4j and falkordb drivers send it: tuples as lists."""
    if isinstance(v, (tuple, list)):
        return [plain(i) for i in v]
    if isinstance(v, dict):
        return {k: plain(val) for k, val in v.items()}
    return v


def plain_as_text(v: Any) -> Any:
    """plain, for a backend whose client writes the parameters into the query's text (FalkorDB's `CYPHER name=value`
    header): FalkorDB reads that text up to its first NUL character, so a statement whose parameters hold one fails
    there, as the replay's does (WriteFails)."""
    if isinstance(v, str):
        if "\x00" in v:
            raise WriteFails(f"a NUL character in a value FalkorDB reads as text ({v[:60]!r})")
        return v
    if isinstance(v, (tuple, list)):
        return [plain_as_text(i) for i in v]
    if isinstance(v, dict):
        return {plain_as_text(k): plain_as_text(val) for k, val in v.items()}
    return v


def row_uid(label: str, item: Dict[str, Any], fixed: Dict[str, Any], parts: List[str]) -> str:
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
