// The engine's choice of the rows to write again (engine/pi_cgc_engine.py, rows_by_target): the rows of another
// file that point into a changed file, in their order. Files with very many rows (cgc's heuristic calls: one
// row per same-named function of the tree, 1.4 million in one file of the 5 000-file bench tree) are served
// from positions kept per target; what they give must be what filtering the whole list gives.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { engineScriptReport } from "../helpers/engine.ts";

const SCRIPT = `
import sys
sys.path.insert(0, ${JSON.stringify(join(PROJECT_ROOT, "engine"))})
import pi_cgc_engine as engine

def rows(count, salt):
    return [{"called_file_path": f"/nowhere/t{(i * 7 + salt) % 97}.py", "line_number": i} for i in range(count)]

def naive(rows, changed, into):
    return [r for r in rows if (engine.norm(r.get("called_file_path")) in changed) is into]

report = []
kept = {}  # the state's positions of large lists (TreeState.row_positions)
changed = {"/nowhere/t3.py", "/nowhere/t50.py"}
for count in (500, engine.BIG_ROW_LIST + 5_000):
    first = rows(count, 0)
    again = rows(count, 1)  # the file resolved again: new lists, other rows
    for listing in (first, first, again, first):
        for into in (True, False):
            got = engine.rows_by_target(listing, "called_file_path", changed, into, kept, ("a.py", "calls", 0))
            want = naive(listing, changed, into)
            report.append({"count": count, "into": into, "same": got == want and all(a is b for a, b in zip(got, want)), "rows": len(got)})
    report.append({"count": count, "none": engine.rows_by_target(first, "called_file_path", {"/nowhere/x.py"}, True, kept, ("a.py", "calls", 0)) == []})
engine.emit({"report": report})  # the engine keeps stdout for its protocol
`;

describe("the rows an update writes again into a changed file", () => {
  it("are those of a filter over the whole list, in order, for small and very large lists, and after the list changed", () => {
    const report = engineScriptReport<Array<Record<string, unknown>>>(SCRIPT);
    const compared = report.filter((entry) => "same" in entry);
    expect(compared).toHaveLength(16);
    expect(compared.every((entry) => entry.same === true)).toBe(true);
    expect(compared.some((entry) => entry.into === true && Number(entry.rows) > 0)).toBe(true);
    expect(report.filter((entry) => "none" in entry).every((entry) => entry.none === true)).toBe(true);
  });
});
