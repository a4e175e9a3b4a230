#!/usr/bin/env python3
"""Parity harness for pi_cgc_engine.py: replays real changes and, after every step, compares the
engine's graph with a fresh `cgc index --force` of an identical copy of the tree (canonical dumps,
0 differing lines expected).

  python engine/parity.py --scenario small|long|long-3.13 --work DIR [--falkor-port N | --neo4j-uris ENGINE_URI,FRESH_URI]
                          [--max-steps N] [--late-start] [--no-check] [--watcher] [--no-worktree]

The backend is KùzuDB (cgc's embedded default on this venv) unless a FalkorDB server's port or two Neo4j
servers are given. "small" replays wsgiref (3.10 → 3.13), a branch switch back to 3.10 and mechanical
changes, small enough for KùzuDB's slow full indexes; "long" replays importlib (3.10 → 3.12) and files in six other languages; "long-3.13"
goes on to 3.13.

Run by the project's venv python (the one that owns cgc). One JSON line per step on stdout, then a
summary line; exit 0 when every step had 0 differing lines. The changes are other people's: the
standard library as it changed between the Pythons in ~/.pyenv/versions, applied file by file, and
small files from the npm packages in node_modules (JS, TS, Rust, C, C++) and Go's own sources.

On KùzuDB (without --late-start, --watcher or --no-worktree) a last step commits the replayed tree as the main
checkout of a git repository and makes a linked worktree's graph from its graph (`index --from-main`), compared
with `cgc index --force` of the worktree into another context.

With --watcher (a server backend only), the same replay measures cgc's own watcher instead of the engine:
`cgc watch` keeps the graph of the first tree, the engine only dumps it, and each step's differing lines
(counted per edge type) are what a graph kept by `cgc watch` differs from a full index.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Set

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
ENGINE = HERE / "pi-cgc-engine.py"
FAULT_ENGINE = HERE / "tests" / "fault_engine.py"
PYTHON = Path(sys.executable)
CGC = PYTHON.parent / "cgc"
PYENV = Path.home() / ".pyenv" / "versions"
NODE_MODULES = PROJECT / "node_modules"
# The engine's serve flags (--check unless --no-check), and whether it runs with a planted wrong narrowing.
ENGINE_FLAGS: List[str] = []
NARROW_FAULT = [False]
# The engine's WRITTEN_ELSEWHERE (not imported: importing the engine turns this process's stdout to stderr).
WRITTEN_ELSEWHERE = "graph-written-elsewhere"


def stdlib(version: str, package: str) -> Path:
    matches = sorted(PYENV.glob(f"{version}.*/lib/python{version}/{package}"))
    if not matches:
        raise SystemExit(f"parity: no Python {version} under {PYENV} (the replay needs 3.10 … 3.13)")
    return matches[-1]


def py_files(folder: Path) -> Dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*.py")) if "__pycache__" not in p.parts}


@dataclass
class Step:
    name: str
    apply: Callable[[Path], List[Path]]  # mutates the tree, returns the paths it touched


def copy_in(source: Path, relative: str) -> Callable[[Path], List[Path]]:
    def apply(root: Path) -> List[Path]:
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        return [target]

    return apply


# A class docstring cgc's parser unescapes into a NUL character (as in mypy's util.py), and a file calling into
# it: on FalkorDB cgc's write of the file fails at its classes (its functions stay) and its links are not resolved.
NUL_CLASS = 'def helper(x):\n    return x\n\n\nclass Holder:\n    """holds a \\0 once unescaped"""\n\n' \
            '    def get(self, y):\n        return helper(y)\n'
NUL_CALLER = 'from escapes.holder import Holder, helper\n\n\ndef calls_them():\n    return helper(Holder().get(2))\n'


def remove(relative: str) -> Callable[[Path], List[Path]]:
    def apply(root: Path) -> List[Path]:
        target = root / relative
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()
        return [target]

    return apply


def move(old: str, new: str) -> Callable[[Path], List[Path]]:
    def apply(root: Path) -> List[Path]:
        (root / new).parent.mkdir(parents=True, exist_ok=True)
        (root / old).rename(root / new)
        return [root / old, root / new]

    return apply


def append_line(relative: str, line: str) -> Callable[[Path], List[Path]]:
    def apply(root: Path) -> List[Path]:
        target = root / relative
        with target.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
        return [target]

    return apply


def rename_symbol(relative: str, old: str, new: str) -> Callable[[Path], List[Path]]:
    """Renames a definition in one file only, so other files keep calling the old name."""

    def apply(root: Path) -> List[Path]:
        target = root / relative
        text = target.read_text(encoding="utf-8")
        target.write_text(text.replace(f"def {old}(", f"def {new}(", 1), encoding="utf-8")
        return [target]

    return apply


def rename_class(relative: str, old: str, new: str) -> Callable[[Path], List[Path]]:
    """Renames a class in its own file only, so the subclasses elsewhere keep naming the old one."""

    def apply(root: Path) -> List[Path]:
        target = root / relative
        text = target.read_text(encoding="utf-8")
        renamed = re.sub(rf"^class {re.escape(old)}\b", f"class {new}", text, count=1, flags=re.M)
        assert renamed != text, f"no class {old} in {relative}"
        target.write_text(renamed, encoding="utf-8")
        return [target]

    return apply


def insert_method(relative: str, class_name: str, method: str) -> Callable[[Path], List[Path]]:
    """Inserts a method right after a class's first line: every line below it moves down."""

    def apply(root: Path) -> List[Path]:
        target = root / relative
        lines = target.read_text(encoding="utf-8").split("\n")
        at = next(i for i, line in enumerate(lines) if re.match(rf"class {re.escape(class_name)}\b.*:\s*$", line))
        lines[at + 1:at + 1] = ["    " + line if line else line for line in method.split("\n")]
        target.write_text("\n".join(lines), encoding="utf-8")
        return [target]

    return apply


