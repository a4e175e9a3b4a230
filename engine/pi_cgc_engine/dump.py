"""The canonical dump: every node and edge of a repository's graph, one sorted line each (the parity proof)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

from .database import Database
from .protocol import emit_text

# ---------------------------------------------------------------------------------------------
# The canonical dump: the repository's subgraph, one sorted line per node and per edge.

VOLATILE = {"_id", "_label", "_src", "_dst", "uid", "indexed_at"}
IDENTITY = ("path", "name", "line_number", "occurrence_index", "function_line_number")


def properties_of(value: Any) -> Tuple[str, Dict[str, Any]]:
    if isinstance(value, dict):  # KùzuDB
        return str(value.get("_label")), {k: v for k, v in value.items() if k not in VOLATILE and v is not None}
    labels = getattr(value, "labels", None)  # a FalkorDB node (a list) or a Neo4j node (a frozenset)
    if labels:
        label = labels[0] if isinstance(labels, list) else sorted(labels)[0]
    else:  # a FalkorDB edge (.relation) or a Neo4j relationship (.type)
        label = getattr(value, "relation", None) or getattr(value, "type", "?")
    properties = getattr(value, "properties", None)
    if properties is None:  # Neo4j: the entity is its own mapping
        properties = dict(value.items()) if hasattr(value, "items") else {}
    return str(label), {k: v for k, v in properties.items() if k not in VOLATILE and v is not None}


def canonical_dump(db: Database, root: Path, dangling: bool = False) -> List[str]:
    """Nodes and edges are rendered from their properties only. Internal ids are not used even to
    join: right after a write transaction Kùzu 0.11.3 answered `MATCH (n) RETURN n` and
    `MATCH (a)-[e]->(b)` with ids that did not agree, in the same process. A node without a path belongs to
    the repository through its edges; `dangling` (for a graph that holds this repository alone) adds those
    with no edge at all, which a purge should have taken (a full index leaves none)."""
    root_str = root.as_posix()

    def render(props: Dict[str, Any]) -> str:
        return json.dumps(props, sort_keys=True, default=str, ensure_ascii=False).replace(root_str, "<root>")

    def in_repo(props: Dict[str, Any]) -> bool:
        path = props.get("path")
        return isinstance(path, str) and (path == root_str or path.startswith(root_str + "/"))

    def ident(label: str, props: Dict[str, Any]) -> str:
        return f"{label}{render({k: props[k] for k in IDENTITY if k in props})}"

    lines: List[str] = []
    unplaced: Set[str] = set()
    for record in db.read("MATCH (n) RETURN n"):
        label, props = properties_of(record["n"])
        if in_repo(props):
            lines.append(f"N {label} {render(props)}")
        elif dangling and "path" not in props:
            unplaced.add(f"N {label} {render(props)}")
    pathless: Set[str] = set()
    linked: Set[str] = set()  # the pathless nodes at an end of any edge (dangling: the others)
    for record in db.read("MATCH (a)-[e]->(b) RETURN a, e, b"):
        (a_label, a), (e_label, e), (b_label, b) = properties_of(record["a"]), properties_of(record["e"]), properties_of(record["b"])
        ours = in_repo(a) or in_repo(b)
        if ours:
            lines.append(f"E {e_label} {ident(a_label, a)} -> {ident(b_label, b)} {render(e)}")
        for label, props in ((a_label, a), (b_label, b)):
            if "path" not in props and (ours or dangling):
                (pathless if ours else linked).add(f"N {label} {render(props)}")
    edgeless = [f"dangling {line}" for line in sorted(unplaced - pathless - linked)] if dangling else []
    return sorted(lines + sorted(pathless) + edgeless)


def write_dump(db: Database, root: Path, out: Optional[str], dangling: bool = False) -> int:
    lines = canonical_dump(db, root, dangling)
    text = "".join(line + "\n" for line in lines)
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        emit_text(text)
    return len(lines)
