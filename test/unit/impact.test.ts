// The pure parts of cgc_impact and the impact note: definitions read from the text, what changed between two
// texts, git's hunks, which import names a file, where a name is called, and the note's wording.
import { describe, expect, it } from "vitest";
import { parseHunks } from "../../src/agent/git-changes.ts";
import { callSitesIn, fileChanges, importNames, noteWorthy } from "../../src/agent/impact.ts";
import { impactLine, impactNote, NOTE_CALLERS } from "../../src/agent/impact-note.ts";
import { definitionsOf, describeChange } from "../../src/agent/signatures.ts";

const PY = `import os

def normalize(value):
    """def fake(a): a docstring is no header"""
    return value


def _clean(v):
    def inner(q):
        return q
    return v

class Shape(Base):
    def area(self):
        pass

    async def label(self,
                    sep=","):  # a comment (with parens)
        pass
`;

const TS = `import { a } from "./b";
export function helper(x: number, y: number): number { return x + y; }
export const arrow = async (p: string, q = 1) => p;
const s = "function fake(a) {";
export class Base {
  private n = 1;
  run(a: number): number {
    if (a) { return a; }
    return helper(a, 2);
  }
  static make<T>(t: T) { return t; }
}
function f(a: string): void;
function f(a: any) {}
`;

describe("definitions", () => {
  it("Python: module functions, classes and their methods, not nested functions nor text in strings", () => {
    expect(definitionsOf("a.py", PY)).toEqual([
      { kind: "function", name: "normalize", params: "value", line: 3 },
      { kind: "function", name: "_clean", params: "v", line: 8 },
      { kind: "class", name: "Shape", params: "Base", line: 13 },
      { kind: "method", name: "area", owner: "Shape", params: "self", line: 14 },
      { kind: "method", name: "label", owner: "Shape", params: 'self,sep=","', line: 17 },
    ]);
  });

  it("TypeScript: functions, arrow constants, classes, methods, overloads joined; no control flow, no strings", () => {
    expect(definitionsOf("a.ts", TS)).toEqual([
      { kind: "function", name: "helper", params: "x:number,y:number", line: 2 },
      { kind: "function", name: "arrow", params: "p:string,q=1", line: 3 },
      { kind: "class", name: "Base", params: "", line: 5 },
      { kind: "method", name: "run", owner: "Base", params: "a:number", line: 7 },
      { kind: "method", name: "make", owner: "Base", params: "t:T", line: 11 },
      { kind: "function", name: "f", params: "a:string | a:any", line: 13 },
    ]);
    expect(definitionsOf("a.md", TS)).toEqual([]);
  });
});

describe("signature changes", () => {
  it("a parameter added, a rename, a removal; a body edit or a moved definition is none", () => {
    const after = PY.replace("def normalize(value)", "def normalize(value, sep=' ')")
      .replace("def _clean(v)", "def _tidy(v)")
      .replace("    def area(self):\n        pass\n", "")
      .replace("return value\n", "return value.strip()\n");
    const changes = fileChanges("a.py", PY, after);
    expect(changes.map(describeChange)).toEqual([
      "parameters changed: normalize(value) → normalize(value, sep=' ')",
      "renamed: _clean(v) → _tidy(v)",
      "removed: Shape.area(self)",
    ]);
    expect(changes.every(noteWorthy)).toBe(true);
    expect(fileChanges("a.py", PY, `\n\n${PY.replace("return v\n", "return v * 2\n")}`)).toEqual([]);
  });

  it("a new file's definitions are added, and an addition is not worth a note", () => {
    const changes = fileChanges("a.ts", "", TS);
    expect(changes.map((change) => change.change)).toEqual(Array(6).fill("added"));
    expect(changes.some(noteWorthy)).toBe(false);
  });
});

describe("git's hunks", () => {
  it("new-side ranges per file; a pure deletion marks where it was", () => {
    const diff = [
      "diff --git a/pkg/text.py b/pkg/text.py",
      "--- a/pkg/text.py",
      "+++ b/pkg/text.py",
      "@@ -1 +1 @@",
      "@@ -10,2 +12,3 @@ def x():",
      "@@ -20,3 +22,0 @@",
      "diff --git a/gone.py b/gone.py",
      "--- a/gone.py",
      "+++ /dev/null",
      "@@ -1,4 +0,0 @@",
    ].join("\n");
    expect([...parseHunks(diff)]).toEqual([
      [
        "pkg/text.py",
        [
          [1, 1],
          [12, 14],
          [22, 23],
        ],
      ],
    ]);
  });
});