def write_file(relative: str, text: str) -> Callable[[Path], List[Path]]:
    def apply(root: Path) -> List[Path]:
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return [target]

    return apply


def prepend_lines(relative: str, lines: str) -> Callable[[Path], List[Path]]:
    def apply(root: Path) -> List[Path]:
        target = root / relative
        target.write_text(lines + target.read_text(encoding="utf-8"), encoding="utf-8")
        return [target]

    return apply


ADDED_METHOD = "def pi_cgc_added_method(self):\n    return self\n"
RUNNER = """def run_with(callback, value):
    return callback(value)


def run_twice(callback, value):
    return callback(callback(value))
"""
USER = """from callbacks.runner import run_with, run_twice


def double(value):
    return value * 2


def main():
    return run_with(double, 21) + run_twice(double, 1)
"""
OTHER = """from callbacks.runner import run_with


def double(value):
    return value + value


def other():
    return run_with(double, 1)
"""


def external_parent_steps(folder: str) -> List[Step]:
    """Classes whose parent is outside the tree: cgc makes an ExternalClass node for it, held only by the
    INHERITS edge, so it must go when the edge does — with the file that had it, or when the parent is found in
    the tree after all and the subclass's file, itself unchanged, has its links written again."""
    gone, found = f"{folder}/pi_cgc_outside.py", f"{folder}/pi_cgc_later_sub.py"
    return [
        Step("new file: a class whose parent is outside the tree",
             write_file(gone, "from pi_cgc_elsewhere import PiCgcOutsideBase\n\n\nclass PiCgcOutside(PiCgcOutsideBase):\n    pass\n")),
        Step("that file deleted: its outside parent has no edge left", remove(gone)),
        Step("new file: a class whose parent is not in the tree yet",
             write_file(found, "class PiCgcLaterSub(PiCgcLater):\n    pass\n")),
        # No import: cgc resolves a bare parent name that one file of the tree defines.
        Step("the parent arrives: the unchanged subclass's file now links into the tree",
             write_file("pi_cgc_later.py", "class PiCgcLater:\n    pass\n")),
    ]


def narrowing_steps() -> List[Step]:
    """Changes whose effect reaches files the change does not touch, written here (not taken from
    anyone's history): cgc's callback pre-pass links a function that calls its parameter to every
    function passed to it by name, in any file, so these files' rows change with other files."""
    return [
        Step("callback: a function that calls its parameter", write_file("callbacks/runner.py", RUNNER)),
        Step("callback: another file passes its function by name", write_file("callbacks/user.py", USER)),
        Step("callback: a third file defines a function of the same name and passes it", write_file("callbacks/other.py", OTHER)),
        Step("callback: the passed function moves down its file", prepend_lines("callbacks/user.py", "# moved\n# down\n\n")),
        Step("callback: the passing file is deleted", remove("callbacks/user.py")),
    ]


def version_steps(package: str, versions: List[str], prefix: str) -> tuple[Dict[str, Path], List[Step]]:
    """The package at versions[0], then every file that differs in each later version, one per step."""
    first = py_files(stdlib(versions[0], package))
    steps: List[Step] = []
    previous = first
    for version in versions[1:]:
        current = py_files(stdlib(version, package))
        for rel in sorted(set(previous) | set(current)):
            target = f"{prefix}/{rel}"
            if rel not in current:
                steps.append(Step(f"{version} deletes {rel}", remove(target)))
            elif rel not in previous or current[rel].read_bytes() != previous[rel].read_bytes():
                steps.append(Step(f"{version} {'adds' if rel not in previous else 'changes'} {rel}", copy_in(current[rel], target)))
        previous = current
    return {f"{prefix}/{rel}": path for rel, path in first.items()}, steps


def branch_switch(package: str, version: str, prefix: str) -> Callable[[Path], List[Path]]:
    """A checkout: every file of the package as `version` has it, and the files it lacks gone, as one update."""
    def apply(root: Path) -> List[Path]:
        wanted = py_files(stdlib(version, package))
        here = py_files(root / prefix)
        touched = []
        for rel in sorted(set(here) - set(wanted)):
            here[rel].unlink()
            touched.append(here[rel])
        for rel, source in wanted.items():
            target = root / prefix / rel
            if not target.exists() or target.read_bytes() != source.read_bytes():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
                touched.append(target)
        return touched

    return apply


