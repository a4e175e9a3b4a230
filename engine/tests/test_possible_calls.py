"""Possible callers (possible_calls.py) on small trees parsed by cgc's own parsers: each rule finds its call
sites, says why, and leaves out what it rules out."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

from pi_cgc_engine.possible_calls import Views
from pi_cgc_engine.tree import Tree

TREE = {
    "pkg/__init__.py": "",
    "pkg/base.py": (
        "from typing import Generic, TypeVar, overload\n"
        "T = TypeVar('T')\n"
        "class Base(Generic[T]):\n"
        "    def load(self, x):\n"
        "        return x\n"
        "    @overload\n"
        "    def get(self, x: int) -> int: ...\n"
        "    @overload\n"
        "    def get(self, x: str) -> str: ...\n"
        "    def get(self, x):\n"
        "        return x\n"
        "def helper(x):\n"
        "    return x\n"
    ),
    "pkg/sub.py": (
        "from .base import Base, helper as assist\n"
        "class Sub(Base[int]):\n"
        "    def run(self, x):\n"
        "        return self.load(assist(x))\n"
        "    def twice(self, x):\n"
        "        return self.get(x)\n"
        "class Other:\n"
        "    def load(self, x):\n"
        "        return x\n"
        "    def go(self, item: Base):\n"
        "        return item.load(1)\n"
        "    def stay(self, item: 'Other'):\n"
        "        return self.load(2)\n"
    ),
    "pkg/unrelated.py": (
        "def load(x):\n"
        "    return x\n"
        "def use(thing):\n"
        "    return thing.load(3) + load(4)\n"
    ),
}


def sites_of(root: Path, rel: str, name: str, line: int) -> List[Dict[str, Any]]:
    tree = Tree(root, None)
    files = {p.as_posix(): tree.parse(p, (0, 0, "")) for p in tree.discover()}
    index = Views(root.as_posix()).index(files)
    return [site.as_json() for site in index.sites((root / rel).as_posix(), name, line)]


def make_tree(tmp_path: Path) -> Path:
    for rel, text in TREE.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path.resolve()


def test_self_call_in_a_subclass_of_a_subscripted_base_in_another_module(cgc: Any, tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    sites = sites_of(root, "pkg/base.py", "load", 4)
    by_caller = {(s["path"].rsplit("/", 1)[-1], s["caller"]): s for s in sites}
    assert by_caller[("sub.py", "run")]["rule"] == "subclass"
    assert by_caller[("sub.py", "run")]["rank"] == 0
    assert "Sub, which inherits from Base" in by_caller[("sub.py", "run")]["why"]
    # A parameter annotated with Base: its call is Base's.
    assert by_caller[("sub.py", "go")]["rule"] == "annotated"
    # Other's own self.load() is not Base.load's.
    assert ("sub.py", "stay") not in by_caller
    # An object of unknown type in a file that imports nothing of base.py: listed below the rest, as only two
    # classes have a method of that name.
    use = by_caller[("unrelated.py", "use")]
    assert (use["rule"], use["rank"]) == ("object, few classes", 1)


def test_a_function_imported_under_another_name_and_called_in_arguments(cgc: Any, tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    sites = sites_of(root, "pkg/base.py", "helper", 12)
    assert [(s["caller"], s["rule"], s["line"]) for s in sites] == [("run", "imported name", 4)]
    assert "imports helper as assist" in sites[0]["why"]


def test_an_overloaded_method_is_called_through_its_first_declaration(cgc: Any, tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    assert [s["caller"] for s in sites_of(root, "pkg/base.py", "get", 7)] == ["twice"]
    assert sites_of(root, "pkg/base.py", "get", 9) == []
    assert sites_of(root, "pkg/base.py", "get", 10) == []


def test_a_module_function_is_not_reached_through_an_object(cgc: Any, tmp_path: Path) -> None:
    root = make_tree(tmp_path)
    sites = sites_of(root, "pkg/unrelated.py", "load", 1)
    assert [(s["caller"], s["rule"]) for s in sites] == [("use", "same file")]