describe("imports and call sites", () => {
  const root = "/r";
  it("names a Python module by its dotted path, absolute or relative; a script by its resolved specifier", () => {
    expect(importNames(root, "/r/app.py", "pkg.text", "/r/pkg/text.py")).toBe(true);
    expect(importNames(root, "/r/pkg/alpha.py", ".text", "/r/pkg/text.py")).toBe(true);
    expect(importNames(root, "/r/pkg/sub/x.py", "..text", "/r/pkg/text.py")).toBe(true);
    expect(importNames(root, "/r/app.py", "other.text", "/r/pkg/text.py")).toBe(false);
    expect(importNames(root, "/r/src/main.ts", "./util", "/r/src/util.ts")).toBe(true);
    expect(importNames(root, "/r/src/a/b.ts", "../util.js", "/r/src/util.ts")).toBe(true);
    expect(importNames(root, "/r/src/main.ts", "./lib", "/r/src/lib/index.ts")).toBe(true);
    expect(importNames(root, "/r/src/main.ts", "util", "/r/src/util.ts")).toBe(false);
  });

  it("finds calls of a name in code, not in strings, comments or its own definition", () => {
    const text =
      'from pkg.text import normalize\n\ndef normalize_all(v):\n    # normalize(x) here is a comment\n    s = "normalize(y)"\n    return normalize(v), pkg.normalize (v)\n';
    expect(callSitesIn("a.py", text, "normalize", false)).toEqual([6]);
    expect(callSitesIn("a.ts", "obj.run(1);\nrun(2);\nfunction run(a) {}\n", "run", true)).toEqual([1]);
  });
});

describe("the note's wording", () => {
  it("names at most NOTE_CALLERS call sites, then how many more and cgc_impact", () => {
    const [change] = fileChanges("/r/pkg/text.py", "def normalize(value):\n", "def normalize(value, sep):\n");
    const callers = Array.from({ length: NOTE_CALLERS + 3 }, (_, i) => ({
      relation: "caller" as const,
      name: `f${i}`,
      path: `/r/m${i}.py`,
      line: i + 1,
      hops: 1,
    }));
    const line = impactLine("/r", "/r/pkg/text.py", change as NonNullable<typeof change>, callers);
    expect(line).toBe(
      "`normalize(value)` in pkg/text.py now takes `normalize(value, sep)`; 11 call sites in files not edited in this session still call it as before: m0.py:1, m1.py:2, m2.py:3, m3.py:4, m4.py:5, m5.py:6, m6.py:7, m7.py:8, and 3 more — `cgc_impact`.",
    );
    expect(impactNote([line])).toMatch(/^Impact of your last edit \(pi-cgc, from the code graph\): `normalize/);
  });

  it("counts and names possible call sites apart, after the others", () => {
    const [change] = fileChanges("/r/pkg/text.py", "def normalize(value):\n", "def normalize(value, sep):\n");
    const site = (i: number, possible?: string) => ({
      relation: "caller" as const,
      name: `f${i}`,
      path: `/r/m${i}.py`,
      line: i,
      hops: 1,
      possible,
    });
    const why = "self.normalize() in a subclass";
    const both = impactLine("/r", "/r/pkg/text.py", change as NonNullable<typeof change>, [
      site(1),
      site(2, why),
      site(3),
    ]);
    expect(both).toBe(
      "`normalize(value)` in pkg/text.py now takes `normalize(value, sep)`; 2 call sites in files not edited in this session still call it as before: m1.py:1, m3.py:3; 1 more possible call site (not confirmed; `cgc_impact` says why): m2.py:2.",
    );
    const only = impactLine("/r", "/r/pkg/text.py", change as NonNullable<typeof change>, [site(4, why)]);
    expect(only).toBe(
      "`normalize(value)` in pkg/text.py now takes `normalize(value, sep)`; 1 possible call site in files not edited in this session (not confirmed; `cgc_impact` says why): m4.py:4.",
    );
  });
});
