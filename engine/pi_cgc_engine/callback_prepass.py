"""cgc's callback pre-pass, run by the engine in place of cgc's own loop, with the same result in a compact form.

build_function_call_groups first maps (a function's file, its name, a parameter) to the functions a call passing
a bare name there may mean: for every call of the tree, every function of the call's name, and every parameter
given a bare name, it appends one (file, name, line) triple per function of that name. On real code that is a
list of mostly repeated triples: at 5 000 files of Python, 114 million appends (about 8 GB) for 14 million
distinct triples, made in about 9.5 million runs, each the same few functions of one name. cgc's loop then reads
an entry only for a call of a parameter of the function the call is in (the call's file, that function's name,
the parameter): the engine makes only the entries of such (file, function name) pairs (CallRun.capture), each
run once, as a shared tuple, and each value keeps its runs in order. What cgc's loop reads (truth, then the
triples in order) is the same; at 5 000 files the pre-pass took about 20 s making every entry, and 2.6 s
making these.

The loop below is cgc 0.6.13's (tools/indexing/resolution/calls.py): the same calls, functions and parameters in
the same order, skipping only what would make an entry cgc's loop never reads. cgc_contract checks that cgc's own
loop is still that one (PREPASS_SHA256) before the engine serves, so a cgc whose pre-pass changed is a refusal,
not a difference. It reads the files and the functions by name through the run's hooks, as cgc's loop does (a
narrowed run sees the calls and functions the narrowing gives it)."""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

if TYPE_CHECKING:
    from .call_run import CallRun

Triple = Tuple[str, str, Optional[int]]
Key = Tuple[str, str, Any]
IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


class CallbackTargets:
    """One value of callback_arg_targets: the triples cgc appends one by one, kept as the runs they come in."""

    __slots__ = ("runs",)

    def __init__(self) -> None:
        self.runs: List[Tuple[Triple, ...]] = []

    def __iter__(self) -> Iterator[Triple]:
        return itertools.chain.from_iterable(self.runs)

    def __len__(self) -> int:
        return sum(map(len, self.runs))

    def __bool__(self) -> bool:
        return bool(self.runs)  # (no run is empty)

    def __eq__(self, other: Any) -> bool:
        return list(self) == list(other) if isinstance(other, (CallbackTargets, list)) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


def callback_arg_targets(files: Iterable[Any], functions_named: Callable[[str], List[Tuple[str, Any]]],
                         resolved_posix: Callable[[Any], str], run: "CallRun") -> Dict[Key, CallbackTargets]:
    """cgc's callback_arg_targets after its pre-pass over `files` (the run's hooks as cgc's loop meets them)."""
    targets: Dict[Key, CallbackTargets] = {}
    made: Dict[Tuple[str, Optional[str]], Tuple[Triple, ...]] = {}  # the run of a bare name (in a file)
    readers = run.callback_readers
    read_names = {name for _, name in readers}
    callees_of: Dict[str, List[Tuple[str, List[Any]]]] = {}  # a name's functions whose entries are read
    for fd in files:
        caller_fp = resolved_posix(fd["path"])
        for call in fd.get("function_calls", []):
            callee_name = call.get("name")
            if not callee_name or callee_name not in read_names:
                continue  # no entry of this name is read
            callees = callees_of.get(callee_name)
            if callees is None:
                callees = callees_of[callee_name] = read_callees(callee_name, functions_named, run)
            if not callees:
                continue
            # Each argument's text where it is a bare name (cgc's loop pairs the i-th parameter with the i-th).
            bare = [text if IDENTIFIER.fullmatch(text := str(arg).strip()) else None for arg in call.get("args") or []]
            for callee_fp, params in callees:
                for param, arg_text in zip(params, bare):
                    if arg_text is None:
                        continue
                    found = made.get((arg_text, caller_fp))
                    if found is None:
                        run.in_parameters = True  # inside cgc's enumerate(params): every function of the name
                        try:
                            callback_matches = functions_named(arg_text)
                        finally:
                            run.in_parameters = False
                        if len(callback_matches) > 1:
                            same_file = [match for match in callback_matches if match[0] == caller_fp]
                            if same_file:
                                callback_matches = same_file
                        found = made[(arg_text, caller_fp)] = tuple(
                            (target_fp, arg_text, target_fn.get("line_number")) for target_fp, target_fn in callback_matches)
                    if found:
                        key = (callee_fp, callee_name, param)
                        value = targets.get(key)
                        if value is None:
                            value = targets[key] = CallbackTargets()
                        value.runs.append(found)
    return targets


def read_callees(name: str, functions_named: Callable[[str], List[Tuple[str, Any]]],
                 run: "CallRun") -> List[Tuple[str, List[Any]]]:
    """The functions of this name (file, parameters) whose entries cgc's loop reads (run.callback_readers) and
    whose parameters its loop enumerates (the enumerate hook gives it nothing for the others), in order. The same
    for every call of the name: the pre-pass changes no index."""
    callees = []
    for callee_fp, callee_fn in functions_named(name):
        if (callee_fp, name) in run.callback_readers:
            params = callee_fn.get("args") or callee_fn.get("parameters") or []
            if id(params) in run.param_lists:
                callees.append((callee_fp, params))
    return callees
