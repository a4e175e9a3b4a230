"""One update's write into the graph: what cgc's writer and the engine's link writers run in the write transaction,
and the scoped purge after it (Engine.apply_update, Engine.adopt_graph)."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set, Tuple

from . import cgc_contract as cgc
from . import update_bulk
from .database import delete_file_edges_first, purge_dangling
from .files import norm
from .graph_model import GraphRows
from .journal import as_before
from .link_rows import CPP_SOURCES, choose_links, external_parents, module_metadata, write_links
from .protocol import log
from .tree_state import TreeState

if TYPE_CHECKING:
    from .engine import Engine


def write_file(writer: Any, path: str, data: Dict[str, Any], imports_map: Dict[str, List[str]], root: Path) -> None:
    """One file as cgc's index pipeline writes it: add_file_to_graph, or a File node alone for a failed parse (none
    for an unsupported file). A file whose write the backend fails (`write_failed`: Tree.parse) is written up to the
    failing statement, the failure said and let go of, as cgc's pipeline does."""
    if data.get("write_failed"):
        try:
            writer.add_file_to_graph(data, root.name, imports_map, repo_path_str=root.as_posix())
        except Exception as error:  # cgc's pipeline goes on after any
            log(f"{path}: written only in part, as cgc's own index writes it ({str(error)[:160]})")
    elif "error" not in data:
        writer.add_file_to_graph(data, root.name, imports_map, repo_path_str=root.as_posix())
    elif not data.get("unsupported"):
        writer.add_minimal_file_node(Path(path), root, False)


