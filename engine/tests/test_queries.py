"""The engine's compiled tree-sitter queries (cgc_contract._remembering_queries).

The engine compiles each of cgc's tree-sitter queries once where cgc compiles it again for every file. A parse must
give what cgc's own parse gives, in every language whose grammar the project's set-up builds (scripts/setup.mjs;
cgc's language pack would download the others at first use, from a host this machine may not reach), with files of
one language parsed one after the other (the compiled queries reused).

The test reaches cgc's locked query run (a private name) itself, to put cgc's own back for the comparison.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from pi_cgc_engine.tree import Tree

# Two small files per language, each with a class or type, functions, calls and an import where it has them.
SOURCES: Dict[str, List[str]] = {
    "py": [
        "import os\n\nclass A:\n    def run(self, x):\n        return helper(x)\n\ndef helper(x):\n    return os.path.join(x, 'a')\n",
        "from a0 import A\n\n@staticmethod\ndef caller():\n    return A().run(1)\n\nvalue = lambda y: y + 1\n",
    ],
    "js": [
        "import { b } from './b.js';\nexport class A { run(x) { return b(x); } }\nfunction helper(y) { return y * 2; }\n",
        "export function b(x) { return x + 1; }\nconst c = (z) => b(z);\nmodule.exports = { c };\n",
    ],
    "ts": [
        "import { B } from './b';\ninterface Shape { area(): number }\nexport class Sq implements Shape { area(): number { return new B().size(); } }\n",
        "export class B { size(): number { return 4; } }\nexport function make(): B { return new B(); }\n",
    ],
    "go": [
        'package main\n\nimport "fmt"\n\ntype S struct{ n int }\n\nfunc (s S) Run() { fmt.Println(s.n) }\n\nfunc main() { S{1}.Run() }\n',
        "package main\n\ntype Runner interface{ Run() }\n\nfunc use(r Runner) { r.Run() }\n",
    ],
    "rs": [
        "use std::fmt;\nstruct P { x: i32 }\nimpl P { fn get(&self) -> i32 { helper(self.x) } }\nfn helper(v: i32) -> i32 { v + 1 }\n",
        'trait T { fn go(&self); }\nstruct Q;\nimpl T for Q { fn go(&self) { println!("q"); } }\nfn main() { Q.go(); }\n',
    ],
    "java": [
        "package p;\nimport java.util.List;\npublic class A { int run(List<String> l) { return helper(l.size()); } static int helper(int n) { return n; } }\n",
        "package p;\npublic class B extends A implements Runnable { public void run() { new A().run(null); } }\n",
    ],
    "c": [
        '#include <stdio.h>\nstruct pt { int x; };\nstatic int helper(int v) { return v + 1; }\nint main(void) { printf("%d", helper(1)); return 0; }\n',
        '#include "a.h"\ntypedef struct q { int y; } q_t;\nint use(q_t *q) { return q->y; }\n',
    ],
    "cpp": [
        "#include <vector>\nclass A { public: int run(int x) { return helper(x); } private: static int helper(int y) { return y; } };\n",
        '#include "a.hpp"\nclass B : public A { public: int go() { return run(2); } };\nint main() { B b; return b.go(); }\n',
    ],
}


@pytest.mark.usefixtures("cgc")
def test_every_language_parses_as_cgc_parses_it_each_query_compiled_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tree_sitter
    from codegraphcontext.utils import tree_sitter_manager as queries

    for ext, (first, second) in SOURCES.items():
        (tmp_path / f"a0.{ext}").write_text(first)
        (tmp_path / f"b1.{ext}").write_text(second)
    root = tmp_path.resolve()
    paths = sorted(root.iterdir())
    compiled: List[str] = []
    counts: Dict[str, int] = {}

    def parse_all(tree: Tree, count_into: str) -> Dict[str, str]:
        compiled.clear()
        out = {}
        for path in paths:
            entry = tree.parse(path, (0, 0, ""))
            out[path.name] = json.dumps([entry.data, entry.imports], sort_keys=True, default=sorted)
        counts[count_into] = len(compiled)
        return out

    # The engine's parse, the compiled queries counted where they are made (the type cgc hands its locked run).
    real_query = tree_sitter.Query

    class CountingQuery:
        def __new__(cls, language: Any, text: str) -> Any:
            compiled.append(text)
            return real_query(language, text)

    monkeypatch.setattr(tree_sitter, "Query", CountingQuery)
    mine = parse_all(Tree(root, None), "compiledOnce")
    # cgc's own parse: its locked run as it was before the engine wrapped it.
    monkeypatch.setattr(queries, "_execute_query_locked", queries._execute_query_locked.__wrapped__)
    theirs = parse_all(Tree(root, None), "compiledByCgc")
    monkeypatch.undo()

    assert len(paths) == len(SOURCES) * 2
    assert [name for name in mine if '"unsupported": true' in mine[name] or '"parse_failed"' in mine[name]] == []
    assert [name for name in mine if mine[name] != theirs[name]] == []
    # cgc compiles each query for each of the two files of a language; the engine, for the first only.
    assert counts["compiledByCgc"] > 0
    assert counts["compiledOnce"] <= counts["compiledByCgc"] / 2
