#!/usr/bin/env python3
"""Where an engine update's CPU goes, phase by phase, without a database (issue 12, "The floor").

Builds (once, cached under WORK) a tree of N real Python files chosen as `scaledRepo(n)` chooses them
(test/helpers/repos.ts: the standard library of the python3 on PATH, then the site-packages of the
project's .venv under third_party/, repeated under copy-2/… beyond both) and the engine's state for it
(parse and whole resolution; pickled, as the engine's warm cache is). Then it starts the engine's state
from that pickle as a trusted warm start does (cgc's indices built again, nothing resolved), applies
edits of several kinds one after the other, runs the engine's `plan` (discovery, parse, imports map,
narrowed resolution) and the parts of `apply_update` that need no database (the files rewritten, the
Module metadata, the rows chosen), and reports CPU ms per phase (resolve_tree's own laps included: the
engine's debug option, RUN.options.debug, is on here). The edits are undone at the end, so the cached state
stays the tree's.

  .venv/bin/python bench/engine-profile.py --sizes 100,1000,5000 [--work /tmp/pi-cgc-profile]
      [--rounds 1] [--variants incremental,full] [--check indices|all] [--json OUT] [--sequence kinds|bench]
      [--cprofile EDIT,...] [--engine OTHER/engine]

--engine profiles the engine package of another checkout (its engine/ folder, say from `git worktree add
/tmp/x/rev REV`: /tmp/x/rev/engine): run it and this one one after the other, alternating, for a before/after on
the same cached trees. Only a revision with the package (engine/pi_cgc_engine/, its options in context.RUN)
can be profiled so: the single-file engine of before (engine/pi_cgc_engine.py, its PI_CGC_ENGINE_* switches)
no longer loads here.

--variants runs each edit sequence once per variant, in one process, alternating: "incremental" is the
engine as it is, "full" sets RUN.options.full_indices (cgc builds its tree-wide indices from every
file, as before the engine kept them per file); "as-parsed" keeps the order in which cgc's parser lists a file's
entries (RUN.options.parse_order_as_parsed; the engine sorts them into source order); "order-at-once" puts
every kept index in cgc's key order at each update (RUN.options.order_at_once) instead of when it is seen;
"save-beside" keeps a forked copy of the process alive through each update, as the engine's cache save aside
does when an edit comes during it; "saved-before" forks a copy that ends before each update (a save aside done
while idle), and "saved-reclaimed" then runs the engine's idle-time page reclaim (PageReclaim) before it;
"copied" copies the last state where an update changes it (RUN.options.in_place off) instead of changing it in
place under the engine's journal; "exact-undo" has that journal note each dict's key order before it takes a
key out, as it does on an embedded database (the others do not, as on a database server). --sequence bench replays the edit-to-fresh bench's edits (a function of
_compression.py replaced, a new file star-importing it and calling the new one, that file deleted; four times)
instead of one edit of each kind. --check indices sets RUN.options.check (each kept
index compared, values and key order, with cgc's own build from every file; exits on a difference);
--check all also compares each narrowed resolution with a whole one (slow). One JSON line per size to stderr, a table at the end.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any, Callable, Dict, List, Set, Tuple

PROJECT = Path(__file__).resolve().parent.parent
ENGINE = PROJECT / "engine"  # the folder that holds the package pi_cgc_engine
SKIPPED_DIRS = {
    "__pycache__", "site-packages", "dist-packages", "data", "node_modules", "venv", ".venv", "env", ".env",
    "dist", "build", "target", "out", "obj", "coverage", ".git", ".idea", ".vscode", ".tox", ".mypy_cache",
    ".pytest_cache", ".next",
}


# What this script uses of the engine, by the package's module that has it.
ENGINE_NAMES = {
    "tree": ("Tree",), "engine": ("Engine",), "protocol": ("DebugClock",), "files": ("digest_of", "norm"),
    "resolution": ("resolve_tree",), "narrowing": ("call_facts",), "memory": ("keep_heap", "PageReclaim"),
    "link_rows": ("rewritten_owners", "module_import_rows", "module_metadata", "choose_links", "compare_links"),
}


def load_engine() -> Any:
    """The engine's package (from ENGINE), its contract with cgc loaded, as one namespace of what is used here;
    `RUN` is the run context whose options the variants set."""
    sys.path.insert(0, str(ENGINE))
    contract = importlib.import_module("pi_cgc_engine.cgc_contract")
    contract.load()
    engine = types.SimpleNamespace(RUN=importlib.import_module("pi_cgc_engine.context").RUN, modules=[])
    for module_name, names in ENGINE_NAMES.items():
        module = importlib.import_module(f"pi_cgc_engine.{module_name}")
        for name in names:
            setattr(engine, name, getattr(module, name))
    engine.modules = [module for name, module in sys.modules.items() if name.startswith("pi_cgc_engine.")]
    engine.RUN.options.debug = True  # resolve_tree's laps (DebugClock), collected by instrument
    return engine


def python_files_of(library: Path) -> List[str]:
    found: List[str] = []

    def walk(folder: Path) -> None:
        for entry in sorted(folder.iterdir(), key=lambda p: (p.name.lower(), p.name)):
            if entry.is_dir() and not entry.is_symlink():
                if entry.name not in SKIPPED_DIRS:
                    walk(entry)
            elif entry.is_file() and entry.name.endswith(".py") and not entry.name.startswith(("bad", "badsyntax", "bad_coding")):
                found.append(entry.relative_to(library).as_posix())

    walk(library)
    return found


def build_tree(root: Path, count: int) -> None:
    library = Path(subprocess.check_output(
        ["python3", "-c", "import json,os;print(os.path.dirname(os.path.dirname(json.__file__)))"], text=True).strip())
    packages = PROJECT / ".venv" / "lib" / library.name / "site-packages"
    pool = [(library / f, f) for f in python_files_of(library)]
    pool += [(packages / f, f"third_party/{f}") for f in python_files_of(packages)]
    for i in range(count):
        source, rel = pool[i % len(pool)]
        rnd = i // len(pool)
        target = root / (rel if rnd == 0 else f"copy-{rnd + 1}/{rel}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    (root / ".cgcignore").write_text("# pi-cgc profile\n", encoding="utf-8")


class Clock:
    def __init__(self) -> None:
        self.laps: Dict[str, float] = {}
        self.last = time.process_time()

    def lap(self, name: str) -> None:
        now = time.process_time()
        self.laps[name] = self.laps.get(name, 0.0) + (now - self.last) * 1000
        self.last = now


CURRENT: List[Clock] = []
SEQUENCE = "kinds"  # --sequence: the edits of every kind below, or the edit-to-fresh bench's
PROFILE_EDIT = ""  # --cprofile: the edits (by a part of their name) run under cProfile


def instrument(engine: Any) -> None:
    """Times the engine's own steps from outside (plan's pieces), and collects resolve_tree's laps."""

    def wrap(owner: Any, name: str, label: str, static: bool = False) -> None:
        original = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            clock = CURRENT[-1] if CURRENT else None
            if clock is not None:
                clock.lap("(other plan)")
            try:
                return original(*args, **kwargs)
            finally:
                if clock is not None:
                    clock.lap(label)

        setattr(owner, name, staticmethod(timed) if static else timed)

    wrap(engine.Tree, "discover", "discover")
    wrap(engine.Tree, "parse", "parse")
    wrap(engine.Tree, "merge_imports", "merge imports")
    if hasattr(engine.Tree, "merge_imports_kept"):
        wrap(engine.Tree, "merge_imports_kept", "merge imports", static=True)
    wrap(engine.Engine, "resolve", "resolve (total)")

    def report(self: Any, what: str) -> None:
        clock = CURRENT[-1] if CURRENT else None
        if clock is None:
            return
        for text in self.laps:
            name, _, ms = text.rpartition(" ")
            clock.laps["resolve: " + name] = clock.laps.get("resolve: " + name, 0.0) + float(ms)

    engine.DebugClock.report = report
    for module in engine.modules:  # the debug lines (changed keys) are not wanted here
        if hasattr(module, "log"):
            module.log = lambda message: None


