"""The parse store (parse_store.py): each file's parse kept by its content, found again at another root (another
worktree, a copy), and every fault a miss and a parse again, never another parse: a damaged entry, one that is not
the user's own and private, a full disk, the folder removed under a running store, two processes writing one key
at once. Bounded: the entries used least recently go first. A `--force` index of an unchanged tree parses nothing.
Real cgc parses throughout."""

from __future__ import annotations

import errno
import hashlib
import multiprocessing
import os
import pickle
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from test_index_faults import ENTRY, dump, env_of, run

from pi_cgc_engine import parse_store
from pi_cgc_engine.context import RUN
from pi_cgc_engine.files import FileEntry, digest_of
from pi_cgc_engine.parse_store import MAGIC, ParseStore
from pi_cgc_engine.tree import Tree

# One file of each of several languages cgc parses, with imports between them (the imports map's paths).
SOURCES = {
    "pkg/__init__.py": "",
    "pkg/shapes.py": "import os\n\n\nclass Shape:\n    \"\"\"A shape.\"\"\"\n\n    def area(self):\n        return 0\n\n\n"
                     "class Square(Shape):\n    def __init__(self, side):\n        self.side = side\n\n"
                     "    def area(self):\n        return os.path.join('a', str(self.side))\n",
    "pkg/use.py": "from pkg.shapes import Square\n\n\ndef total(sides):\n    return sum(Square(s).area() for s in sides)\n",
    "web/util.ts": "export function pad(s: string): string {\n  return s.trim();\n}\n\nexport class Box {\n"
                   "  size(): number { return 1; }\n}\n",
    "web/main.ts": "import { pad, Box } from \"./util\";\n\nexport function run(): string {\n"
                   "  return pad(String(new Box().size()));\n}\n",
    "web/app.js": "const { run } = require('./main');\n\nfunction start() {\n  return run();\n}\n\nmodule.exports = { start };\n",
    "go/calc.go": "package calc\n\nimport \"strings\"\n\nfunc Upper(s string) string {\n\treturn strings.ToUpper(s)\n}\n",
    "java/Shape.java": "package shapes;\n\npublic class Shape {\n    public double area() {\n        return helper(2);\n    }\n\n"
                       "    static double helper(double x) {\n        return x * x;\n    }\n}\n",
    "rs/lib.rs": "pub fn add(a: i32, b: i32) -> i32 {\n    double(a) + b\n}\n\nfn double(x: i32) -> i32 {\n    x * 2\n}\n",
    "c/util.c": "#include <stdio.h>\n\nint twice(int x) {\n    return x * 2;\n}\n\nint main(void) {\n"
                "    printf(\"%d\", twice(2));\n    return 0;\n}\n",
    "cpp/box.cpp": "#include <string>\n\nclass Box {\npublic:\n    int size() const { return twice(1); }\n"
                   "private:\n    static int twice(int x) { return x * 2; }\n};\n",
}


def make_tree(root: Path, sources: Dict[str, str] = SOURCES) -> Path:
    for name, text in sources.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root.resolve()


def store_in(folder: Path, bound: int = 1 << 30) -> ParseStore:
    return ParseStore(folder, bound, "0.6.13", index_source=False)


@pytest.fixture
def using() -> Iterator[Any]:
    """Sets RUN.parse_store for one test (None after)."""

    def use(store: Any) -> Any:
        RUN.parse_store = store
        return store

    try:
        yield use
    finally:
        RUN.parse_store = None


def parse_tree(root: Path) -> Dict[str, FileEntry]:
    tree = Tree(root, None)
    return {p.relative_to(root).as_posix(): tree.parse(p, digest_of(p)) for p in tree.discover()}


def said(capsys: pytest.CaptureFixture[str]) -> List[str]:
    return [line for line in capsys.readouterr().err.splitlines() if "parse store: " in line]


def entries(folder: Path) -> List[Path]:
    return sorted(folder.glob("*/*.parse"))


def same(a: FileEntry, b: FileEntry) -> bool:
    return (a.size, a.mtime_ns, a.digest, a.data, a.imports) == (b.size, b.mtime_ns, b.digest, b.data, b.imports) \
        and list(a.data) == list(b.data)


