"""The replay of cgc 0.6.13's GraphWriter for a full index, statement by statement and in the pipeline's order,
against a GraphRows (graph_rows.build_graph drives it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from .graph_model import Binder, GraphRows, NodeId, equal
from .graph_profiles import ITEM_LABELS, NAME_ONLY_MERGE_LABELS, PARAMETER_KEY, POSITIONAL_KEY, NotReplicable
from .graph_sanitize import (
    COALESCE_SAME_KEY_LABELS,
    CPP_EXTS,
    EXTERNAL,
    FUNCTION_CONTEXT_TYPES,
    ITEM_MAPPINGS,
    JS_IMPORT_LANGS,
    assign_occurrence_indices,
    coalesce_same_key_items,
    coerce_props,
    module_metadata_row,
    normalize_batch_types,
    plain,
    plain_as_text,
    refuse_conflicting_rows,
    row_uid,
    sanitize_value,
    sort_import_rows_for_metadata,
)


def _call_relationship(row: Dict[str, Any]) -> str:
    """cgc's split of the call rows: tier 8 and above are heuristic."""
    try:
        tier = int(row.get("resolution_tier"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        tier = -1
    return "HEURISTIC_CALLS" if tier >= 8 else "CALLS"


# An IMPORTS relationship's key in cgc's MERGE, and the values its SET gives it: JavaScript-family rows, the others.
JS_IMPORT_EDGE = (("module_name", "line_number"), ("imported_name", "alias", "lang"))
OTHER_IMPORT_EDGE = (("name", "line_number", "imported_name"), ("alias", "full_import_name", "lang"))


def import_rows(fd: Dict[str, Any]) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """The rows of a file's two IMPORTS statements in cgc's add_file_to_graph: (JavaScript-family, the others)."""
    lang = fd.get("lang")
    js_imports, other_imports = [], []
    for imp in fd.get("imports", []):
        if lang in JS_IMPORT_LANGS:
            module_name = imp.get("source")
            if module_name:
                js_imports.append({"module_name": module_name, "imported_name": imp.get("name", "*"),
                                   "alias": imp.get("alias") or "", "line_number": imp.get("line_number") or 0,
                                   "lang": imp.get("lang") or lang})
        else:
            metadata = module_metadata_row(imp, lang)
            if metadata is not None:
                other_imports.append(metadata)
    return js_imports, other_imports


def import_conflict(fd: Dict[str, Any]) -> Optional[str]:
    """Where FalkorDB picks the row (batch_reads_before): why the replay of this file's IMPORTS statements refuses
    (None: it does not). The verdict of the replay's own check, on the rows as the driver sends them, found
    before anything is replayed (`import { a, b } from './x'` is one such statement: most JavaScript trees)."""
    for rows, edge in zip(import_rows(fd), (JS_IMPORT_EDGE, OTHER_IMPORT_EDGE)):
        try:
            refuse_conflicting_rows(plain(rows), *edge)
        except NotReplicable as error:
            return f"{fd.get('path')}: {error}"
    return None


class _ItemBatches:
    """What a file's item batches note for the batches add_file_to_graph writes after them."""

    def __init__(self) -> None:
        self.params: List[Dict[str, Any]] = []
        self.class_functions: List[Dict[str, Any]] = []
        self.enum_members: List[Dict[str, Any]] = []
        self.nested_functions: List[Dict[str, Any]] = []

    def note_function(self, item: Dict[str, Any], occ: Any) -> None:
        """A Function item's parameters, its class (a method) and its outer function (a nested one)."""
        for arg_name in item.get("args", []):
            self.params.append({"func_name": item["name"], "line_number": item["line_number"],
                                "occurrence_index": occ, "arg_name": arg_name})
        if item.get("class_context"):
            self.class_functions.append({
                "class_name": item["class_context"],
                "class_line": item.get("class_context_line", -1) if item.get("class_context_line") is not None else -1,
                "func_name": item["name"], "func_line": item["line_number"]})
        if item.get("context_type") in FUNCTION_CONTEXT_TYPES:
            outer_ctx: Any = item.get("context")  # a name, or (name, kind, line) where cgc gives its line
            is_seq = isinstance(outer_ctx, (tuple, list)) and outer_ctx
            outer_name = outer_ctx[0] if is_seq else outer_ctx
            if is_seq and len(outer_ctx) > 2 and isinstance(outer_ctx[2], int):
                outer_line = outer_ctx[2]
            else:
                raw_line = item.get("context_line", -1)
                outer_line = raw_line if isinstance(raw_line, int) else -1
            self.nested_functions.append({"outer": outer_name, "outer_line": outer_line,
                                          "inner_name": item["name"], "inner_line": item["line_number"]})


class Writer:
    def __init__(self, g: GraphRows, normalize: Callable[[Any], str]):
        self.g = g
        self.p = g.profile
        self.normalize = normalize
        self.sanitize: Callable[[Any], Any] = (sanitize_value if self.p.kuzu_sanitize
                                               else plain_as_text if self.p.params_as_text else plain)

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
        """add_file_to_graph: the File node and its folders, its items by label, then the batches cgc writes after
        them (parameters, enum members, methods, nested functions), its imports and module inclusions."""
        fps = self.normalize(fd["path"])
        fid = self._file_node(fd, fps, repo_str)
        batches = _ItemBatches()
        for key, label in ITEM_MAPPINGS:
            item_list = fd.get(key, [])
            if item_list:
                self._add_items(label, item_list, fd.get("is_dependency", False), fps, fid, batches)
        if batches.params:
            self._add_parameters(batches.params, fps)
        if batches.enum_members:
            self._link_enum_members(batches.enum_members, fps)
        if batches.class_functions:
            self._link_class_functions(batches.class_functions, fps)
        if batches.nested_functions:
            self._link_nested_functions(batches.nested_functions, fps)
        js_imports, other_imports = import_rows(fd)
        if js_imports:
            self._add_js_imports(js_imports, fid)
        if other_imports:
            self._add_other_imports(other_imports, fid)
        inclusions = fd.get("module_inclusions", [])
        if inclusions:
            self._add_inclusions(inclusions, fps)

    def _file_node(self, fd: Dict[str, Any], fps: str, repo_str: str) -> NodeId:
        """The File node, and the Directory chain that CONTAINS it."""
        g = self.g
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
        return fid

    def _add_items(self, label: str, item_list: List[Dict[str, Any]], is_dependency: Any, fps: str, fid: NodeId,
                   batches: "_ItemBatches") -> None:
        """One label's item batch (its nodes and the File's CONTAINS), noting what the later batches link."""
        keyed = label not in NAME_ONLY_MERGE_LABELS
        if label in COALESCE_SAME_KEY_LABELS:
            item_list = coalesce_same_key_items(item_list)
        occurrences = assign_occurrence_indices(item_list)
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
                batches.enum_members.append({"class_name": item.get("enum_name"),
                                             "class_line": item.get("enum_line_number", -1),
                                             "member_name": item["name"]})
            if label == "Function":
                batches.note_function(item, occ)
        if batch:
            batch = normalize_batch_types(batch)
        rows = self.sanitize(batch)
        self._merge_items(label, keyed, rows, fps, fid)

    def _add_parameters(self, params_batch: List[Dict[str, Any]], fps: str) -> None:
        """The functions' Parameter nodes and HAS_PARAMETER edges (duplicate rows once)."""
        g = self.g
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
                    pid, _ = g.merge_node("Parameter", tuple(uid_vals), dict(zip(PARAMETER_KEY, uid_vals)))
                g.set(pid, "name", row["arg_name"])
                g.set(pid, "path", fps)
                g.set(pid, "function_line_number", row["line_number"])
                g.merge_edge("HAS_PARAMETER", fn, pid)

    def _link_enum_members(self, enum_member_batch: List[Dict[str, Any]], fps: str) -> None:
        g = self.g
        rows = self.sanitize(enum_member_batch)
        for label in ("Class", "Enum"):
            def members() -> None:
                for row in rows:
                    self._edges("CONTAINS", [c for c in g.match(label, name=row["class_name"], path=fps)
                                             if _line_ok(row["class_line"], g.node(c))],
                                g.match("EnumMember", name=row["member_name"], path=fps), batch_check=(label, "EnumMember"))
            self._guarded(members)

    def _link_class_functions(self, class_fn_batch: List[Dict[str, Any]], fps: str) -> None:
        g = self.g
        rows = self.sanitize(class_fn_batch)
        for label in ("Class", "Module", "Interface", "Struct", "Record", "Trait", "Object", "Mixin"):
            def methods() -> None:
                for row in rows:
                    self._edges("CONTAINS", [c for c in g.match(label, name=row["class_name"], path=fps)
                                             if _line_ok(row["class_line"], g.node(c))],
                                g.match("Function", name=row["func_name"], path=fps, line_number=row["func_line"]),
                                batch_check=(label, "Function"))
            self._guarded(methods)

    def _link_nested_functions(self, nested_fn_batch: List[Dict[str, Any]], fps: str) -> None:
        g = self.g
        for row in self.sanitize(nested_fn_batch):
            outers = [o for o in g.match("Function", name=row["outer"], path=fps) if _line_ok(row["outer_line"], g.node(o))]
            if outers:
                self._edges("CONTAINS", outers, g.match("Function", name=row["inner_name"], path=fps, line_number=row["inner_line"]))

    def _add_js_imports(self, js_imports: List[Dict[str, Any]], fid: NodeId) -> None:
        g = self.g
        rows = self.sanitize(js_imports)
        if self.p.batch_reads_before:
            refuse_conflicting_rows(rows, *JS_IMPORT_EDGE)
        for row in rows:  # per-row fallback (KùzuDB); one statement elsewhere
            mid, _ = g.merge_node("Module", row["module_name"])
            e = g.merge_edge("IMPORTS", fid, mid, (("line_number", row["line_number"]),))
            g.set_edge("IMPORTS", e, "imported_name", row["imported_name"])
            g.set_edge("IMPORTS", e, "alias", row["alias"])
            g.set_edge("IMPORTS", e, "lang", row["lang"])

    def _add_other_imports(self, other_imports: List[Dict[str, Any]], fid: NodeId) -> None:
        g = self.g
        rows = self.sanitize(sort_import_rows_for_metadata(other_imports))
        before: Dict[Any, Tuple[Any, Any]] = {}
        if self.p.batch_reads_before:  # every row's coalesce reads the value before the statement
            for row in rows:
                m = g.node(("Module", row["name"]))
                before.setdefault(row["name"], (m.get("lang"), m.get("full_import_name")) if m else (None, None))
        edge_rows = rows
        if self.p.batch_reads_before:
            refuse_conflicting_rows(rows, *OTHER_IMPORT_EDGE)
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

    def _add_inclusions(self, inclusions: List[Dict[str, Any]], fps: str) -> None:
        g = self.g
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
                    nid, _ = g.merge_node(label, tuple(key_props[k] for k in POSITIONAL_KEY), key_props)
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
            key: Optional[object]
            if parts is not None:
                key = row_uid(label, row, {"path": fps}, parts)
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
            raise Binder(f"{rel} {batch_check}")
        targets = list(targets)
        for a in sources:
            for b in targets:
                self.g.merge_edge(rel, a, b)

    @staticmethod
    def _guarded(run: Callable[[], Any]) -> None:
        """A statement (or a batch) whose binder exception cgc's writer swallows."""
        try:
            run()
        except Binder:
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
        populated = {label for label in ITEM_LABELS if g.populated(label)}
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
            for pl in ITEM_LABELS:
                if pl in populated:
                    run_internal(rows, cl, pl)
        if legacy:
            for cl in ITEM_LABELS:
                if cl not in populated:
                    continue
                for pl in ITEM_LABELS:
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
            for cl in ITEM_LABELS:
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
                            self._guarded(lambda: self._edges(
                                "IMPLEMENTS", g.match(clab, name=item["name"], path=path),
                                g.match("Interface", name=base_name), batch_check=(clab, "Interface")))
                    else:
                        labels = ("Class", "Record", "Interface", "Mixin", "Extension")
                        for clab in labels:
                            for plab in labels:
                                self._guarded(lambda: self._edges(
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
                    raise Binder(f"{cl} or {pl}")
                children = g.match(cl, name=row["child_name"], path=row["path"])
                parents = g.match(pl, name=row["parent_name"], path=row["resolved_parent_file_path"])
                if not self.p.has_pair(rel, cl, pl):
                    raise Binder(rel)  # the MERGE over a pair the table lacks
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
                    decorated = [d for d in decorated if ctx == "" or (ctx is not None and equal(g.found(d).get("context"), ctx))]
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

    def calls(self, groups: Sequence[Iterable[Dict[str, Any]]]) -> None:
        """write_function_call_groups; each group is read once, in order (a list, or an iterator of its rows)."""
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
            # cgc sanitises every row, keeps the first of each key, splits them by relationship and writes each
            # relationship's rows in batches of 1 000. Done in one pass here, a batch written as soon as it is full
            # (the batches are cgc's: the same rows of one relationship, in order; a relationship's edges do not
            # depend on the other's), so that a group read lazily (pi-cgc's index: a million rows at 5 000 files)
            # is never held whole.
            seen: Set[Tuple[Any, ...]] = set()
            pending: Dict[str, List[Dict[str, Any]]] = {"CALLS": [], "HEURISTIC_CALLS": []}

            def write(rel: str, caller_label: str = caller_label, called_label: str = called_label) -> None:
                chunk, pending[rel] = pending[rel], []
                self._guarded(lambda: self._call_chunk(rel, caller_label, called_label, self.sanitize(chunk)))

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
                k = (row.get("caller_name", ""), row.get("caller_file_path", ""), row.get("caller_line_number", 0),
                     row.get("called_name", ""), row.get("called_file_path", ""), row.get("called_line_number", 0),
                     row.get("called_context", ""), row.get("line_number", 0), row.get("full_call_name", ""),
                     row.get("args_key", ""))
                if k in seen:
                    continue
                seen.add(k)
                rel = _call_relationship(row)
                pending[rel].append(row)
                if len(pending[rel]) == 1000:
                    write(rel)
            for rel in ("CALLS", "HEURISTIC_CALLS"):
                if pending[rel]:
                    write(rel)

    def _call_chunk(self, rel: str, caller_label: str, called_label: str, rows: List[Dict[str, Any]]) -> None:
        g = self.g
        columns = self.p.columns(called_label)
        line_predicate = called_label not in ("File", "Directory")
        if line_predicate and columns is not None and "line_number" not in columns:
            raise Binder(f"{called_label}.line_number")
        if called_label == "Function":
            ctx_props = ["context", "class_context", "module_context"]
        elif called_label == "Variable":
            ctx_props = ["context"]
        else:
            ctx_props = []
        for p in ctx_props:
            if columns is not None and p not in columns:
                raise Binder(f"{called_label}.{p}")
        if not self.p.has_pair(rel, caller_label, called_label):
            raise Binder(rel)
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
                node = g.found(c)
                if line_predicate:
                    cl = row.get("called_line_number")
                    if not (cl is not None and cl <= 0) and not equal(node.get("line_number"), cl):
                        continue
                if ctx_props:
                    ctx = row.get("called_context")
                    if not (ctx == "" or ctx is None or any(equal(node.get(p), ctx) for p in ctx_props)):
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
               and n.get("class_context") is not None and n["path"].endswith(CPP_EXTS)]
        if not fns:
            return
        for clab in ("Class", "Struct", "Module"):
            if not self.p.has_pair("CONTAINS", clab, "Function"):
                continue
            for fn in fns:
                ctx = g.found(fn)["class_context"]
                for c in g.match(clab, name=ctx):
                    path = g.found(c).get("path")
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
    return equal(node.get("line_number"), wanted)