def initial_state(engine: Any, root: Path, cache: Path) -> Any:
    tree = engine.Tree(root, None)
    if cache.exists():
        try:
            with cache.open("rb") as handle:
                return pickle.load(handle)
        except (AttributeError, ImportError):
            pass  # a state pickled by another engine (the single-file one of before): built again
    started = time.process_time()
    files = {p.as_posix(): tree.parse(p, engine.digest_of(p)) for p in tree.discover()}
    imports_map = tree.merge_imports(files)
    state = engine.resolve_tree(None, files, imports_map, set(files), True)[0]
    print(json.dumps({"built": str(root), "files": len(files), "cpuS": round(time.process_time() - started, 1)}),
          file=sys.stderr, flush=True)
    with cache.open("wb") as handle:
        pickle.dump(state, handle, protocol=pickle.HIGHEST_PROTOCOL)
    # As read back from the cache, as every later run starts: the state just built holds the indices its warm
    # starts then share, and a variant whose journal changes them in place left them wrong for the next variant.
    with cache.open("rb") as handle:
        return pickle.load(handle)


# -- edits: each returns the paths it touched; the original texts are kept to undo them ------------------


def pick_files(root: Path, state: Any) -> Dict[str, str]:
    """A file other files call (the most CALLS rows from other files into it among files called from at
    most 15 others: an edit of the most called file re-resolves hundreds of files at 5 000, which says
    nothing about the costs that grow with the tree), a file with a class others subclass, and a plain
    file with a top-level function, by the state's rows."""
    into: Dict[str, int] = {}
    callers: Dict[str, Set[str]] = {}
    subclassed: Dict[str, int] = {}
    for key, rows in state.rows.items():
        for group in rows["calls"]:
            for row in group:
                target = row.get("called_file_path")
                if target and target != row.get("caller_file_path"):
                    into[target] = into.get(target, 0) + 1
                    callers.setdefault(target, set()).add(row.get("caller_file_path"))
        for row in rows["inherits"]:
            target = row.get("resolved_parent_file_path")
            if target and target != row.get("path"):
                subclassed[target] = subclassed.get(target, 0) + 1
    into = {target: count for target, count in into.items() if len(callers[target]) <= 15}
    by_norm = {engine_norm(k): k for k in state.files}
    ranked = [by_norm[p] for p, _ in sorted(into.items(), key=lambda kv: -kv[1]) if p in by_norm]
    wide = next(p for p in ranked if top_level_function(state, p))
    sub = [by_norm[p] for p, _ in sorted(subclassed.items(), key=lambda kv: -kv[1]) if p in by_norm and p != engine_norm(wide)]
    plain = next(p for p in sorted(state.files) if p not in (wide, *sub[:1]) and top_level_function(state, p)
                 and len(state.files[p].data.get("functions", [])) > 3)
    return {"wide": wide, "subclassed": sub[0] if sub else plain, "plain": plain}