def other_language_steps() -> List[Step]:
    nm = NODE_MODULES
    steps = [
        Step("js: cross-spawn lib (4 files calling each other)", lambda root: [
            *copy_in(nm / "cross-spawn/lib/parse.js", "js/lib/parse.js")(root),
            *copy_in(nm / "cross-spawn/lib/enoent.js", "js/lib/enoent.js")(root),
            *copy_in(nm / "cross-spawn/lib/util/escape.js", "js/lib/util/escape.js")(root),
            *copy_in(nm / "cross-spawn/lib/util/resolveCommand.js", "js/lib/util/resolveCommand.js")(root),
        ]),
        Step("js: a file the others require arrives", copy_in(nm / "cross-spawn/lib/util/readShebang.js", "js/lib/util/readShebang.js")),
        Step("ts: mistralai types", lambda root: [
            *copy_in(nm / "@mistralai/mistralai/src/types/rfcdate.ts", "ts/types/rfcdate.ts")(root),
            *copy_in(nm / "@mistralai/mistralai/src/types/streams.ts", "ts/types/streams.ts")(root),
        ]),
        Step("rust: clipboard common.rs + mod.rs", lambda root: [
            *copy_in(nm / "@mariozechner/clipboard/src/clipboard_rs/common.rs", "rs/common.rs")(root),
            *copy_in(nm / "@mariozechner/clipboard/src/clipboard_rs/mod.rs", "rs/mod.rs")(root),
        ]),
        Step("c: doomgeneric_pi.c", copy_in(nm / "@mariozechner/pi-coding-agent/examples/extensions/doom-overlay/doom/doomgeneric_pi.c", "c/doomgeneric_pi.c")),
        Step("cpp: koffi uv.cc + a header", lambda root: [
            *copy_in(nm / "koffi/src/koffi/src/uv.cc", "cpp/uv.cc")(root),
            *copy_in(nm / "koffi/vendor/node-api-headers/include/uv/version.h", "cpp/version.h")(root),
        ]),
    ]
    go_list = Path("/usr/local/go/src/container/list/list.go")
    if go_list.exists():
        steps.append(Step("go: container/list", copy_in(go_list, "go/list.go")))
    return steps


APPENDED = "\n\ndef pi_cgc_appended(value):\n    return repr(value)\n"


def scenario(name: str) -> tuple[Dict[str, Path], List[Step]]:
    # "long" stops at 3.12 to keep the vitest case within CI's budget; "long-3.13" goes to 3.13.
    versions = ["3.10", "3.11", "3.12", "3.13"] if name == "long-3.13" else ["3.10", "3.11", "3.12"]
    if name == "small":
        initial, steps = version_steps("wsgiref", ["3.10", "3.11", "3.12", "3.13"], "wsgiref")
        # First, the agent's most common edit: a file others call gains a function at its end, so
        # every row pointing into it is unchanged and only the restore of incoming edges writes it.
        steps.insert(0, Step("append a function to a file others call", append_line("wsgiref/util.py", APPENDED)))
        steps += [
            Step("branch switch: 3.10's wsgiref checked out, every file at once", branch_switch("wsgiref", "3.10", "wsgiref")),
            Step("rename a function other files call", rename_symbol("wsgiref/util.py", "guess_scheme", "guess_url_scheme")),
            Step("a method inserted at the top of a class other files subclass",
                 insert_method("wsgiref/handlers.py", "SimpleHandler", ADDED_METHOD)),
            Step("rename a class another file subclasses", rename_class("wsgiref/handlers.py", "SimpleHandler", "PlainHandler")),
            *external_parent_steps("wsgiref"),
            *narrowing_steps(),
            Step("move a module into a new folder", move("wsgiref/headers.py", "wsgiref/extra/headers.py")),
            Step("new file whose names collide with existing ones", copy_in(stdlib("3.13", "wsgiref") / "util.py", "wsgiref/util_copy.py")),
            Step("delete a file others import", remove("wsgiref/util.py")),
            Step(".cgcignore starts ignoring the new folder", append_line(".cgcignore", "wsgiref/extra/")),
            Step("js: a file", copy_in(NODE_MODULES / "cross-spawn/lib/util/escape.js", "js/escape.js")),
            Step("ts: a file", copy_in(NODE_MODULES / "@mistralai/mistralai/src/types/rfcdate.ts", "ts/rfcdate.ts")),
        ]
        return initial, steps
    initial, steps = version_steps("importlib", versions, "importlib")
    steps.insert(0, Step("append a function to a file others call", append_line("importlib/_bootstrap.py", APPENDED)))
    steps += [
        Step("rename a function other files call", rename_symbol("importlib/_bootstrap.py", "_call_with_frames_removed", "_call_frames_removed")),
        Step("a method inserted at the top of a class other files subclass",
             insert_method("importlib/_abc.py", "Loader", ADDED_METHOD)),
        Step("rename a class other files subclass", rename_class("importlib/_abc.py", "Loader", "BaseLoader")),
        *external_parent_steps("importlib"),
        *narrowing_steps(),
        Step("move a module into a new folder", move("importlib/machinery.py", "importlib/moved/machinery.py")),
        Step("new file whose names collide with existing ones", copy_in(stdlib("3.10", "importlib") / "util.py", "importlib/util_old.py")),
        Step("delete a file others import", remove("importlib/util.py")),
        Step("new folder with files", lambda root: [
            *copy_in(stdlib("3.13", "json") / "decoder.py", "newpkg/decoder.py")(root),
            *copy_in(stdlib("3.13", "json") / "scanner.py", "newpkg/scanner.py")(root),
            root / "newpkg",
        ]),
        Step(".cgcignore starts ignoring a folder", append_line(".cgcignore", "importlib/moved/")),
        Step("a docstring with a NUL once unescaped, and a file that calls into its file", lambda root: [
            *write_file("escapes/holder.py", NUL_CLASS)(root), *write_file("escapes/caller.py", NUL_CALLER)(root)]),
        Step("the NUL goes from the docstring", write_file("escapes/holder.py", NUL_CLASS.replace("\\0", "NUL"))),
        *other_language_steps(),
        Step("delete a whole folder", remove("js")),
    ]
    return initial, steps