class UpdateWrite:
    """One update's write into the graph (work, in the write transaction, run again on each attempt) and the
    scoped purge after it, with what the work found that the purge and the answer need."""

    def __init__(self, engine: "Engine", new: TreeState, changed: Set[str], removed: Set[str], unsure: Set[str],
                 rewritten: Set[str], present_changed: List[str], names: Set[str],
                 metadata: Dict[str, Tuple[Any, Any]], row_by_row: bool):
        self.engine = engine
        self.new = new
        self.changed = changed
        self.removed = removed
        self.unsure = unsure
        self.rewritten = rewritten
        self.present_changed = present_changed
        self.names = names
        self.metadata = metadata
        self.row_by_row = row_by_row
        # Where the time under the lock goes, ms per phase of the last attempt (the answer's "phases").
        self.phases: Dict[str, int] = {}
        self.clock = 0.0
        # Files the graph holds that the tree no longer has and the engine never held (see work).
        self.stale: Set[str] = set()
        # The modules the deleted files pointed to: the only ones the update can leave unreferenced (purge).
        self.orphan_candidates: Set[str] = set()
        # Whether the update took a node or an edge out (a file deleted or replaced, links written again, a repo-wide
        # pass): an update that only adds (a new file nothing else links to) leaves nothing dangling to purge.
        self.took_out = True
        # Whether it can leave an ExternalClass node without an edge (see PURGE_QUERIES).
        self.external_classes = True
        # An adoption's write (adopt_graph): the graph's old edges are not the state's rows, so any ExternalClass
        # they reached may be left without one.
        self.adopting = False
        # Modules an adoption found differing: the purge looks at them too.
        self.extra_orphans: Set[str] = set()
        # The replay of a full index of `new` (KùzuDB, many files): the files and links are loaded from its rows
        # in bulk instead of through cgc's writer (update_bulk).
        self.bulk: Optional[GraphRows] = None
        # The files whose nodes the write deletes (delete_files).
        self.doomed: List[str] = []

    def lap(self, name: str) -> None:
        now = time.monotonic()
        self.phases[name] = self.phases.get(name, 0) + round((now - self.clock) * 1000)
        self.clock = now

    def work(self, writer: Any) -> None:
        self.phases.clear()
        self.clock = time.monotonic()
        writer.add_repository_to_graph(self.engine.root, False)
        self.lap("repository")
        self.find_unsure(writer)
        self.lap("unsure")
        self.delete_files(writer)
        self.lap("deleteFiles")
        if self.bulk is not None:
            self.write_in_bulk(writer, self.bulk)
        else:
            for path in self.present_changed:
                # (whole: an engine adopting the graph keeps the source text of the files it read aside, in its
                # stash)
                write_file(writer, path, self.engine.whole_data(self.new.files[path].data), self.new.imports_map,
                           self.engine.root)
            self.lap("addFiles")
            self.rewrite_links(writer)
        self.engine.reset_modules(writer, self.metadata)
        self.lap("modules")
        self.repo_passes(writer)
        self.lap("repoPasses")

    def find_unsure(self, writer: Any) -> None:
        """What the graph says of the paths whose old content the engine never held."""
        engine, new, unsure = self.engine, self.new, self.unsure
        # An engine that read the tree after the change cannot see a file the change took out of the
        # tree without naming it (a line in .cgcignore or .gitignore, a folder deleted whole): the graph
        # says which of its files the tree no longer has, and they go as removed files do.
        self.stale.clear()
        if unsure:
            known = {norm(p) for p in set(new.files) | self.changed}
            self.stale.update(p for p in engine.graph_files(writer) if norm(p) not in known)
        # A path whose old content the engine never held may have been the first importer of a
        # module (its metadata comes from the first importer): the graph says what it imported.
        extra = engine.modules_imported_by(writer, sorted(unsure | self.stale)) - self.names
        if extra:
            self.metadata.update(module_metadata(new.files, extra, row_by_row=self.row_by_row))

    def delete_files(self, writer: Any) -> None:
        """The changed and removed files' nodes and edges out of the graph (and every file's links to be written
        again where a changed path's old content was never held)."""
        engine, new = self.engine, self.new
        # A changed path whose old content the engine never held: any file's rows may have depended on
        # that content (an edge into it, or a name it defined that a call elsewhere resolved against),
        # and the rows the engine holds, resolved against the tree as it is now, cannot tell which. Every
        # file's links are written again. Where it held the old content, its rows are what the graph
        # has, and the re-resolution tells which differ.
        if self.unsure:
            self.rewritten.update(set(new.files) - self.changed)
        # cgc purges after every file it deletes, scanning every Parameter of the graph each time
        # (1.3 s at 1 000 files on FalkorDB); the one scoped purge after the update does that work.
        cgc.without_purge_after_delete(writer)
        held_files = engine.state.files
        doomed = sorted({p for p in self.changed if p in held_files or p in self.removed} | self.stale)
        assert new.suffixes is not None  # (set by suffixes_after in planned_write)
        self.took_out = bool(doomed or self.rewritten or self.adopting or new.suffixes & CPP_SOURCES
                             or ".java" in new.suffixes)
        self.orphan_candidates.clear()
        self.orphan_candidates.update(engine.modules_linked_from(writer, doomed))
        self.orphan_candidates.update(self.extra_orphans)
        # The graph's rows of the files whose edges go are the engine's last ones, where it held them.
        self.external_classes = bool(self.unsure or self.stale or self.adopting) or external_parents(
            as_before(engine.state.rows), itertools.chain(doomed, self.rewritten))
        self.doomed = doomed
        if self.bulk is not None:
            return  # (deleted with the bulk write's own statements: update_bulk.delete_files)
        for path in doomed:
            if engine.db.falkordb:
                delete_file_edges_first(writer, path)
            else:
                writer.delete_file_from_graph(path)

    def rewrite_links(self, writer: Any) -> None:
        """The changed and rewritten files' outgoing links, deleted and written again."""
        engine, new, changed = self.engine, self.new, self.changed
        engine.delete_outgoing_links(writer, sorted(self.rewritten), not engine.db.embedded)
        self.lap("deleteLinks")
        chosen = choose_links(new, {norm(p) for p in changed | self.rewritten}, changed, changed | self.rewritten)
        self.lap("chooseLinks")
        self.phases["linkRows"] = write_links(writer, chosen, new.imports_map)
        self.lap("writeLinks")

    def write_in_bulk(self, writer: Any, rows: GraphRows) -> None:
        """The changed files and the rewritten links from the replay's rows, loaded in bulk (update_bulk)."""
        whole = {norm(p) for p in self.present_changed}
        links = {norm(p) for p in self.rewritten} - whole
        self.engine.delete_outgoing_links(writer, sorted(links), False)
        self.lap("deleteLinks")
        transaction = self.engine.db.transaction
        assert transaction is not None  # (bulk is set on KùzuDB only, where the work runs in write_transaction)
        self.phases.update(update_bulk.write(transaction, rows, whole, links, {norm(p) for p in self.doomed},
                                             cgc.normalize_path(self.engine.root)))
        self.lap("bulk")

    def repo_passes(self, writer: Any) -> None:
        # These repo-wide passes match classes by name in any file, so any change can add an
        # edge to them: they run again whenever the tree has what they link (MERGE, idempotent).
        # (os.path's suffix where Path's would cost 50 ms at 5 000 files; the two differ only for
        # names ending in a dot, never one of these.)
        suffixes = self.new.suffixes
        assert suffixes is not None
        if suffixes & CPP_SOURCES:
            writer.write_cpp_class_function_links(self.engine.root.as_posix())
        if ".java" in suffixes:
            self.engine.rewrite_java_passes(writer, self.new)

    def purge(self, writer: Any) -> None:
        purge_dangling(writer, sorted(norm(p) for p in self.changed | self.removed | self.stale),
                       sorted(self.orphan_candidates), self.engine.db.backend, self.external_classes)