def engine_norm(path: str) -> str:
    return Path(path).resolve().as_posix()


def top_level_function(state: Any, path: str) -> Any:
    data = state.files[path].data
    for fn in data.get("functions", []):
        if not fn.get("context") and not fn.get("class_context") and fn.get("name", "").isidentifier() \
                and not fn["name"].startswith("__") and fn.get("end_line", 0) > fn.get("line_number", 0):
            return fn
    return None


def make_edits(root: Path, state: Any, undo: Dict[Path, bytes]) -> List[Tuple[str, Callable[[], List[str]]]]:
    picked = pick_files(root, state)
    wide, plain = Path(picked["wide"]), Path(picked["plain"])
    wide_fn = top_level_function(state, picked["wide"])
    plain_fn = top_level_function(state, picked["plain"])
    plain_module = plain.relative_to(root).with_suffix("").as_posix().replace("/", ".")
    new_file = root / "pi_cgc_profile_new.py"

    def keep(path: Path) -> None:
        if path not in undo:
            undo[path] = path.read_bytes() if path.exists() else b""
            # A journal beside the tree: a run stopped halfway is undone by the next one.
            journal(root).write_bytes(pickle.dumps(undo))

    def rewrite_line(path: Path, number: int, change: Callable[[str], str]) -> None:
        keep(path)
        lines = path.read_text(encoding="utf-8").split("\n")
        lines[number - 1] = change(lines[number - 1])
        path.write_text("\n".join(lines), encoding="utf-8")

    def body_line(fn: Dict[str, Any]) -> int:
        return int(fn["end_line"])

    def body_comment() -> List[str]:
        rewrite_line(wide, body_line(wide_fn), lambda line: line + "  # edited")
        return [wide.as_posix()]

    def body_call() -> List[str]:
        rewrite_line(plain, body_line(plain_fn), lambda line: line + "; print(len(__name__))" if line.strip() else line)
        return [plain.as_posix()]

    def append_function() -> List[str]:
        keep(plain)
        with plain.open("a", encoding="utf-8") as handle:
            handle.write("\n\ndef pi_cgc_profile_added(value):\n    return len(value)\n")
        return [plain.as_posix()]

    def rename_function() -> List[str]:
        name = wide_fn["name"]
        rewrite_line(wide, int(wide_fn["line_number"]), lambda line: line.replace(f"def {name}(", f"def {name}_renamed(", 1))
        return [wide.as_posix()]

    def rename_back() -> List[str]:
        name = wide_fn["name"]
        rewrite_line(wide, int(wide_fn["line_number"]), lambda line: line.replace(f"def {name}_renamed(", f"def {name}(", 1))
        return [wide.as_posix()]

    def add_file() -> List[str]:
        keep(new_file)
        new_file.write_text(
            f"from {plain_module} import {plain_fn['name']}\n\n\n"
            f"def pi_cgc_profile_caller(value):\n    return {plain_fn['name']}(value)\n\n\n"
            "class PiCgcProfile:\n    def run(self, value):\n        return pi_cgc_profile_caller(value)\n",
            encoding="utf-8")
        return [new_file.as_posix()]

    def edit_new_file() -> List[str]:
        keep(new_file)
        with new_file.open("a", encoding="utf-8") as handle:
            handle.write("\n\ndef pi_cgc_profile_second(value):\n    return pi_cgc_profile_caller(value)\n")
        return [new_file.as_posix()]

    def delete_file() -> List[str]:
        keep(new_file)
        new_file.unlink()
        return [new_file.as_posix()]

    star_file = root / "pi_cgc_profile_star.py"

    def add_star_file() -> List[str]:
        # As the edit-to-fresh bench's new file: a star import of a module others use, and one caller.
        keep(star_file)
        star_file.write_text(f"from {plain_module} import *\n\n\ndef pi_cgc_profile_star_caller():\n"
                             f"    return {plain_fn['name']}(1)\n", encoding="utf-8")
        return [star_file.as_posix()]

    def delete_star_file() -> List[str]:
        keep(star_file)
        star_file.unlink()
        return [star_file.as_posix()]

    def body_comment_plain() -> List[str]:
        rewrite_line(plain, body_line(plain_fn), lambda line: line + "  # edited again")
        return [plain.as_posix()]

    if SEQUENCE == "bench":
        # The edit-to-fresh bench's sequence (bench/edit-to-fresh.ts, the engine variant): a function of
        # _compression.py replaced by one of another name, a new file that star-imports it and calls the new
        # one, that file deleted; four times.
        target = root / "_compression.py"
        keep(target)
        original = target.read_text(encoding="utf-8")
        marker = lambda k: f"\n\ndef bench_fresh_{k}():\n    return {k}\n"  # noqa: E731
        target.write_text(original + marker(0), encoding="utf-8")  # before the first timed edit: see run_sequence
        sequence: List[Tuple[str, Callable[[], List[str]]]] = []
        for k in range(1, 5):
            new = root / f"bench_new_{k}.py"

            def replace(k: int = k) -> List[str]:
                target.write_text(original + marker(k), encoding="utf-8")
                return [target.as_posix()]

            def add(k: int = k, new: Path = new) -> List[str]:
                keep(new)
                new.write_text(f"from _compression import *\n\n\ndef caller_{k}():\n    return bench_fresh_{k}()\n",
                               encoding="utf-8")
                return [new.as_posix()]

            def delete(new: Path = new) -> List[str]:
                new.unlink()
                return [new.as_posix()]

            sequence += [(f"bench {k}: function replaced", replace), (f"bench {k}: new file, star import", add),
                         (f"bench {k}: that file deleted", delete)]
        return sequence

    return [
        ("body edit (comment) in a file others call", body_comment),
        ("body edit adding a call", body_call),
        ("function appended", append_function),
        ("function renamed in a file others call", rename_function),
        ("the rename undone", rename_back),
        ("new file calling a function", add_file),
        ("that file edited (function added)", edit_new_file),
        ("that file deleted", delete_file),
        ("body edit (comment) in a plain file", body_comment_plain),
        ("new file: a star import and one caller", add_star_file),
        ("that file deleted again", delete_star_file),
    ]