def test_a_file_is_parsed_once_per_content_and_again_when_it_changes(cgc: Any, tmp_path: Path, using: Any) -> None:
    root = make_tree(tmp_path / "repo")
    fresh = parse_tree(root)
    store = using(store_in(tmp_path / "store"))
    first = parse_tree(root)
    assert (store.hits, store.misses) == (0, len(SOURCES))
    assert len(entries(tmp_path / "store")) == len(SOURCES)
    again = parse_tree(root)
    assert (store.hits, store.misses) == (len(SOURCES), len(SOURCES))
    for rel in SOURCES:
        assert same(first[rel], fresh[rel]) and same(again[rel], fresh[rel]), rel
    # Another content of one file: a miss, and that file's new parse.
    (root / "pkg/use.py").write_text("def total(sides):\n    return len(sides)\n", encoding="utf-8")
    changed = parse_tree(root)
    assert (store.hits, store.misses) == (2 * len(SOURCES) - 1, len(SOURCES) + 1)
    assert [f["name"] for f in changed["pkg/use.py"].data["functions"]] == ["<module>", "total"]
    assert changed["pkg/use.py"].data["imports"] == []


def test_a_parse_found_at_another_root_equals_that_roots_own_parse(cgc: Any, tmp_path: Path, using: Any) -> None:
    """Another worktree of the repository (another folder name too): every file's parse from the store equals the
    parse made there, once its root is put back."""
    here = make_tree(tmp_path / "main" / "repo")
    there = make_tree(tmp_path / "worktrees" / "feature-x")
    fresh_there = parse_tree(there)
    store = using(store_in(tmp_path / "store"))
    parse_tree(here)
    assert store.misses == len(SOURCES)
    from_store = parse_tree(there)
    assert store.hits == len(SOURCES), "every language's parse moved to the other root"
    for rel in SOURCES:
        assert same(from_store[rel], fresh_there[rel]), rel
        assert from_store[rel].data["path"] == (there / rel).as_posix()
        assert not parse_store.names_root((from_store[rel].data, from_store[rel].imports), here.as_posix())


def test_a_parse_naming_its_root_elsewhere_is_not_kept(cgc: Any, tmp_path: Path, using: Any) -> None:
    """A string the relocation would not move (the root written in the source) cannot be moved: not kept."""
    root = tmp_path.resolve() / "repo"
    make_tree(root, {"conf.py": f"HOME = '{root.as_posix()}/data'\n\n\ndef where():\n    return HOME\n"})
    store = using(store_in(tmp_path / "store"))
    parse_tree(root)
    assert "HOME" in str(parse_tree(root)["conf.py"].data["variables"])
    assert entries(tmp_path / "store") == [] and store.hits == 0


