"""The engine's options and the state of the run under way: one object, RUN, shared by the modules.

The hooks the engine puts into cgc's code (cgc_contract) are called by cgc, not by the engine, so what they
need to know (the resolution under way, the journal of the update, the walk being kept, the reads being
recorded) cannot be passed to them as arguments: it lives here, in one place, instead of in module globals.
The options are set once, by serve's command line; each piece of the run's state is set only by RunContext's
own context managers (the code that owns the piece runs its span in one), which clear it when the span ends.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional, Set, Tuple

if TYPE_CHECKING:
    from .journal import Journal
    from .parse_store import ParseStore
    from .walk import KeptWalk


@dataclass
class Options:
    """Read once from the command line (serve's flags). Each is off by default; they exist for comparisons and
    for the parity harness, and none changes what the engine writes."""

    # Resolve the whole tree after each narrowed resolution (and compare every kept index, the kept imports
    # map, the kept walk) and refuse an update on any difference.
    check: bool = False
    # Log CPU ms per phase and the index keys an update changed.
    debug: bool = False
    # cgc builds its indices from every file at every update (as before they were kept).
    full_indices: bool = False
    # Keep the order in which cgc's parser lists a file's entries (the engine sorts them by position).
    parse_order_as_parsed: bool = False
    # Walk the whole tree at every update (no kept walk).
    whole_walk: bool = False
    # Watch folders with inotify to know which changed (else each kept folder's times are read).
    dir_events: bool = True
    # Put every owed key order right at every update.
    order_at_once: bool = False
    # Change the last state's large dicts in place under a journal (else copy them).
    in_place: bool = True
    # When an update's rows go in bulk on KùzuDB (update_bulk): "auto" where it pays, "always", "never".
    bulk: str = "auto"


class NarrowingFailed(Exception):
    """Something the narrowing relies on did not hold; the whole tree is resolved instead."""


@dataclass
class RunContext:
    options: Options = field(default_factory=Options)
    # The journal of the update under way, when its dicts may be changed in place (see journal.Journal).
    journal: Optional["Journal"] = None
    # The reads of the file being resolved (see recording).
    sink: Optional[Set[Tuple[str, Any]]] = None
    # The narrowed run of cgc's call resolution under way (call_run.CallRun, or kept_indices._IndexCapture).
    call_run: Optional[Any] = None
    # The imports map's names asked about by the file whose index contribution is being taken.
    tests: Optional[Set[Any]] = None
    # The tree whose discovery is under way, if it keeps its walk.
    keeping: Optional["KeptWalk"] = None
    # Loops over all_file_data in cgc's build_function_call_groups: their line -> role (found at load).
    loop_roles: Dict[int, str] = field(default_factory=dict)
    # Cleared when a FalkorDB answers that it has no indegree().
    degree_function: bool = True
    # Where Tree.parse keeps and finds each file's parse by its content (set by the command line; None: off).
    parse_store: Optional["ParseStore"] = None

    @contextlib.contextmanager
    def journaling(self, journal: Optional["Journal"]) -> Iterator[None]:
        """The span of an update whose dicts `journal` (None: they are copied) records."""
        self.journal = journal
        try:
            yield
        finally:
            self.journal = None

    @contextlib.contextmanager
    def resolving(self, run: Any) -> Iterator[None]:
        """A run of cgc's call resolution whose hooks `run` answers; no reads are recorded after it."""
        self.call_run = run
        try:
            yield
        finally:
            self.call_run = None
            self.sink = None

    @contextlib.contextmanager
    def recording(self, sink: Set[Tuple[str, Any]]) -> Iterator[None]:
        """The reads of one file's resolution, noted into `sink`."""
        self.sink = sink
        try:
            yield
        finally:
            self.sink = None

    @contextlib.contextmanager
    def asking(self, tests: Optional[Set[Any]]) -> Iterator[None]:
        """The imports map's names asked about while one file's index contribution is taken, noted into `tests`."""
        self.tests = tests
        try:
            yield
        finally:
            self.tests = None

    @contextlib.contextmanager
    def keeping_walk(self, kept: "KeptWalk") -> Iterator[None]:
        """A discovery whose walk `kept` keeps."""
        self.keeping = kept
        try:
            yield
        finally:
            self.keeping = None


RUN = RunContext()