def journal(root: Path) -> Path:
    return root.parent / f"{root.name}.undo"


def undo_all(undo: Dict[Path, bytes], root: Path) -> None:
    for path, content in undo.items():
        if content:
            path.write_bytes(content)
        else:
            path.unlink(missing_ok=True)
    journal(root).unlink(missing_ok=True)


def run_sequence(engine: Any, root: Path, base: Any, variant: str, check: Any) -> List[Dict[str, Any]]:
    options = engine.RUN.options
    options.full_indices = variant == "full"
    options.parse_order_as_parsed = variant == "as-parsed"
    options.order_at_once = variant == "order-at-once"
    # "copied": the last state copied where an update changes it (the engine before its journal).
    options.in_place = variant != "copied"
    # "save-beside": a forked copy of the process lives through each update, as the engine's cache save aside
    # does when an edit comes during it (the copy only waits: what costs is the parent's writes after a fork).
    save_beside = variant == "save-beside"
    # "saved-before": a forked copy made and ended before each update, as a save aside that finished while the
    # engine was idle; "saved-reclaimed": the same, then the engine's idle-time page reclaim run to its end.
    saved_before = variant in ("saved-before", "saved-reclaimed")
    eng = engine.Engine.__new__(engine.Engine)
    eng.root = root
    eng.tree = engine.Tree(root, None)
    eng.trusted = True
    eng.unknown = set()
    # A trusted warm start: cgc's indices built again from the cached state, nothing resolved.
    eng.state = engine.resolve_tree(base, base.files, base.imports_map, set(), False, only=set())[0]
    for entry in eng.state.files.values():
        engine.call_facts(entry)
    # cgc's parsers load on first use: one untimed parse, so the first edit does not pay for it.
    eng.tree.parse(Path(next(iter(eng.state.files))), (0, 0, ""))
    engine.keep_heap()  # as the engine does after its start and after each request
    if journal(root).exists():
        undo_all(pickle.loads(journal(root).read_bytes()), root)
    undo: Dict[Path, bytes] = {}
    results = []
    try:
        for name, edit in make_edits(root, eng.state, undo):
            paths = edit()
            reclaim_ms = None
            if saved_before:
                saved = os.fork()
                if saved == 0:
                    os._exit(0)
                os.waitpid(saved, 0)
                if variant == "saved-reclaimed":
                    started = time.process_time()
                    pages = engine.PageReclaim()
                    pages.begin()
                    while pages.pending:
                        pages.step()
                    reclaim_ms = round((time.process_time() - started) * 1000, 1)
            clock = Clock()
            CURRENT.append(clock)
            wall = time.perf_counter()
            copy = os.fork() if save_beside else None
            if copy == 0:
                time.sleep(600)
                os._exit(0)
            profiler = None
            if any(part and part in name for part in PROFILE_EDIT.split(",")):
                import cProfile
                profiler = cProfile.Profile()
                profiler.enable()
            # The engine's update span (its journal: the last state changed in place, undone unless kept).
            # Its key order is noted for an exact undo as on an embedded database ("exact-undo"), or not, as on
            # the FalkorDB server the edit-to-fresh bench runs on.
            span = eng.in_place(exact=variant == "exact-undo")
            span.__enter__()
            try:
                old = eng.state
                new, changed, removed, added, resolved, unsure = eng.plan(paths)
                clock.lap("(other plan)")
                rewritten = engine.rewritten_owners(old, new, resolved, changed)
                clock.lap("rewritten owners")
                names = set()
                for path in changed:
                    for entry in (old.files.get(path), new.files.get(path)):
                        if entry is not None and "error" not in entry.data:
                            names.update(row["name"] for row in engine.module_import_rows(entry.data))
                engine.module_metadata(new.files, names, row_by_row=False)
                clock.lap("module metadata")
                owners = {engine.norm(p) for p in changed | rewritten}
                engine.choose_links(new, owners, changed, changed | rewritten)
                clock.lap("choose links")
            finally:
                CURRENT.pop()
                if profiler is not None:
                    import pstats
                    profiler.disable()
                    print(f"--- {variant} {name}: functions by own time", file=sys.stderr)
                    pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(25)
            wall_ms = (time.perf_counter() - wall) * 1000
            if copy:
                os.kill(copy, 9)
                os.waitpid(copy, 0)
            if check:
                if new.index_check:
                    raise SystemExit(f"{variant} {name}: kept indices differ from cgc's: {new.index_check[:5]}")
                if variant != "full" and new.contrib is None:
                    raise SystemExit(f"{variant} {name}: the indices were not kept")
                differences = engine.compare_links(new.links, eng.tree.resolve(new.files, new.imports_map)) \
                    if check == "all" else []
                if differences:
                    raise SystemExit(f"{variant} {name}: narrowed resolution differs: {differences[:3]}")
            eng.state = new
            span.__exit__(None, None, None)
            engine.keep_heap()
            laps = {k: round(v, 1) for k, v in clock.laps.items()}
            results.append({"size": len(base.files), "edit": name, "variant": variant, "cpuMs": round(sum(clock.laps.values()) - sum(
                v for k, v in clock.laps.items() if k.startswith("resolve: ")), 1), "wallMs": round(wall_ms, 1),
                "reresolved": len(resolved), "laps": laps, **({"reclaimMs": reclaim_ms} if reclaim_ms is not None else {})})
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    finally:
        undo_all(undo, root)
    return results