class Engine:
    def __init__(self, root: Path, env: Dict[str, str], cache: Path, hold_ms: int = 500, replayed: bool = True):
        # The engine of the replayed tree runs with the harness's flags (and fault); the fresh side's only dumps.
        program = [str(FAULT_ENGINE), "--narrow-fault"] if replayed and NARROW_FAULT[0] else [str(ENGINE)]
        self.proc = subprocess.Popen(
            [str(PYTHON), *program, "serve", "--root", str(root), "--cache-dir", str(cache), "--hold-ms", str(hold_ms),
             *(ENGINE_FLAGS if replayed else [])],
            cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sys.stderr, text=True,
        )
        self.next_id = 0
        self.ready = self.read()

    def read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"parity: the engine exited ({self.proc.wait()})")
        return json.loads(line)

    def ask(self, op: str, **fields: object) -> dict:
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"id": self.next_id, "op": op, **fields}) + "\n")
        self.proc.stdin.flush()
        answer = self.read()
        assert answer.get("id") == self.next_id, answer
        return answer

    def stop(self) -> int:
        self.ask("shutdown")
        return self.proc.wait(timeout=60)


# --watcher: cgc's watcher logs through `logging` at INFO, which the CLI leaves at WARNING; configured
# first, basicConfig here wins over the CLI's own call. The entry point is .venv/bin/cgc's.
WATCH_CODE = (
    "import logging, sys\n"
    "logging.basicConfig(level=logging.INFO, stream=sys.stderr, format='%(asctime)s %(levelname)s %(name)s: %(message)s')\n"
    "sys.argv = ['cgc', 'watch', sys.argv[1]]\n"
    "from codegraphcontext.cli.main import app\n"
    "sys.exit(app())\n"
)
WATCH_ATTACHED = "Monitoring for file changes"
WATCH_STARTED = re.compile(r"File change detected \(incremental update\): (.*)$")
WATCH_FINISHED = re.compile(r"\[INCREMENTAL\] Done\. Graph refresh for (.*) complete!"
                            r"|\[WATCH\] removed stale node for moved file: (.*)$"
                            r"|\[WATCH\] failed to remove (.*?): ")
# The watcher handles a created or modified file only with one of cgc 0.6.13's GraphBuilder.parsers
# suffixes (Path.suffix, so never ".d.ts"); a deleted file it handles whatever its suffix.
WATCHED_SUFFIXES = {
    ".py", ".ipynb", ".js", ".jsx", ".mjs", ".cjs", ".go", ".ts", ".mts", ".cts", ".tsx", ".cpp", ".h", ".hpp",
    ".hh", ".rs", ".c", ".java", ".rb", ".cs", ".php", ".kt", ".scala", ".sc", ".swift", ".hs", ".dart", ".pl",
    ".pm", ".lua", ".ex", ".exs", ".el", ".sol", ".html", ".css", ".svelte", ".vue",
}
WATCH_DEBOUNCE_S = 2.0  # the watcher's per-path debounce
WATCH_STEP_TIMEOUT_S = 90.0
WATCH_ATTACH_TIMEOUT_S = 180.0


def files_under(root: Path) -> Set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


