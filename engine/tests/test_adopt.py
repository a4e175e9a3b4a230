"""A graph written elsewhere, adopted by difference (adopt.py): the engine, started without a cache that describes the
graph, compares the graph with a full index of the tree and writes only what differs. Real cgc and KùzuDB in a
private HOME: `cgc index` writes the graph, `serve` adopts it, and the canonical dump (`dump --dangling`) is
compared with cgc's own index of the same tree.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Dict

from real_graph import ENGINE_DIR, FILES, cgc_index, cgc_own_dump, dump, env_of, make_tree, pi_cgc_index, serve

TREE = {**FILES, "pkg/extra.py": "from pkg.more import report\n\n\ndef main():\n    print(report([1, 2]))\n"}


def write_cypher(root: Path, env: Dict[str, str], query: str) -> None:
    """One statement on the graph through cgc's own database manager."""
    script = ("import sys; sys.path.insert(0, sys.argv[1]);"
              "from pathlib import Path;"
              "from pi_cgc_engine import cgc_contract as cgc; cgc.load();"
              "from pi_cgc_engine.database import Database;"
              "db = Database(Path(sys.argv[2]), None); db.open(); db.read(sys.argv[3]); db.close()")
    done = subprocess.run([sys.executable, "-c", script, str(ENGINE_DIR), str(root), query], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_graph_cgc_wrote_with_nothing_changed_gets_nothing_written(tmp_path: Path) -> None:
    root, env = make_tree(tmp_path, TREE), env_of(tmp_path / "home")
    cgc_index(root, env)
    before = dump(root, env)
    ready, adopted = serve(root, env, tmp_path / "cache", [{"op": "adopt"}])
    assert ready["trusted"] is False
    assert adopted["ok"] is True, adopted
    assert adopted["adopted"] == {"files": 0, "links": 0, "stale": 0, "modules": 0, "shared": 0, "structure": False}
    assert adopted["written"] == [] and adopted["stampAfter"] == adopted["stampBefore"]
    assert dump(root, env) == before
    # Adopted, the cache is the graph's model: the next engine starts trusted.
    assert serve(root, env, tmp_path / "cache", [])[0]["trusted"] is True


def test_wrong_links_left_behind_get_just_those_links_written_again(tmp_path: Path) -> None:
    root, env = make_tree(tmp_path, TREE), env_of(tmp_path / "home")
    cgc_index(root, env)
    expected = dump(root, env)
    # A call's edge gone, as `cgc watch` leaves a caller's link when it re-indexes the callee's file alone and the
    # caller's edge goes with the old nodes (ADR 0010); and one to the wrong function, as it leaves a call it never
    # resolved again.
    write_cypher(root, env, "MATCH (a:Function {name: 'report'})-[e:CALLS]->(b:Function {name: 'total'}) DELETE e")
    write_cypher(root, env, "MATCH (a:Function {name: 'main'}), (b:Function {name: 'total'}) "
                            "CREATE (a)-[:CALLS {line_number: 5, full_call_name: 'total', confidence: 0.5}]->(b)")
    assert dump(root, env) != expected
    ready, adopted = serve(root, env, tmp_path / "cache", [{"op": "adopt"}])
    assert adopted["ok"] is True, adopted
    # Two files' links written again; no file written again, no other file's links.
    assert adopted["adopted"]["links"] == 2 and adopted["adopted"]["files"] == 0, adopted
    assert adopted["written"] == [] and adopted["rewritten"] == 2
    assert dump(root, env) == expected


def test_files_changed_and_removed_since_cgc_wrote_the_graph_are_written_again_alone(tmp_path: Path) -> None:
    root, env = make_tree(tmp_path, TREE), env_of(tmp_path / "home")
    cgc_index(root, env)
    (root / "pkg" / "more.py").write_text(FILES["pkg/more.py"].replace("as text", "as a string") +
                                          "\n\ndef twice(values):\n    return total(values) * 2\n", encoding="utf-8")
    (root / "pkg" / "extra.py").unlink()
    ready, adopted, update = serve(root, env, tmp_path / "cache", [
        {"op": "adopt"}, {"op": "update", "paths": [str(root / "pkg" / "more.py"), str(root / "pkg" / "extra.py")]}])
    assert adopted["ok"] is True, adopted
    assert adopted["written"] == [str(root / "pkg" / "more.py")]
    assert adopted["removed"] == [str(root / "pkg" / "extra.py")]
    assert adopted["adopted"]["files"] == 1 and adopted["adopted"]["stale"] == 1, adopted
    # After the adoption the engine holds the graph's model: the update finds nothing left to write.
    assert update["ok"] is True and update["written"] == [], update
    assert dump(root, env) == cgc_own_dump(tmp_path, root)


def test_an_untrusted_first_update_adopts_instead_of_writing_every_files_links(tmp_path: Path) -> None:
    root, env = make_tree(tmp_path, TREE), env_of(tmp_path / "home")
    cgc_index(root, env)
    (root / "pkg" / "use.py").write_text(FILES["pkg/use.py"] + "\n\ndef none():\n    return total([])\n",
                                         encoding="utf-8")
    ready, update = serve(root, env, tmp_path / "cache", [{"op": "update", "paths": [str(root / "pkg" / "use.py")]}])
    assert update["ok"] is True, update
    assert update["adopted"]["files"] == 1 and update["rewritten"] == 0, update
    assert update["written"] == [str(root / "pkg" / "use.py")]
    assert dump(root, env) == cgc_own_dump(tmp_path, root)


def test_a_forced_index_of_an_unchanged_graph_writes_nothing_and_one_of_a_changed_tree_writes_the_change(
        tmp_path: Path) -> None:
    root, env = make_tree(tmp_path, TREE), env_of(tmp_path / "home")
    cgc_index(root, env)
    before = dump(root, env)

    def forced() -> str:
        return pi_cgc_index(root, env, tmp_path / "cache", "--force")

    assert "written with adoption: nothing differed from the graph" in forced()
    assert dump(root, env) == before
    (root / "pkg" / "use.py").write_text(FILES["pkg/use.py"].replace("sum(", "max(0, sum(") .replace(
        "for s in sides)", "for s in sides))"), encoding="utf-8")
    assert "written with adoption: 1 file differed from the graph" in forced()
    assert dump(root, env) == cgc_own_dump(tmp_path, root)
    # The forced index left the engine's cache as the graph's model.
    assert serve(root, env, tmp_path / "cache", [])[0]["trusted"] is True


def modules(count: int, suffix: str) -> Dict[str, str]:
    """`count` modules, each calling the next one's function: a change to all of them changes every link."""
    return {f"batch/m{i}.py": (f"from batch.m{(i + 1) % count} import f{(i + 1) % count}{suffix}\n\n\n"
                               f"def f{i}{suffix}(x):\n    return f{(i + 1) % count}{suffix}(x) if x else {i}\n")
            for i in range(count)}


def test_a_change_of_many_files_at_once_is_one_update_parsed_together(tmp_path: Path) -> None:
    root = make_tree(tmp_path, TREE)
    for name, text in modules(80, "").items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    env = env_of(tmp_path / "home")
    cache = tmp_path / "cache"
    pi_cgc_index(root, env, cache)
    # A branch switch: every one of the 80 files renamed its function (more than parse_pool.POOL_FROM: parsed by
    # the pool of forked workers).
    changed = modules(80, "_renamed")
    for name, text in changed.items():
        (root / name).write_text(text, encoding="utf-8")
    ready, update = serve(root, env, cache, [{"op": "update", "paths": [str(root / name) for name in changed]}])
    assert ready["trusted"] is True
    assert update["ok"] is True, update
    assert len(update["written"]) == 80 and update["unsure"] == 0, update
    assert update["bulk"] is True, update  # (most of the tree: its rows loaded in bulk)
    assert dump(root, env) == cgc_own_dump(tmp_path, root)