def main() -> None:
    if os.environ.get("PYTHONHASHSEED") != "0":
        # cgc's Python parser lists a file's functions in an order that depends on the string hash seed:
        # a state pickled by another process would see every edited file's functions reordered.
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--work", default="/tmp/pi-cgc-profile")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--variants", default="incremental")
    parser.add_argument("--check", choices=("indices", "all"))
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--json")
    parser.add_argument("--engine", help="the engine/ folder of another checkout to profile (a before/after)")
    parser.add_argument("--sequence", choices=("kinds", "bench"), default="kinds")
    parser.add_argument("--cprofile", default="", help="run the edits whose name contains one of these (comma-separated) under cProfile")
    args = parser.parse_args()
    global PROFILE_EDIT, SEQUENCE
    PROFILE_EDIT = args.cprofile
    SEQUENCE = args.sequence
    if args.engine:
        global ENGINE
        ENGINE = Path(args.engine).resolve()
    engine = load_engine()
    engine.RUN.options.check = bool(args.check)
    instrument(engine)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    variants = args.variants.split(",")
    table: Dict[int, Dict[str, Dict[str, List[float]]]] = {}
    everything = []
    for size in (int(s) for s in args.sizes.split(",")):
        root = work / f"python-{size}"
        if not root.exists():
            build_tree(root, size)
        base = initial_state(engine, root, work / f"state-{size}.pickle")
        if args.build_only:
            continue
        per_variant: Dict[str, Dict[str, List[float]]] = {v: {} for v in variants}
        for round_ in range(args.rounds):
            for variant in (variants if round_ % 2 == 0 else list(reversed(variants))):
                for row in run_sequence(engine, root, base, variant, args.check):
                    everything.append({**row, "size": size})
                    phases = per_variant[variant]
                    phases.setdefault("TOTAL (CPU, plan + non-database update)", []).append(row["cpuMs"])
                    phases.setdefault("wall", []).append(row["wallMs"])
                    for lap, ms in row["laps"].items():
                        phases.setdefault(lap, []).append(ms)
        table[size] = per_variant
    if args.json:
        Path(args.json).write_text("\n".join(json.dumps(r) for r in everything) + "\n", encoding="utf-8")
    sizes = sorted(table)
    for variant in variants:
        names: List[str] = []
        for size in sizes:
            for name in table[size][variant]:
                if name not in names:
                    names.append(name)
        print(f"\n{variant}: median CPU ms per update ({', '.join(str(s) for s in sizes)} files)", file=sys.stderr)
        for name in names:
            cells = []
            for size in sizes:
                values = table[size][variant].get(name)
                cells.append(f"{statistics.median(values):9.1f}" if values else f"{'-':>9}")
            print(f"  {name:<45}{''.join(cells)}", file=sys.stderr)


if __name__ == "__main__":
    main()
