// The files' extensions decide which repository-wide passes an update runs (C/C++ and Java have one). The engine
// keeps them from update to update (engine/pi_cgc_engine.py, suffixes_after) instead of reading every file's
// extension again: after any mix of files added and removed they must be the extensions the files then have.
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { engineScriptReport } from "../helpers/engine.ts";

const SCRIPT = `
import os, random, sys
sys.path.insert(0, ${JSON.stringify(`${PROJECT_ROOT}/engine`)})
import pi_cgc_engine as engine

names = ["a.py", "b.py", "c.java", "d.cpp", "e.h", "Makefile", "f.tar.gz", "g.py", "h.java", "pkg.v2/i"]
rng = random.Random(12)
files, kept, wrong = {}, None, []
for step in range(400):
    added = {f"/r/{rng.randrange(20)}/{rng.choice(names)}" for _ in range(rng.randrange(3))} - files.keys()
    removed = {p for p in files if rng.random() < 0.15}
    for p in removed:
        del files[p]
    for p in added:
        files[p] = None
    kept = engine.suffixes_after(kept, files, added, removed)
    whole = frozenset(os.path.splitext(p)[1] for p in files)
    if kept != whole:
        wrong.append({"step": step, "kept": sorted(kept), "whole": sorted(whole)})
engine.emit({"report": {"wrong": wrong[:3], "last": sorted(kept)}})
`;

describe("the engine's kept file extensions", () => {
  it("are the files' extensions after every mix of files added and removed", () => {
    const report = engineScriptReport<{ wrong: unknown[]; last: string[] }>(SCRIPT);
    expect(report.wrong).toEqual([]);
    expect(report.last.length).toBeGreaterThan(1);
  });
});