class Watcher:
    """The real `cgc watch ROOT`, in its own session (it is known to ignore SIGINT at times), its output
    in a log file that is read as it grows."""

    def __init__(self, root: Path, env: Dict[str, str], log_path: Path):
        # The ignore rules as the watcher loads them at its start: it never reads .cgcignore again.
        from codegraphcontext.core.cgcignore import build_ignore_spec
        from codegraphcontext.tools.indexing.constants import DEFAULT_IGNORE_PATTERNS
        self.ignore = build_ignore_spec(ignore_root=root, default_patterns=DEFAULT_IGNORE_PATTERNS)[0]
        self.root = root
        self.log_path = log_path
        self.log_file = log_path.open("wb")
        self.proc = subprocess.Popen(
            [str(PYTHON), "-c", WATCH_CODE, str(root)], cwd=root,
            # cgc drops its own log lines below ENABLE_APP_LOGS (CRITICAL unless set); they carry emoji.
            env=dict(env, ENABLE_APP_LOGS="INFO", PYTHONUNBUFFERED="1", PYTHONIOENCODING="utf-8"),
            stdin=subprocess.DEVNULL, stdout=self.log_file, stderr=subprocess.STDOUT, start_new_session=True,
        )
        self.reader = log_path.open("rb")
        self.rest = b""

    def lines(self) -> List[str]:
        self.rest += self.reader.read()
        *complete, self.rest = self.rest.split(b"\n")
        return [line.decode("utf-8", "replace") for line in complete]

    def tail(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")[-3000:]

    def between_steps(self) -> List[str]:
        """What the watcher started or ended after the last step's wait (then the step's graph was dumped)."""
        return [line[-300:] for line in self.lines() if WATCH_STARTED.search(line) or WATCH_FINISHED.search(line)
                or line.startswith(("Exception in thread", "Traceback"))]

    def wait_attached(self) -> None:
        deadline = time.monotonic() + WATCH_ATTACH_TIMEOUT_S
        while not any(WATCH_ATTACHED in line for line in self.lines()):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"parity: `cgc watch` did not attach (exit {self.proc.poll()}):\n{self.tail()}")
            time.sleep(0.2)

    def expects(self, touched: List[Path], existed: Set[Path]) -> Set[str]:
        """The touched files the watcher ends with a log line: created or modified ones with a parsed
        suffix, any deleted one (its handler logs no end for an ignored one, nor acts on it)."""
        paths: Set[Path] = set()
        for path in touched:
            paths |= {p for p in existed if p == path or path in p.parents}
            paths |= files_under(path) if path.is_dir() else {path} if path.is_file() else set()
        return {str(p) for p in paths
                if not self.ignore.match_file(p.relative_to(self.root).as_posix())
                and (not p.exists() or p.suffix in WATCHED_SUFFIXES)}

    def settle(self, expected: Set[str], applied: float) -> Dict[str, Any]:
        """Waits until the watcher has ended every expected path (never before a debounce has passed,
        so that a handler nobody expected still starts and shows), at most WATCH_STEP_TIMEOUT_S."""
        finished: Set[str] = set()
        started: List[str] = []
        crashed: List[str] = []
        tracebacks = 0
        running: Optional[str] = None  # handlers run one at a time (the watcher's update lock)
        last = applied
        while True:
            for line in self.lines():
                start, end = WATCH_STARTED.search(line), WATCH_FINISHED.search(line)
                if start:
                    running = start.group(1)
                    started.append(running)
                elif end:
                    finished.add(next(g for g in end.groups() if g is not None))
                    running, last = None, time.monotonic()
                elif line.startswith("Exception in thread"):
                    # A handler that raised logs no end: its path is done with, as far as it goes.
                    if running is not None:
                        finished.add(running)
                        crashed.append(running)
                    running, last = None, time.monotonic()
                elif line.startswith("Traceback"):
                    tracebacks += 1
            now = time.monotonic()
            exited = self.proc.poll() is not None
            timed_out = now - applied > WATCH_STEP_TIMEOUT_S
            if exited or timed_out or (expected <= finished and now - applied > WATCH_DEBOUNCE_S + 1):
                break
            time.sleep(0.2)

        def rel(paths: Any) -> List[str]:
            return sorted(Path(p).relative_to(self.root).as_posix() if Path(p).is_relative_to(self.root) else p
                          for p in paths)

        return {"watcherTimedOut": timed_out and not exited, "watcherExited": self.proc.poll(),
                "watcherMs": round((last - applied) * 1000) if finished else None,
                "watcherExpected": rel(expected), "watcherEnded": rel(finished),
                "watcherUnended": rel(expected - finished), "watcherStarted": rel(started),
                "watcherCrashed": rel(crashed), "watcherTracebacks": tracebacks}

    def stop(self) -> Dict[str, Any]:
        """SIGINT as Ctrl+C sends it; the process group is killed if the watcher is still alive 10 s later."""
        killed = False
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
                killed = True
        self.log_file.close()
        return {"watcherExit": self.proc.returncode, "watcherKilled": killed}


def line_type(line: str) -> str:
    """An edge line's relation type ("E CALLS a -> b {…}"), or "N <label>" for a node line."""
    tag, label = line.split(" ", 2)[:2]
    return label if tag == "E" else f"N {label}"


def by_type(lines: List[str]) -> Dict[str, int]:
    return dict(sorted(collections.Counter(line_type(line) for line in lines).items()))


def run(cmd: List[str], cwd: Path, env: Dict[str, str]) -> None:
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"parity: {' '.join(cmd)} failed ({result.returncode}):\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")


def differing(a: List[str], b: List[str]) -> tuple[List[str], List[str]]:
    ca, cb = collections.Counter(a), collections.Counter(b)
    return sorted((ca - cb).elements()), sorted((cb - ca).elements())


