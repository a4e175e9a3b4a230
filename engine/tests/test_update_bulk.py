"""An update's rows loaded in bulk on KùzuDB (update_bulk.py): the written files' rows and the rewritten links come
from the replay of a full index, after the update's deletes. Real cgc and KùzuDB in a private HOME; each graph is
compared with cgc's own index of the same tree (canonical dumps)."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

from real_graph import FILES, cgc_index, cgc_own_dump, dump, env_of, make_tree, pi_cgc_index, serve

TREE = {
    **FILES,
    "pkg/extra.py": "from pkg.more import report\n\n\ndef main():\n    print(report([1, 2]))\n",
    "pkg/errors.py": "class Failed(ValueError):\n    pass\n",
}
# A checkout: a file others call changed (its method renamed), one deleted, one new in a new folder (with a class
# whose parent is outside the tree, and a call into the tree), one with a new import.
CHECKOUT: Dict[str, str] = {
    "pkg/shapes.py": FILES["pkg/shapes.py"].replace("def area(self):\n        return self.side",
                                                    "def surface(self):\n        return self.side"),
    "pkg/more.py": "import json\n" + FILES["pkg/more.py"] + "\n\ndef as_json(values):\n    return json.dumps(report(values))\n",
    "pkg/deep/er/new.py": "from pkg.use import total\n\n\nclass Odd(KeyError):\n    def count(self, sides):\n"
                          "        return total(sides)\n",
}
GONE = "pkg/extra.py"


def apply_checkout(root: Path) -> list:
    for name, text in CHECKOUT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / GONE).unlink()
    return [str(root / name) for name in [*CHECKOUT, GONE]]


def test_a_checkout_written_in_bulk_equals_cgcs_own_index_and_so_does_going_back(tmp_path: Path) -> None:
    root, env, cache = make_tree(tmp_path, TREE), env_of(tmp_path / "home"), tmp_path / "cache"
    pi_cgc_index(root, env, cache)
    paths = apply_checkout(root)
    ready, update = serve(root, env, cache, [{"op": "update", "paths": paths}], "--bulk", "always")
    assert ready["trusted"] is True
    assert update["ok"] is True and update["bulk"] is True, update
    assert update["removed"] == [str(root / GONE)]
    assert dump(root, env) == cgc_own_dump(tmp_path, root)
    # And back: the new folder goes with its only file, the deleted file comes back.
    (root / "pkg" / "deep" / "er" / "new.py").unlink()
    for name in ("pkg/shapes.py", "pkg/more.py", GONE):
        (root / name).write_text(TREE[name], encoding="utf-8")
    ready, back = serve(root, env, cache, [{"op": "update", "paths": paths}], "--bulk", "always")
    assert back["ok"] is True and back["bulk"] is True, back
    assert dump(root, env) == cgc_own_dump(tmp_path, root)


def test_a_graph_cgc_wrote_adopted_in_bulk_equals_cgcs_own_index(tmp_path: Path) -> None:
    root, env = make_tree(tmp_path, TREE), env_of(tmp_path / "home")
    cgc_index(root, env)
    apply_checkout(root)
    ready, adopted = serve(root, env, tmp_path / "cache", [{"op": "adopt"}], "--bulk", "always")
    assert ready["trusted"] is False
    assert adopted["ok"] is True, adopted
    assert adopted["adopted"]["stale"] == 1 and adopted["adopted"]["files"] == 3, adopted
    assert adopted["phases"]["bulkNodes"] > 0, adopted
    assert dump(root, env) == cgc_own_dump(tmp_path, root)


def test_one_files_edit_goes_through_cgcs_writer_where_the_tree_is_large(tmp_path: Path) -> None:
    # (the edit's functions and calls, 50 times over, are fewer than the tree's: update_bulk.BULK_RATIO)
    files = {**TREE, **{f"many/m{i}.py": "".join(f"def f{i}_{j}(x):\n    return x + {j}\n\n\n" for j in range(3))
                        for i in range(100)}}
    root, env, cache = make_tree(tmp_path, files), env_of(tmp_path / "home"), tmp_path / "cache"
    pi_cgc_index(root, env, cache)
    (root / "many" / "m0.py").write_text("def f0(x):\n    return x\n\n\ndef g0(y):\n    return f0(y)\n", encoding="utf-8")
    ready, update = serve(root, env, cache, [{"op": "update", "paths": [str(root / "many" / "m0.py")]}])
    assert update["ok"] is True and update["bulk"] is False, update
    assert dump(root, env) == cgc_own_dump(tmp_path, root)
