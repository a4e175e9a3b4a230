// The engine's journal (engine/pi_cgc_engine.py, Journal): an update changes the last state's kept indices,
// imports map and views in place instead of copying them, so an update that does not commit (the database
// busy, a write refused, a fault) must put every value back. A user would meet a broken undo as a graph that
// silently drifts from the tree after a busy retry: the next update would diff against values that are not
// the graph's. So: plan an update (a file deleted, one added, one changed: keys come, go and change in every
// kept dict), let it end without committing, and find the last state exactly as it was, key order included;
// then the same update, committed, equals cgc's own build from every file.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { engineScriptReport } from "../helpers/engine.ts";

const SCRIPT = `
import sys
from pathlib import Path
sys.path.insert(0, ${JSON.stringify(join(PROJECT_ROOT, "engine"))})
import pi_cgc_engine as engine
engine.load_cgc()

root = Path(sys.argv[1]).resolve()
# "exact": the journal notes key orders and puts them back (an embedded database); else an order it moved is
# marked owed (a database server).
exact = sys.argv[2] == "exact"
def write(rel, text):
    (root / rel).write_text(text)

write("a.py", "import os\\nfrom b import helper, Base\\n\\n\\nclass A(Base):\\n    def go(self):\\n        return helper()\\n\\n\\ndef top():\\n    return A().go()\\n")
write("b.py", "import json\\n\\n\\nclass Base:\\n    def go(self):\\n        return 0\\n\\n\\ndef helper():\\n    return json.dumps(1)\\n")
write("c.py", "import re\\nfrom a import top\\n\\n\\nclass C:\\n    def run(self):\\n        return top()\\n\\n\\ndef gone():\\n    return re.compile('x')\\n")

tree = engine.Tree(root, None)
eng = engine.Engine.__new__(engine.Engine)
eng.root, eng.tree, eng.trusted, eng.unknown = root, tree, True, set()
files = {p.as_posix(): tree.parse(p, engine.digest_of(p)) for p in tree.discover()}
imports_map, owners, groups = tree.merge_imports_kept(None, files, set(files))
state = engine.resolve_tree(None, files, imports_map, set(files), True)[0]
state.import_owners, state.import_groups = owners, groups
eng.state = state
# One update committed first: the kept dicts are then the engine's own (KeptDict, the map's _ImportsMap).
write("b.py", "import json\\n\\n\\nclass Base:\\n    def go(self):\\n        return 1\\n\\n\\ndef helper():\\n    return json.dumps(2)\\n")
with eng.in_place(exact=exact):
    eng.state = eng.plan([(root / "b.py").as_posix()])[0]
state = eng.state

def snapshot(s):
    return {
        "owed": [sorted(s.order_owed), engine.imports_owed(s.imports_map), sorted(s.views_owed)],
        "indices": {name: list(index.items()) for name, index in s.indices.items()},
        "contributors": {name: dict(c) for name, c in s.contributors.items()},
        "imports": list(dict.items(s.imports_map)),
        "owners": dict(s.import_owners),
        "views": {lang: list(view.items()) for lang, view in s.lang_views.items()},
        # Per file, and the label index by path: their key order is not kept (nothing reads it), their values are.
        "perFile": {name: dict(getattr(s, name)) for name in PER_FILE},
    }

PER_FILE = ("labels", "label_index", "rows", "deps", "targets")

before = snapshot(state)
objects = {name: id(index) for name, index in state.indices.items()}
(root / "c.py").unlink()
write("d.py", "import re\\nfrom b import helper\\n\\n\\nclass D(dict):\\n    def run(self):\\n        return helper()\\n")
write("a.py", "import os\\nfrom b import helper\\n\\n\\ndef top():\\n    return helper()\\n")
paths = [(root / name).as_posix() for name in ("a.py", "c.py", "d.py")]

changed_in_place = []
with eng.in_place(exact=exact) as journal:
    planned = eng.plan(paths)[0]
    changed_in_place = sorted(name for name, index in planned.indices.items() if objects.get(name) == id(index)
                              and id(index) in journal.dicts)
    changed_in_place += sorted(name for name in PER_FILE if getattr(planned, name) is getattr(state, name)
                               and id(getattr(state, name)) in journal.dicts)
    # not committed: eng.state stays the last state, and the span's end undoes the journal

after = snapshot(state)
def same(a, b, owed):
    # Keys and values as they were; the key order too, unless (not exact) the order is marked owed.
    return a == b or not exact and owed and dict(a) == dict(b)
newly_owed = [sorted(set(after["owed"][0]) - set(before["owed"][0])), after["owed"][1] and not before["owed"][1],
              sorted(set(after["owed"][2]) - set(before["owed"][2]))]
report = {
    "changedInPlace": changed_in_place,
    "stateKept": eng.state is state,
    "indices": {name: same(before["indices"][name], after["indices"][name], name in state.order_owed)
                for name in before["indices"]},
    "contributors": all(before["contributors"][n] == after["contributors"][n] for n in before["contributors"]),
    "imports": same(before["imports"], after["imports"], engine.imports_owed(state.imports_map)),
    "owners": before["owners"] == after["owners"],
    "perFile": {name: before["perFile"][name] == after["perFile"][name] for name in PER_FILE},
    "views": {lang: same(before["views"][lang], after["views"][lang], lang in state.views_owed) for lang in before["views"]},
    "newlyOwed": newly_owed,
}

# The same update again, committed: cgc's own build from every file of the tree after it.
engine.CHECK = True
with eng.in_place(exact=exact):
    new = eng.plan(paths)[0]
    eng.state = new
report["indexCheck"] = list(new.index_check or [])
report["linksDiffer"] = engine.compare_links(new.links, tree.resolve(new.files, new.imports_map))[:5]
engine.emit({"report": report})  # the engine keeps stdout for its protocol
`;

