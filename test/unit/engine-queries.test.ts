// The engine compiles each of cgc's tree-sitter queries once (engine/pi_cgc_engine.py, _remembering_queries)
// where cgc compiles it again for every file. A parse must give what cgc's own parse gives, in every language
// whose grammar the project's set-up builds (scripts/setup.mjs; cgc's language pack would download the others at
// first use, from a host this machine may not reach), with files of one language parsed one after the other (the
// compiled queries reused).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { engineScriptReport } from "../helpers/engine.ts";

/** Two small files per language, each with a class or type, functions, calls and an import where it has them. */
const SOURCES: Record<string, [string, string]> = {
  py: [
    "import os\n\nclass A:\n    def run(self, x):\n        return helper(x)\n\ndef helper(x):\n    return os.path.join(x, 'a')\n",
    "from a0 import A\n\n@staticmethod\ndef caller():\n    return A().run(1)\n\nvalue = lambda y: y + 1\n",
  ],
  js: [
    "import { b } from './b.js';\nexport class A { run(x) { return b(x); } }\nfunction helper(y) { return y * 2; }\n",
    "export function b(x) { return x + 1; }\nconst c = (z) => b(z);\nmodule.exports = { c };\n",
  ],
  ts: [
    "import { B } from './b';\ninterface Shape { area(): number }\nexport class Sq implements Shape { area(): number { return new B().size(); } }\n",
    "export class B { size(): number { return 4; } }\nexport function make(): B { return new B(); }\n",
  ],
  go: [
    'package main\n\nimport "fmt"\n\ntype S struct{ n int }\n\nfunc (s S) Run() { fmt.Println(s.n) }\n\nfunc main() { S{1}.Run() }\n',
    "package main\n\ntype Runner interface{ Run() }\n\nfunc use(r Runner) { r.Run() }\n",
  ],
  rs: [
    "use std::fmt;\nstruct P { x: i32 }\nimpl P { fn get(&self) -> i32 { helper(self.x) } }\nfn helper(v: i32) -> i32 { v + 1 }\n",
    'trait T { fn go(&self); }\nstruct Q;\nimpl T for Q { fn go(&self) { println!("q"); } }\nfn main() { Q.go(); }\n',
  ],
  java: [
    "package p;\nimport java.util.List;\npublic class A { int run(List<String> l) { return helper(l.size()); } static int helper(int n) { return n; } }\n",
    "package p;\npublic class B extends A implements Runnable { public void run() { new A().run(null); } }\n",
  ],
  c: [
    '#include <stdio.h>\nstruct pt { int x; };\nstatic int helper(int v) { return v + 1; }\nint main(void) { printf("%d", helper(1)); return 0; }\n',
    '#include "a.h"\ntypedef struct q { int y; } q_t;\nint use(q_t *q) { return q->y; }\n',
  ],
  cpp: [
    "#include <vector>\nclass A { public: int run(int x) { return helper(x); } private: static int helper(int y) { return y; } };\n",
    '#include "a.hpp"\nclass B : public A { public: int go() { return run(2); } };\nint main() { B b; return b.go(); }\n',
  ],
};

const SCRIPT = `
import json, sys
from pathlib import Path
sys.path.insert(0, ${JSON.stringify(join(PROJECT_ROOT, "engine"))})
import pi_cgc_engine as engine
engine.load_cgc()
from codegraphcontext.utils import tree_sitter_manager as queries

root = Path(sys.argv[1]).resolve()
paths = sorted(root.iterdir())
remembered = queries._execute_query_locked
compiled = []
report = {"files": len(paths), "differing": [], "compiledOnce": 0, "compiledByCgc": 0}

def parse_all(tree, count_into):
    compiled.clear()
    out = {}
    for path in paths:
        entry = tree.parse(path, (0, 0, ""))
        out[path.name] = json.dumps([entry.data, entry.imports], sort_keys=True, default=sorted)
    report[count_into] = len(compiled)
    return out

# The engine's parse, the compiled queries counted where they are made (the type cgc hands its locked run).
import tree_sitter
real_query = tree_sitter.Query
class CountingQuery:
    def __new__(cls, language, text):
        compiled.append(text)
        return real_query(language, text)
tree_sitter.Query = CountingQuery
mine = parse_all(engine.Tree(root, None), "compiledOnce")
# cgc's own parse: its locked run as it was before the engine wrapped it.
queries._execute_query_locked = remembered.__wrapped__
theirs = parse_all(engine.Tree(root, None), "compiledByCgc")
tree_sitter.Query = real_query
queries._execute_query_locked = remembered
report["differing"] = [name for name in mine if mine[name] != theirs[name]]
report["unsupported"] = [name for name in mine if '"unsupported": true' in mine[name] or '"parse_failed"' in mine[name]]
engine.emit({"report": report})
`;

const scratch = mkdtempSync(join(tmpdir(), "pi-cgc-queries-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the engine's compiled tree-sitter queries", () => {
  it("parse every language as cgc does, each query compiled once", () => {
    for (const [ext, [first, second]] of Object.entries(SOURCES)) {
      writeFileSync(join(scratch, `a0.${ext}`), first);
      writeFileSync(join(scratch, `b1.${ext}`), second);
    }
    const report = engineScriptReport<{
      files: number;
      differing: string[];
      unsupported: string[];
      compiledOnce: number;
      compiledByCgc: number;
    }>(SCRIPT, [scratch]);
    expect(report.files).toBe(Object.keys(SOURCES).length * 2);
    expect(report.unsupported).toEqual([]);
    expect(report.differing).toEqual([]);
    // cgc compiles each query for each of the two files of a language; the engine, for the first only.
    expect(report.compiledByCgc).toBeGreaterThan(0);
    expect(report.compiledOnce).toBeLessThanOrEqual(report.compiledByCgc / 2);
  });
});