GIT_ENV = {"GIT_AUTHOR_NAME": "parity", "GIT_AUTHOR_EMAIL": "parity@pi-cgc.invalid", "GIT_COMMITTER_NAME": "parity",
           "GIT_COMMITTER_EMAIL": "parity@pi-cgc.invalid", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null"}
# The worktree's folder name holds "os", which the replayed files import and the main checkout's path does not:
# cgc resolves some of their calls differently there (relocate.root_sensitive).
WORKTREE_NAME = "feature-os-wt"


def worktree_from_main(work: Path, main_root: Path, env: Dict[str, str], main_cache: Path) -> Dict[str, Any]:
    """The replayed tree committed as the main checkout of a git repository, a linked worktree one commit apart
    (a function appended, a file deleted, one added), its graph made from the main checkout's (`index --from-main`),
    and compared with `cgc index --force` of the same worktree into another context. The engine of the main
    checkout is stopped first: its cache is the graph's model."""
    def git(cwd: Path, *args: str) -> None:
        subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**env, **GIT_ENV})

    git(main_root, "init", "-q", "-b", "main")
    git(main_root, "add", "-A")
    git(main_root, "commit", "-qm", "the replayed tree")
    worktree = work / WORKTREE_NAME
    git(main_root, "worktree", "add", "-q", "-b", "feature", str(worktree))
    python = sorted(p for p in worktree.rglob("*.py") if ".git" not in p.parts)
    with python[0].open("a", encoding="utf-8") as handle:
        handle.write(APPENDED)
    python[-1].unlink()
    (worktree / "feature_only.py").write_text("def feature_only(value):\n    return repr(value)\n", encoding="utf-8")
    git(worktree, "add", "-A")
    git(worktree, "commit", "-qm", "feature")
    started = time.monotonic()
    for name in ("wt-moved", "wt-full"):
        run([str(CGC), "context", "create", name, "--database", "kuzudb"], worktree, env)
    moved = subprocess.run([str(PYTHON), str(ENGINE), "--cache-dir", str(work / "cache-wt"), "index", str(worktree),
                            "--context", "wt-moved", "--from-main", str(main_root), "--main-cache-dir", str(main_cache)],
                           cwd=worktree, env=env, capture_output=True, text=True, timeout=3600)
    moved_ms = round((time.monotonic() - started) * 1000)
    taken = next((line for line in moved.stdout.splitlines() if "from the main checkout's graph in" in line), None)
    index_start = time.monotonic()
    run([str(CGC), "index", "--force", str(worktree), "--context", "wt-full"], worktree, env)
    index_ms = round((time.monotonic() - index_start) * 1000)
    dumps = []
    for name in ("wt-moved", "wt-full"):
        out = work / f"{name}.dump"
        run([str(PYTHON), str(ENGINE), "dump", "--root", str(worktree), "--context", name, "--out", str(out),
             "--dangling"], worktree, env)
        dumps.append(out.read_text().splitlines())
    only_moved, only_full = differing(dumps[0], dumps[1])
    return {"name": "worktree from main: a linked worktree one commit apart, its graph from the main checkout's",
            "ok": moved.returncode == 0 and taken is not None, "taken": taken,
            "reason": None if taken else (moved.stderr[-500:] or moved.stdout[-500:]), "ms": moved_ms,
            "lines": len(dumps[0]), "differing": len(only_moved) + len(only_full), "freshIndexMs": index_ms,
            "onlyEngine": only_moved[:5], "onlyFresh": only_full[:5]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", choices=["small", "long", "long-3.13"], required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--falkor-port", type=int, help="a FalkorDB server on 127.0.0.1 (any scenario)")
    parser.add_argument("--neo4j-uris", help="ENGINE_URI,FRESH_URI: two Neo4j servers (one database each), any scenario")
    parser.add_argument("--max-steps", type=int, help="replay only the first N steps")
    parser.add_argument("--late-start", action="store_true",
                        help="stop the engine before each change and start it after, as a session's engine starts "
                             "at its first change: in turn from its cache (the graph's model), told that something "
                             "else wrote the graph (it then never held the old content), and after a full index "
                             "just before the change, told the graph was rebuilt (the changed paths unknown); and "
                             "a graph `cgc index` wrote before the change, adopted by difference after it")
    parser.add_argument("--no-check", action="store_true",
                        help="run the engine without --check (its narrowed resolution then goes unchecked)")
    parser.add_argument("--narrow-fault", action="store_true",
                        help="the engine with a planted wrong narrowing (engine/tests/fault_engine.py): the check must refuse it")
    parser.add_argument("--bulk", choices=["auto", "always", "never"],
                        help="the engine's --bulk: on KùzuDB, write each update's rows in bulk where it pays, always, "
                             "or never")
    parser.add_argument("--no-worktree", action="store_true",
                        help="skip the last step on KùzuDB: a linked worktree's graph from the main checkout's")
    parser.add_argument("--watcher", action="store_true",
                        help="measure cgc's own watcher instead of the engine: `cgc watch` keeps the first tree's "
                             "graph, the engine only dumps it (needs --falkor-port or --neo4j-uris)")
    args = parser.parse_args()
    if args.watcher and not (args.falkor_port or args.neo4j_uris):
        # On KùzuDB the watcher holds the embedded database's lock for its whole life: nothing else could dump.
        raise SystemExit("parity: --watcher needs a server backend (--falkor-port or --neo4j-uris), "
                         "since on KùzuDB `cgc watch` holds the database's lock and nothing else can read the graph")
    if args.watcher and args.late_start:
        raise SystemExit("parity: --watcher and --late-start do not go together (the engine never updates with --watcher)")
    work = Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    # Both trees share a basename, so a repository-relative dump is comparable line for line.
    engine_root, fresh_root = work / "engine" / "repo", work / "fresh" / "repo"
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "TREE_SITTER_LANGUAGE_PACK_LIBS_DIR")}
    base.update(COLUMNS="10000", ENABLE_AUTO_WATCH="false")
    envs = {}
    for side in ("engine", "fresh"):
        home = work / f"home-{side}"
        home.mkdir(parents=True)
        env = dict(base, HOME=str(home))
        if args.neo4j_uris:
            # Neo4j Community has one database per server: each side gets a server of its own.
            uri = args.neo4j_uris.split(",")[0 if side == "engine" else 1]
            env.update(NEO4J_URI=uri, NEO4J_USERNAME="neo4j", NEO4J_PASSWORD="pi-cgc-test", DEFAULT_DATABASE="neo4j")
        elif args.falkor_port:
            env.update(FALKORDB_HOST="127.0.0.1", FALKORDB_PORT=str(args.falkor_port),
                       DEFAULT_DATABASE="falkordb-remote", FALKORDB_GRAPH_NAME=f"parity_{side}_{hashlib.sha1(str(work).encode()).hexdigest()[:8]}")
        envs[side] = env
    # The engine checks each narrowed resolution against the full one and refuses an update on any
    # difference, so a step that narrows wrongly fails here even when the graphs happen to agree.
    if not args.no_check:
        ENGINE_FLAGS.append("--check")
    NARROW_FAULT[0] = args.narrow_fault
    if args.bulk:
        ENGINE_FLAGS.extend(["--bulk", args.bulk])

    initial, steps = scenario(args.scenario)
    steps = steps[: args.max_steps] if args.max_steps else steps
    for rel, source in initial.items():
        copy_in(source, rel)(engine_root)
    # cgc writes a default .cgcignore into a root that has none; start with it so both trees agree.
    (engine_root / ".cgcignore").write_text("# pi-cgc parity\n", encoding="utf-8")
    start = time.monotonic()
    run([str(CGC), "index", "--force", str(engine_root)], engine_root, envs["engine"])
    watcher: Optional[Watcher] = None
    if args.watcher:
        # The engine only dumps the graph the watcher keeps: it is never told to update, nor that the graph
        # was rebuilt, and its cache is its own.
        engine = Engine(engine_root, envs["engine"], work / "cache-dumper")
        watcher = Watcher(engine_root, envs["engine"], work / "watcher.log")
        watcher.wait_attached()
        print(json.dumps({"event": "ready", **engine.ready, "mode": "watcher", "watcherLog": str(watcher.log_path)}), flush=True)
    else:
        engine = Engine(engine_root, envs["engine"], work / "cache")
        # As pi-cgc does after its own full index: the tree the engine read is what the graph was built from.
        told = engine.ask("rebuilt", unknown=[])
        assert told.get("ok"), told
        print(json.dumps({"event": "ready", **engine.ready, "rebuilt": told}), flush=True)
    failures = 0
    total_diff = 0
    fresh_reader: Optional[Engine] = None
    total_by_type: collections.Counter = collections.Counter()
    timed_out_steps = 0
    watcher_stop: Dict[str, Any] = {}
    stopped = False
    rows = len(steps)  # and the worktree step, where it runs
    try:
        for number, step in enumerate(steps, 1):
            step_start = time.monotonic()
            # With --late-start, three ways in turn: from the cache (the graph's model); told that something
            # else wrote the graph since (pi-cgc marks it so before a full index), so that the engine reads
            # the tree from the disk after the change and never held the changed files' old content; and
            # pi-cgc's own full index just before the change, then told after its start that the graph was
            # rebuilt, the changed paths unknown (changed since the index read them).
            # And a fourth: `cgc index` wrote the graph just before the change, and the engine, started after it
            # without a model of that graph, adopts it by difference (the change among what differs).
            mode = ("cache", "elsewhere", "rebuilt", "adopt")[(number - 1) % 4] if args.late_start else "watcher" if args.watcher else "running"
            # The files before the change: a deleted folder's files are the watcher's deleted paths.
            existed = files_under(engine_root) if watcher else set()
            late = watcher.between_steps() if watcher else []
            if args.late_start:
                engine.stop()
                if mode != "cache":
                    (work / "cache").mkdir(exist_ok=True)
                    (work / "cache" / WRITTEN_ELSEWHERE).write_text("parity\n", encoding="utf-8")
                if mode in ("rebuilt", "adopt"):
                    run([str(CGC), "index", "--force", str(engine_root)], engine_root, envs["engine"])
            touched = step.apply(engine_root)
            adopted: Dict[str, Any] = {}
            if args.late_start:
                engine = Engine(engine_root, envs["engine"], work / "cache")
            if mode == "adopt":
                adopted = engine.ask("adopt")
            if mode == "rebuilt":
                told = engine.ask("rebuilt", unknown=[str(p) for p in touched])
                assert told.get("ok"), told
            if watcher:
                waited = watcher.settle(watcher.expects(touched, existed), time.monotonic())
                answer: Dict[str, Any] = {}
            else:
                answer = engine.ask("update", paths=[str(p) for p in touched])
            shutil.rmtree(fresh_root, ignore_errors=True)
            shutil.copytree(engine_root, fresh_root)
            index_start = time.monotonic()
            run([str(CGC), "index", "--force", str(fresh_root)], fresh_root, envs["fresh"])
            index_ms = round((time.monotonic() - index_start) * 1000)
            fresh_dump = work / "fresh.dump"
            # One long-lived reader of the fresh graph saves a Python start per step; with --hold-ms 0
            # it lets go of KùzuDB's lock right after each dump, before the next index needs it.
            fresh_reader = fresh_reader or Engine(fresh_root, envs["fresh"], work / "cache-fresh", hold_ms=0, replayed=False)
            # Each graph holds its tree alone: a node left with no edge (a purge missed) is the engine's to answer for.
            fresh_answer = fresh_reader.ask("dump", out=str(fresh_dump), dangling=True)
            assert fresh_answer.get("ok"), fresh_answer
            engine_dump = work / "engine.dump"
            dumped = engine.ask("dump", out=str(engine_dump), dangling=True)
            only_engine, only_fresh = differing(engine_dump.read_text().splitlines(), fresh_dump.read_text().splitlines())
            diff = len(only_engine) + len(only_fresh)
            total_diff += diff
            failures += diff > 0 or (not watcher and not answer.get("ok")) or (bool(adopted) and not adopted.get("ok"))
            row = {
                "step": number, "name": step.name, "ok": answer.get("ok"), "code": answer.get("code"),
                "ms": answer.get("ms"), "bulk": answer.get("bulk"), "lockMs": answer.get("lockMs"), "openMs": answer.get("openMs"),
                "resolveMs": answer.get("resolveMs"), "checkMs": answer.get("checkMs"),
                "reresolved": answer.get("reresolved"), "resolved": answer.get("resolved"), "unsure": answer.get("unsure"),
                "trusted": engine.ready.get("trusted"), "mode": mode, "adopted": adopted.get("adopted") or answer.get("adopted"),
                "adoptOk": adopted.get("ok") if adopted else None,
                "reason": answer.get("reason"), "lines": dumped.get("lines"), "differing": diff,
                "freshIndexMs": index_ms, "stepMs": round((time.monotonic() - step_start) * 1000),
                "onlyEngine": only_engine[:5], "onlyFresh": only_fresh[:5],
            }
            if watcher:
                # onlyEngine is what the watcher's graph holds and a full index does not.
                total_by_type.update(by_type(only_engine + only_fresh))
                timed_out_steps += waited["watcherTimedOut"]
                diffs = work / "watcher-diffs"
                diffs.mkdir(exist_ok=True)
                (diffs / f"{number:03d}.diff").write_text(
                    "".join(f"< {line}\n" for line in only_engine) + "".join(f"> {line}\n" for line in only_fresh), encoding="utf-8")
                row.update({"differingByType": by_type(only_engine + only_fresh), "onlyWatcherByType": by_type(only_engine),
                            "onlyFreshByType": by_type(only_fresh), **waited, "watcherBeforeStep": late})
            print(json.dumps(row), flush=True)
        code = engine.stop()
        stopped = True
        if not (args.no_worktree or args.watcher or args.late_start or args.falkor_port or args.neo4j_uris):
            last: Dict[str, Any] = {"step": len(steps) + 1, "worktree": True,
                                    **worktree_from_main(work, engine_root, envs["engine"], work / "cache")}
            rows += 1
            total_diff += last["differing"]
            failures += last["differing"] > 0 or not last["ok"]
            print(json.dumps(last), flush=True)
    finally:
        if watcher is not None:
            watcher_stop = watcher.stop()
        if not stopped:
            code = engine.stop()
        if fresh_reader is not None:
            fresh_reader.stop()
    summary = {"event": "summary", "scenario": args.scenario, "steps": rows, "failedSteps": failures,
               "differingLines": total_diff, "engineExit": code, "seconds": round(time.monotonic() - start)}
    if watcher:
        summary.update({"mode": "watcher", "differingByType": dict(sorted(total_by_type.items())),
                        "watcherTimedOutSteps": timed_out_steps, **watcher_stop, "watcherLog": str(watcher.log_path)})
    print(json.dumps(summary), flush=True)
    return 0 if failures == 0 and code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