interface Report {
  changedInPlace: string[];
  stateKept: boolean;
  indices: Record<string, boolean>;
  contributors: boolean;
  imports: boolean;
  owners: boolean;
  perFile: Record<string, boolean>;
  views: Record<string, boolean>;
  newlyOwed: [string[], boolean, string[]];
  indexCheck: string[];
  linksDiffer: string[];
}

describe("the engine's journal: an update that does not commit leaves the last state as it was", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  function undone(mode: "exact" | "owed"): Report {
    const dir = mkdtempSync(join(tmpdir(), "pi-cgc-journal-"));
    dirs.push(dir);
    const report = engineScriptReport<Report>(SCRIPT, [dir, mode]);
    // The update did change the last state's dicts in place (else this would test nothing).
    expect(report.changedInPlace).toEqual(
      expect.arrayContaining([
        "function_index",
        "class_index",
        "global_class_bases",
        ...["labels", "label_index", "rows", "deps", "targets"],
      ]),
    );
    expect(report.stateKept).toBe(true);
    expect(Object.entries(report.indices).filter(([, ok]) => !ok)).toEqual([]);
    expect(report.contributors).toBe(true);
    expect(report.imports).toBe(true);
    expect(report.owners).toBe(true);
    expect(report.perFile).toEqual({ labels: true, label_index: true, rows: true, deps: true, targets: true });
    expect(Object.keys(report.views).length).toBeGreaterThan(0);
    expect(Object.entries(report.views).filter(([, ok]) => !ok)).toEqual([]);
    // The same update, committed after the undo, equals cgc's own build: indices, key orders and link rows.
    expect(report.indexCheck).toEqual([]);
    expect(report.linksDiffer).toEqual([]);
    return report;
  }

  it("on an embedded database: every kept index, the imports map and its views, key order included", () => {
    expect(undone("exact").newlyOwed).toEqual([[], false, []]);
  });

  it("on a database server: the same values, a key order the update moved marked owed", () => {
    // The deleted file's keys went from the file-keyed indices: their order could not be put back.
    expect(undone("owed").newlyOwed[0]).toEqual(expect.arrayContaining(["function_index", "class_index"]));
  });
});
