// The engine's kept indices with an owed key order (engine/pi_cgc_engine.py, "Kept indices"): when a file
// with keys comes or goes, an index keeps the right keys and values and its key order is put right only when
// something iterates it. cgc's resolution must then see, in every index it iterates, the order cgc's own build
// from every file gives, exactly as if the order had been rebuilt at once; so must the imports map and its
// per-language views, kept the same way.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";
import { engineScriptReport } from "../helpers/engine.ts";

const SCRIPT = `
import json, os, sys
from pathlib import Path
sys.path.insert(0, ${JSON.stringify(join(PROJECT_ROOT, "engine"))})
import pi_cgc_engine as engine
engine.load_cgc()

root = Path(sys.argv[1]).resolve()
def write(rel, text):
    (root / rel).write_text(text)

write("m.py", "def run():\\n    return 1\\n\\n\\nclass Base:\\n    def go(self):\\n        return 1\\n")
write("n.py", "from m import run, Base\\n\\n\\nclass K(Base):\\n    pass\\n\\n\\ndef call():\\n    return run()\\n")
write("z.py", "from n import call\\n\\n\\ndef last():\\n    return call()\\n")

# What cgc's loop sees: every index it is given, iterated (as cgc's own code would) while the first
# file is resolved. _resolved_posix is a function of cgc's calls module the loop calls for each file.
seen = {}
owed_at_loop = []
imports_owed = []
captured_make = []
seen_imports = {}
seen_view = {}
original = engine._calls_module._resolved_posix
def spy(path):
    run = engine._RUN
    frame = sys._getframe(1)
    if not seen and run is not None and getattr(run, "swapped", False) and frame.f_code is engine.build_function_call_groups.__code__:
        owed_at_loop.extend(sorted(run.keeper.owed))
        captured_make[:] = [frame.f_locals["_get_lang_imports"]]
        for name in (*engine.CALL_INDEXES, "_functions_by_name"):
            index = frame.f_locals.get(name)
            if isinstance(index, dict):
                seen[name] = dict(index.items())  # iterating: an owed order is settled first
        imports_owed.append([engine.imports_owed(run.imports_map), "python" in run.views_owed])
        seen_imports.update(frame.f_locals["imports_map"].items())
        seen_view.update(frame.f_locals["_get_lang_imports"]("python").items())
    return original(path)
spy.cache_clear = original.cache_clear  # cgc clears its cache at the start of a resolution
engine._calls_module._resolved_posix = spy

tree = engine.Tree(root, None)
def parsed():
    return {p.as_posix(): tree.parse(p, engine.digest_of(p)) for p in tree.discover()}

report = []
files = parsed()
# The imports map as the engine's plan keeps it (Tree.merge_imports_kept), with each name's files.
imports_map, owners, groups = tree.merge_imports_kept(None, files, set(files))
state = engine.resolve_tree(None, files, imports_map, set(files), True)[0]
state.import_owners, state.import_groups = owners, groups
def step(name, changed):
    global state
    seen.clear()
    owed_at_loop.clear()
    imports_owed.clear()
    seen_imports.clear()
    seen_view.clear()
    files = parsed()
    paths = {(root / c).as_posix() for c in changed}
    imports_map, owners, groups = tree.merge_imports_kept(state, files, paths)
    state, resolved = engine.resolve_tree(state, files, imports_map, paths, True)
    state.import_owners, state.import_groups = owners, groups
    keys = [k for k in sorted(files) if "error" not in files[k].data]
    whole_map = tree.merge_imports(files)
    whole_view = engine._view_of(captured_make[0], "python", whole_map) if captured_make else {}
    report.append({
        "step": name,
        "owedAtLoop": list(owed_at_loop),
        "owedAfter": sorted(state.order_owed),
        "resolved": len(resolved),
        "iterated": sorted(seen),
        "differences": engine.compare_kept_indices(seen, [files[k].data for k in keys], whole_map) if seen else ["nothing iterated"],
        "importsOwedAtLoop": imports_owed[:1],
        "importsInOrder": list(seen_imports) == list(whole_map) and seen_imports == dict(whole_map),
        "viewInOrder": bool(whole_view) and list(seen_view) == list(whole_view) and seen_view == whole_view,
    })

# A file that sorts first, with names of its own and names the others have: its keys go first in cgc's order.
write("a.py", "def brand_new():\\n    return 2\\n\\n\\ndef run():\\n    return 3\\n\\n\\nclass Early(Base):\\n    def go(self):\\n        return 4\\n")
step("a file that sorts first added", ["a.py"])
# It goes again, and a file that calls is edited (so that a file is resolved and cgc's loop runs).
os.remove(root / "a.py")
write("n.py", "from m import run, Base\\n\\n\\nclass K(Base):\\n    pass\\n\\n\\ndef call():\\n    return run() + 1\\n")
step("that file deleted, a caller edited", ["a.py", "n.py"])
engine.emit({"report": report})
`;

describe("the engine's kept indices with an owed key order", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("are in cgc's own order wherever cgc's resolution iterates them, after a file comes and after it goes", () => {
    const root = mkdtempSync(join(tmpdir(), "pi-cgc-order-"));
    dirs.push(root);
    const report = engineScriptReport<
      {
        step: string;
        owedAtLoop: string[];
        owedAfter: string[];
        resolved: number;
        iterated: string[];
        differences: string[];
        importsOwedAtLoop: boolean[][];
        importsInOrder: boolean;
        viewInOrder: boolean;
      }[]
    >(SCRIPT, [root]);
    expect(report.map((r) => r.step)).toEqual(["a file that sorts first added", "that file deleted, a caller edited"]);
    for (const step of report) {
      // The case under test: the order of the indices the change gave or took keys was owed when cgc's loop
      // began, and the loop saw every index in cgc's order; what it iterated is owed no more.
      expect(step.owedAtLoop, step.step).toEqual(expect.arrayContaining(["function_index", "_functions_by_name"]));
      expect(step.resolved, step.step).toBeGreaterThan(0);
      expect(step.iterated, step.step).toEqual(expect.arrayContaining(["function_index", "_functions_by_name"]));
      expect(step.differences, step.step).toEqual([]);
      expect(step.owedAfter, step.step).toEqual([]);
      // The imports map and its per-language view, likewise.
      expect(step.importsOwedAtLoop, step.step).toEqual([[true, true]]);
      expect(step.importsInOrder, step.step).toBe(true);
      expect(step.viewInOrder, step.step).toBe(true);
    }
  });
});