def test_a_failed_parse_is_not_kept(cgc: Any, tmp_path: Path, using: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """cgc's parse_failed (a parser that raised: a file read mid-write) is tried again, never found in the store."""
    from codegraphcontext.tools.tree_sitter_parser import TreeSitterParser

    root = make_tree(tmp_path / "repo", {"a.py": "def a():\n    return 1\n"})
    store = using(store_in(tmp_path / "store"))
    parse = TreeSitterParser.parse

    def fails(self: Any, path: Path, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a parser that raised (a file read mid-write)")

    monkeypatch.setattr(TreeSitterParser, "parse", fails)
    assert parse_tree(root)["a.py"].data.get("parse_failed") is True
    assert entries(tmp_path / "store") == []
    monkeypatch.setattr(TreeSitterParser, "parse", parse)
    assert [f["name"] for f in parse_tree(root)["a.py"].data["functions"]] == ["<module>", "a"]
    assert len(entries(tmp_path / "store")) == 1 and store.hits == 0


def test_a_file_changed_while_it_was_parsed_is_not_kept(cgc: Any, tmp_path: Path, using: Any) -> None:
    """The parse reads the file after its digest was taken: where the file differs after the parse, the parse may be
    of other content than the key names."""
    root = make_tree(tmp_path / "repo", {"a.py": "def a():\n    return 1\n"})
    store = using(store_in(tmp_path / "store"))
    path = root / "a.py"
    known = digest_of(path)
    path.write_text("def b():\n    return 2\n", encoding="utf-8")
    Tree(root, None).parse(path, known)
    assert entries(tmp_path / "store") == [] and store.misses == 1


@pytest.mark.parametrize("damage", ["a flipped byte", "cut short", "empty", "another key's entry",
                                    "a pickle that names code"])
def test_a_damaged_entry_is_a_miss_and_the_file_is_parsed_again(cgc: Any, tmp_path: Path, using: Any,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 damage: str) -> None:
    root = make_tree(tmp_path / "repo", {"a.py": "def a():\n    return 1\n", "b.py": "def b():\n    return 2\n"})
    fresh = parse_tree(root)
    folder = tmp_path / "store"
    using(store_in(folder))
    parse_tree(root)
    store = using(store_in(folder))
    slot = store.slot(Tree(root, None), root / "a.py", digest_of(root / "a.py"))
    assert slot is not None
    target = store.entry_path(slot)
    blob = target.read_bytes()
    marker = tmp_path / "ran"
    if damage == "a flipped byte":
        middle = len(blob) // 2
        blob = blob[:middle] + bytes([blob[middle] ^ 0x20]) + blob[middle + 1:]
    elif damage == "cut short":
        blob = blob[: len(blob) * 2 // 3]
    elif damage == "empty":
        blob = b""
    elif damage == "another key's entry":
        other = store.slot(Tree(root, None), root / "b.py", digest_of(root / "b.py"))
        assert other is not None
        blob = store.entry_path(other).read_bytes()
    else:
        # Its digest right (written so): only the loader stands between the file and the code it names.
        body = pickle.dumps(Runs((f"touch {marker}",)))
        blob = MAGIC + hashlib.sha256(body).digest() + body
    target.write_bytes(blob)
    capsys.readouterr()
    again = parse_tree(root)
    assert same(again["a.py"], fresh["a.py"]) and same(again["b.py"], fresh["b.py"])
    assert (store.hits, store.misses) == (1, 1)
    assert not marker.exists()
    assert any("damaged entry was removed" in line for line in said(capsys))
    # Written again, whole: the next parse is a hit.
    assert same(parse_tree(root)["a.py"], fresh["a.py"]) and store.hits == 3


class Runs:
    """What a planted pickle would run on load (os.system), were the loader not restricted."""

    def __init__(self, args: Tuple[str, ...]) -> None:
        self.args = args

    def __reduce__(self) -> Any:
        return (os.system, self.args)


@pytest.mark.parametrize("how", ["writable by others", "owned by another user", "a link"])
def test_an_entry_that_is_not_the_users_own_and_private_is_not_read(cgc: Any, tmp_path: Path, using: Any,
                                                                    capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    root = make_tree(tmp_path / "repo", {"a.py": "def a():\n    return 1\n"})
    folder = tmp_path / "store"
    using(store_in(folder))
    parse_tree(root)
    [target] = entries(folder)
    if how == "writable by others":
        target.chmod(0o602)
        reason = "writable by others"
    elif how == "a link":
        elsewhere = tmp_path / "elsewhere.parse"
        target.rename(elsewhere)
        target.symlink_to(elsewhere)
        reason = "not read"
    elif os.getuid() == 0:
        os.chown(target, 65534, 65534)
        reason = "owned by uid 65534"
    else:
        # Only root can give a file away: the store is made to run as another user instead (os.getuid).
        monkeypatch.setattr(os, "getuid", lambda: 65534)
        reason = f"owned by uid {target.stat().st_uid}"
    store = using(store_in(folder)) if how != "owned by another user" or os.getuid() == 0 else RUN.parse_store
    store.counts[0] = store.counts[1] = 0
    capsys.readouterr()
    assert [f["name"] for f in parse_tree(root)["a.py"].data["functions"]] == ["<module>", "a"]
    assert store.hits == 0
    lines = said(capsys)
    assert len(lines) == 1 and reason in lines[0], lines


def test_a_folder_others_could_write_is_not_used_until_it_is_private(cgc: Any, tmp_path: Path, using: Any,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    root = make_tree(tmp_path / "repo", {"a.py": "def a():\n    return 1\n"})
    folder = tmp_path / "store"
    using(store_in(folder))
    parse_tree(root)
    folder.chmod(0o777)
    capsys.readouterr()
    store = using(store_in(folder))
    parse_tree(root)
    assert (store.hits, store.misses) == (0, 0) and not store.usable
    assert any("writable by its group" in line for line in said(capsys))
    # Made private for the next process, which uses it.
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    store = using(store_in(folder))
    parse_tree(root)
    assert store.hits == 1


def test_folder_and_files_are_private(cgc: Any, tmp_path: Path, using: Any) -> None:
    root = make_tree(tmp_path / "repo")
    folder = tmp_path / "agent" / "pi-cgc" / "parse-store"
    using(store_in(folder))
    parse_tree(root)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for sub in folder.iterdir():
        assert stat.S_IMODE(sub.stat().st_mode) == 0o700
    for entry in entries(folder):
        assert stat.S_IMODE(entry.stat().st_mode) == 0o600


def test_a_full_disk_skips_the_writes_said_once(cgc: Any, tmp_path: Path, using: Any,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A fake for the fault only: the store's write fails with ENOSPC, as on a full disk."""
    root = make_tree(tmp_path / "repo")
    fresh = parse_tree(root)
    store = using(store_in(tmp_path / "store"))

    def full(self: Any, target: Path, blob: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))

    monkeypatch.setattr(ParseStore, "write_atomic", full)
    capsys.readouterr()
    parsed = parse_tree(root)
    assert all(same(parsed[rel], fresh[rel]) for rel in SOURCES)
    lines = said(capsys)
    assert len(lines) == 1 and "No space left on device" in lines[0], lines
    assert entries(tmp_path / "store") == []
    monkeypatch.undo()
    # Writes pause after it (each would fail the same way); parses stay whole.
    parse_tree(root)
    assert entries(tmp_path / "store") == []
    store.writes_paused_until = 0.0
    parse_tree(root)
    assert len(entries(tmp_path / "store")) == len(SOURCES)


def test_the_folder_removed_under_a_running_store_is_made_again(cgc: Any, tmp_path: Path, using: Any) -> None:
    root = make_tree(tmp_path / "repo")
    fresh = parse_tree(root)
    folder = tmp_path / "store"
    store = using(store_in(folder))
    parse_tree(root)
    shutil.rmtree(folder)
    parsed = parse_tree(root)
    assert all(same(parsed[rel], fresh[rel]) for rel in SOURCES)
    assert store.hits == 0 and stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert len(entries(folder)) == len(SOURCES)
    parse_tree(root)
    assert store.hits == len(SOURCES)


def test_the_store_stays_within_its_bound_least_recently_used_out_first(cgc: Any, tmp_path: Path,
                                                                         using: Any) -> None:
    root = tmp_path.resolve() / "repo"
    sources = {f"m{n:02}.py": f"def f{n}(value):\n    return value + {n}\n" for n in range(40)}
    make_tree(root, sources)
    folder = tmp_path / "store"
    store = using(store_in(folder))
    parse_tree(root)
    sizes = {path: path.stat().st_size for path in entries(folder)}
    assert len(sizes) == 40
    # Entries last used an hour ago and more, m00 the oldest; then m00..m04 used again (a hit refreshes them).
    slots = {rel: store.slot(Tree(root, None), root / rel, digest_of(root / rel)) for rel in sources}
    for at, rel in enumerate(sorted(sources)):
        path = store.entry_path(slots[rel])  # type: ignore[arg-type]
        os.utime(path, (0, 10_000 + at))
    tree = Tree(root, None)
    for rel in sorted(sources)[:5]:
        assert tree.parse(root / rel, digest_of(root / rel)) is not None
    assert store.hits == 5
    # A bound of about 20 entries: the sweep leaves 90 % of it, the oldest out.
    store.bound = sum(sorted(sizes.values())[:20])
    kept, total = store.sweep()
    assert total <= store.bound * parse_store.SWEEP_TO
    left = {path.name for path in entries(folder)}
    assert len(left) == kept < 40
    names = {rel: store.entry_path(slots[rel]).name for rel in sources}  # type: ignore[arg-type]
    # The ones used again are kept; the least recently used went first.
    assert all(names[rel] in left for rel in sorted(sources)[:5])
    assert all(names[rel] not in left for rel in sorted(sources)[5:40 - kept + 5])
    assert all(names[rel] in left for rel in sorted(sources)[40 - kept + 5:])


def test_writes_sweep_the_store_once_a_share_of_its_bound_was_written(cgc: Any, tmp_path: Path,
                                                                        using: Any) -> None:
    root = tmp_path.resolve() / "repo"
    make_tree(root, {f"m{n:02}.py": f"def f{n}(value):\n    return value + {n}\n" * 5 for n in range(60)})
    folder = tmp_path / "store"
    store = using(store_in(folder, bound=16 * 1024))
    parse_tree(root)
    assert sum(path.stat().st_size for path in entries(folder)) <= store.bound
    assert 0 < len(entries(folder)) < 60


def _hammer(folder: str, root: str, rounds: int, start: Any, seen: Any) -> None:
    """One of two processes writing and reading the same keys at once."""
    store = ParseStore(Path(folder), 1 << 30, "0.6.13", index_source=False)
    RUN.parse_store = store
    tree = Tree(Path(root), None)
    paths = [p for p in tree.discover()]
    start.wait()
    for _ in range(rounds):
        for path in paths:
            known = digest_of(path)
            slot = store.slot(tree, path, known)
            assert slot is not None
            # A fresh parse written over whatever the other wrote, then read back: whole, or not there yet.
            entry = tree.parse_now(path, known)
            store.put(slot, entry.data, entry.imports, path, known)
            found = store.get(slot)
            if found is not None and found != (entry.data, entry.imports):
                seen.value += 1


def test_two_processes_writing_the_same_keys_at_once_leave_whole_entries(cgc: Any, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    root = make_tree(tmp_path / "repo")
    fresh = parse_tree(root)
    folder = tmp_path / "store"
    context = multiprocessing.get_context("fork")
    start = context.Barrier(2)
    wrong = context.Value("i", 0)
    writers = [context.Process(target=_hammer, args=(str(folder), str(root), 15, start, wrong)) for _ in range(2)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=600)
        assert writer.exitcode == 0
    assert wrong.value == 0
    assert len(entries(folder)) == len(SOURCES)
    assert list(folder.glob("*/*.tmp")) == []
    store = ParseStore(folder, 1 << 30, "0.6.13", index_source=False)
    RUN.parse_store = store
    try:
        capsys.readouterr()
        parsed = parse_tree(root)
    finally:
        RUN.parse_store = None
    assert store.hits == len(SOURCES)
    assert all(same(parsed[rel], fresh[rel]) for rel in SOURCES)
    assert said(capsys) == []


def test_a_force_index_of_an_unchanged_tree_parses_nothing(cgc: Any, tmp_path: Path) -> None:
    """pi-cgc's index with --force over an unchanged tree: every file from the store (the parse pool's forked workers
    included: 70 files), and the graph the first index wrote."""
    sources = dict(SOURCES)
    sources.update({f"many/m{n:02}.py": f"from pkg.use import total\n\n\ndef f{n}(v):\n    return total([v, {n}])\n"
                    for n in range(60)})
    root = make_tree(tmp_path / "repo", sources)
    env = env_of(tmp_path / "home")
    store = tmp_path / "agent" / "parse-store"
    argv = [str(ENTRY), "--cache-dir", str(tmp_path / "cache"), "--parse-store", str(store), "index"]
    first = run([*argv, str(root)], root, env)
    assert first.returncode == 0, first.stderr[-2000:]
    files = len(sources)
    assert f"0 parses from the parse store, {files} not in it" in first.stdout, first.stdout
    graph = dump(root, env)
    again = run([*argv, "--force", str(root)], root, env)
    assert again.returncode == 0, again.stderr[-2000:]
    assert f"{files} parses from the parse store, 0 not in it" in again.stdout, again.stdout
    assert dump(root, env) == graph
    # Without the store the same index gives the same graph.
    plain = run([str(ENTRY), "--cache-dir", str(tmp_path / "cache"), "index", "--force", str(root)], root, env)
    assert plain.returncode == 0, plain.stderr[-2000:]
    assert dump(root, env) == graph


def test_the_command_line_keeps_nothing_with_a_bound_of_zero(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "repo", {"a.py": "def a():\n    return 1\n"})
    env = env_of(tmp_path / "home")
    store = tmp_path / "parse-store"
    done = run([str(ENTRY), "--parse-store", str(store), "--parse-store-mb", "0", "index", str(root)], root, env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not store.exists() and "parse store" not in done.stdout


def test_serve_uses_the_store(tmp_path: Path) -> None:
    """The session's engine reads its tree through the store: a second engine of the same tree (another session,
    the cache removed) parses nothing."""
    root = make_tree(tmp_path / "repo")
    env = env_of(tmp_path / "home")
    store = tmp_path / "parse-store"
    inodes: List[Dict[str, int]] = []
    for _ in range(2):
        engine = subprocess.Popen([sys.executable, str(ENTRY), "--parse-store", str(store), "serve", "--root",
                                   str(root)], cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        assert engine.stdout is not None and engine.stdin is not None
        ready = engine.stdout.readline()
        assert '"event": "ready"' in ready, ready
        engine.stdin.close()
        assert engine.wait(timeout=120) == 0
        inodes.append({path.name: path.stat().st_ino for path in entries(store)})
    # The second engine found every parse: it wrote none (a write is a new file renamed into place).
    assert len(inodes[0]) == len(SOURCES) and inodes[1] == inodes[0]
