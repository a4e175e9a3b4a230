// Every graph and gap tool through the real pi (faux model) and the real cgc on tinyRepo(), checked
// against what the fixture repository contains by construction; confirmations through the recording UI.
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type CgcHome, cgcBinary, cgcExec, makeCgcHome } from "../helpers/cgc-env.ts";
import { restoreSuiteEnv, suiteEnv } from "../helpers/env.ts";
import { type PiHarness, type RecordingUi, recordingUi, startPi, toolResults, waitFor } from "../helpers/pi-sdk.ts";
import { indexedTinyRepo, type TinyRepo, tinyRepo } from "../helpers/repos.ts";

let home: CgcHome;
let tiny: TinyRepo;
const harnesses: PiHarness[] = [];

beforeAll(async () => {
  home = makeCgcHome();
  tiny = await indexedTinyRepo(home.env);
  suiteEnv({ HOME: home.home, CGC_EXECUTABLE: cgcBinary() });
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
});
afterAll(() => {
  restoreSuiteEnv();
  tiny.cleanup();
  home.cleanup();
});

async function ready(ui: RecordingUi | undefined = recordingUi()): Promise<PiHarness> {
  const h = await startPi({ cwd: tiny.path, ui });
  harnesses.push(h);
  await waitFor(() => h.session.getActiveToolNames().includes("cgc_relations"), "the graph tools");
  return h;
}

/** Runs the calls in one prompt (one model step each) and returns each result's text and error flag. */
async function call(h: PiHarness, calls: Array<[string, Record<string, unknown>]>) {
  const before = h.session.messages.length;
  h.faux.setResponses([
    ...calls.map(([name, args]) => fauxAssistantMessage(fauxToolCall(name, args), { stopReason: "toolUse" })),
    fauxAssistantMessage("done"),
  ]);
  await h.session.prompt("go");
  return toolResults(h, before);
}

const line = (file: string, n: number) => readFileSync(join(tiny.path, file), "utf8").split("\n")[n - 1] ?? "";

describe("graph tools", () => {
  it("answer each kind of question with names at path:line", async () => {
    const h = await ready();
    const [callees, transitive, chain, importers, hierarchy, overrides, find, dead, complex, stats] = await call(h, [
      ["cgc_relations", { relation: "callees", target: "main" }],
      ["cgc_relations", { relation: "callers_transitive", target: "normalize", depth: 2 }],
      ["cgc_relations", { relation: "call_chain", target: "main", to: "normalize" }],
      ["cgc_relations", { relation: "importers", target: "pkg.text" }],
      ["cgc_relations", { relation: "class_hierarchy", target: "Square" }],
      ["cgc_relations", { relation: "overrides", target: "area" }],
      ["cgc_find", { query: "orphan" }],
      ["cgc_dead_code", {}],
      ["cgc_complex_functions", { limit: 3 }],
      ["cgc_stats", {}],
    ]);
    for (const result of [callees, transitive, chain, importers, hierarchy, overrides, find, dead, complex, stats]) {
      expect(result?.isError, result?.text).toBe(false);
    }
    // main's calls: imported names (resolution_tier 6) and describe, a plain name of the same file (tier 2): all
    // confirmed, none possible.
    expect(callees?.text).toContain("main calls 4 functions");
    expect(callees?.text).toContain("- normalize  pkg/text.py:1  (called at app.py:8)");
    expect(callees?.text).toContain("- describe  app.py:13  (called at app.py:10)");
    expect(callees?.text).not.toContain("possible");
    expect(line("pkg/text.py", 1)).toBe("def normalize(value):");
    expect(transitive?.text).toMatch(/- main {2}app\.py:7 {2}\(1 hop\)/);
    expect(chain?.text).toContain("main (app.py:7) → normalize (pkg/text.py:1)");
    expect(chain?.text).toContain("main (app.py:7) → alpha (pkg/alpha.py:4) → normalize (pkg/text.py:1)");
    expect(importers?.text).toContain("3 files import pkg.text");
    expect(importers?.text).toContain("- pkg/alpha.py");
    expect(hierarchy?.text).toContain("- parent Polygon  pkg/shapes.py:9");
    expect(line("pkg/shapes.py", 9)).toBe("class Polygon(Shape):");
    expect(overrides?.text).toContain("- Square.area  pkg/shapes.py:19");
    expect(line("pkg/shapes.py", 19)).toContain("def area(self):");
    expect(find?.text).toContain("function orphan  pkg/text.py:5");
    expect(dead?.text).toContain("- orphan  pkg/text.py:5");
    expect(complex?.text).toMatch(/- 2 {2}main {2}app\.py:7/);
    expect(stats?.text).toMatch(/files: 6, functions: 19, classes: 4/);
  });

  it("count callers and call sites apart: one function calling another at two lines is one caller", async () => {
    // Its own repository: a caller of normalize at two lines, beside the fixture's three callers at one each.
    const twice = tinyRepo();
    try {
      writeFileSync(
        join(twice.path, "pkg", "twice.py"),
        "from pkg.text import normalize\n\n\ndef twice(value):\n    first = normalize(value)\n    return normalize(first)\n",
      );
      expect((await cgcExec(["index", twice.path], { cwd: twice.path, env: home.env })).code).toBe(0);
      const h = await startPi({ cwd: twice.path, ui: recordingUi() });
      harnesses.push(h);
      await waitFor(() => h.session.getActiveToolNames().includes("cgc_relations"), "the graph tools");
      const [callers] = await call(h, [["cgc_relations", { relation: "callers", target: "normalize" }]]);
      expect(callers?.text).toMatch(/^4 callers of normalize at 5 call sites /);
      expect(callers?.text.match(/^- twice /gm)).toHaveLength(2);
    } finally {
      twice.cleanup();
    }
  });

  it("list confirmed callers plainly and cgc's guesses apart, marked; dead code skips a function only possibly called", async () => {
    // Alpha.go calls self.process() (cgc: CALLS EXTRACTED, tier 1) and both() calls helper() through an import
    // (tier 6): confirmed. both() calls obj.process() and obj.emit(), names that Alpha and Beta both define:
    // cgc links each to Alpha's by name (HEURISTIC_CALLS AMBIGUOUS), a possible call only.
    const guessed = tinyRepo();
    try {
      const files: Record<string, string> = {
        "pkg/a.py":
          "class Alpha:\n    def process(self):\n        return 1\n\n    def go(self):\n        return self.process()\n\n" +
          "    def emit(self):\n        return 2\n\n\ndef helper():\n    return 2\n",
        "pkg/b.py": "class Beta:\n    def process(self):\n        return 3\n\n    def emit(self):\n        return 4\n",
        "pkg/use.py":
          "from pkg.a import helper\n\n\ndef both(obj):\n    helper()\n    obj.emit()\n    return obj.process()\n\n\n" +
          "def lonely():\n    return 0\n",
      };
      for (const [file, source] of Object.entries(files)) writeFileSync(join(guessed.path, file), source);
      expect((await cgcExec(["index", guessed.path], { cwd: guessed.path, env: home.env })).code).toBe(0);
      const h = await startPi({ cwd: guessed.path, ui: recordingUi() });
      harnesses.push(h);
      await waitFor(() => h.session.getActiveToolNames().includes("cgc_relations"), "the graph tools");
      const [callers, callees, onlyGuessed, dead] = await call(h, [
        ["cgc_relations", { relation: "callers", target: "process", file: "pkg/a.py" }],
        ["cgc_relations", { relation: "callees", target: "both" }],
        ["cgc_relations", { relation: "callers", target: "emit", file: "pkg/a.py" }],
        ["cgc_dead_code", {}],
      ]);
      const notConfirmed =
        "(not confirmed: cgc linked these by name or by inference, not by an import or a definition; each says why";
      const notConfirmedCallers =
        "(not confirmed: cgc linked these by name or by inference, or pi-cgc could not rule the call out; each says why";
      const ambiguous = "[possible: several functions have this name; cgc picked one by name]";
      expect(callers?.text).toBe(
        [
          "1 caller of process (path:line is the call site):",
          "- go  pkg/a.py:6  (calls process; go defined at line 5)",
          "",
          `1 possible caller ${notConfirmedCallers}):`,
          `- both  pkg/use.py:7  (calls process; both defined at line 4)  ${ambiguous}`,
        ].join("\n"),
      );
      expect(callees?.text).toBe(
        [
          "both calls 1 function (path:line is the definition):",
          "- helper  pkg/a.py:12  (called at pkg/use.py:5)",
          "",
          `2 possible callees ${notConfirmed}):`,
          `- emit  pkg/a.py:8  (called at pkg/use.py:6)  ${ambiguous}`,
          `- process  pkg/a.py:2  (called at pkg/use.py:7)  ${ambiguous}`,
        ].join("\n"),
      );
      expect(onlyGuessed?.text).toBe(
        [
          `No confirmed callers of emit; 1 possible ${notConfirmedCallers}; path:line is the call site):`,
          `- both  pkg/use.py:6  (calls emit; both defined at line 4)  ${ambiguous}`,
        ].join("\n"),
      );
      // Alpha.emit's only caller is a possible one (cgc's guess): not dead. Nor are Beta.emit and Beta.process,
      // which cgc links to nothing: obj.emit() and obj.process() may call them (pi-cgc's own possible callers).
      expect(dead?.text).toContain("- lonely  pkg/use.py:10");
      expect(dead?.text).not.toContain("pkg/a.py:8");
      expect(dead?.text).not.toContain("pkg/a.py:2");
      expect(dead?.text).not.toContain("pkg/b.py");
      expect(dead?.text).toMatch(/\n\n\d+ more functions left out: they have possible callers \(calls of their name/);
    } finally {
      guessed.cleanup();
    }
  });

  it("report cgc's own error for a bad query, and NOT_FOUND for an unknown name", async () => {
    const h = await ready();
    const [syntax, unknown] = await call(h, [
      ["cgc_cypher", { query: "MATCH (n RETURN n" }],
      ["cgc_find", { query: "zzz_nothing_like_this" }],
    ]);
    expect(syntax?.isError).toBe(true);
    expect(syntax?.text).toMatch(/^FAILED: .*(Parser|exception)/i);
    expect(syntax?.text).toMatch(/\nRemedy: /);
    expect(unknown?.isError).toBe(true);
    expect(unknown?.text).toMatch(/^NOT_FOUND: nothing named or mentioning "zzz_nothing_like_this"/);
  });

  it("refuse a file argument outside the workspace, by .. or by symlink", async () => {
    const h = await ready();
    const outside = mkdtempSync(join(tmpdir(), "pi-cgc-outside-"));
    symlinkSync(outside, join(tiny.path, "escape"));
    try {
      const [dots, link] = await call(h, [
        ["cgc_relations", { relation: "callers", target: "normalize", file: "../elsewhere/text.py" }],
        ["cgc_relations", { relation: "callers", target: "normalize", file: "escape/text.py" }],
      ]);
      expect(dots?.isError).toBe(true);
      expect(dots?.text).toMatch(/^NOT_ALLOWED: path "\.\.\/elsewhere\/text\.py" is empty or climbs with \.\./);
      expect(link?.isError).toBe(true);
      expect(link?.text).toMatch(/^NOT_ALLOWED: escape\/text\.py resolves to .*, outside /);
    } finally {
      rmSync(join(tiny.path, "escape"));
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe("gap tools", () => {
  it("diagnose with cgc doctor", async () => {
    const h = await ready();
    const [doctor] = await call(h, [["cgc_doctor", {}]]);
    expect(doctor?.isError).toBe(false);
    expect(doctor?.text).toMatch(/^cgc doctor \(/);
    expect(doctor?.text).toContain("Checking");
  });

  it("manage named contexts; deleting one asks and names it", async () => {
    const ui = recordingUi();
    const h = await ready(ui);
    const [created, again, defaulted, listed, bad] = await call(h, [
      ["cgc_contexts", { action: "create", name: "wt-agent" }],
      ["cgc_contexts", { action: "create", name: "wt-agent" }],
      ["cgc_contexts", { action: "set_default", name: "wt-agent" }],
      ["cgc_contexts", { action: "list" }],
      ["cgc_contexts", { action: "create", name: "bad/name" }],
    ]);
    expect(created?.text).toContain("Created context 'wt-agent'");
    expect(again?.isError).toBe(true);
    expect(again?.text).toMatch(/^FAILED: context wt-agent already exists/);
    expect(defaulted?.text).toContain("Default context set to 'wt-agent'");
    expect(listed?.text).toContain("wt-agent *");
    expect(bad?.text).toMatch(/^NOT_ALLOWED: context name "bad\/name"/);

    ui.confirmAnswer = false;
    const [declined] = await call(h, [["cgc_contexts", { action: "delete", name: "wt-agent" }]]);
    expect(ui.confirms.at(-1)?.message).toContain('"wt-agent"');
    expect(declined?.text).toMatch(/^NOT_ALLOWED: the user did not confirm deleting context wt-agent/);
    ui.confirmAnswer = true;
    const [deleted, missing] = await call(h, [
      ["cgc_contexts", { action: "delete", name: "wt-agent" }],
      ["cgc_contexts", { action: "delete", name: "wt-agent" }],
    ]);
    expect(deleted?.text).toContain("Deleted context 'wt-agent'");
    expect(missing?.text).toMatch(/^NOT_FOUND: no context named wt-agent/);
    const config = readFileSync(join(home.home, ".codegraphcontext", "config.yaml"), "utf8");
    expect(config).not.toContain("wt-agent:");
  });

  it("without a UI, deleting a context and exporting a bundle are declined", async () => {
    const h = await startPi({ cwd: tiny.path });
    harnesses.push(h);
    await waitFor(() => h.session.getActiveToolNames().includes("cgc_relations"), "the graph tools");
    const [del, bundle] = await call(h, [
      ["cgc_contexts", { action: "delete", name: "anything" }],
      ["cgc_bundle_export", { output: "graph.cgc" }],
    ]);
    expect(del?.text).toMatch(/^NOT_ALLOWED: the user did not confirm/);
    expect(bundle?.text).toMatch(/^NOT_ALLOWED: the user did not confirm writing/);
    expect(existsSync(join(tiny.path, "graph.cgc"))).toBe(false);
  });

  it("export a bundle inside the workspace once confirmed; refuse a path outside", async () => {
    const ui = recordingUi();
    const h = await ready(ui);
    ui.confirmAnswer = true;
    const target = join(tiny.path, "graph.cgc");
    try {
      const [outside, exported] = await call(h, [
        ["cgc_bundle_export", { output: join(tmpdir(), "graph.cgc") }],
        ["cgc_bundle_export", { output: "graph.cgc" }],
      ]);
      expect(outside?.text).toMatch(/^NOT_ALLOWED: .*outside /);
      expect(exported?.isError, exported?.text).toBe(false);
      expect(exported?.text).toContain("Successfully exported");
      expect(ui.confirms.at(-1)?.message).toContain(target);
      expect(existsSync(target)).toBe(true);
    } finally {
      rmSync(target, { force: true });
    }
  });
});

describe("one owner of the database", () => {
  it("pi-cgc's own rebuild gets through while a query lease is held; graph calls meanwhile answer BUSY at once", async () => {
    const ui = recordingUi();
    ui.confirmAnswer = true;
    const h = await ready(ui);
    let rebuild: Promise<void> | undefined;
    h.faux.setResponses([
      fauxAssistantMessage(fauxToolCall("cgc_stats", {}), { stopReason: "toolUse" }),
      () => {
        // Right after a graph call: the lease holds the embedded database when the rebuild starts.
        rebuild = h.session.prompt("/cgc index --force");
        return fauxAssistantMessage("rebuilding");
      },
      fauxAssistantMessage(fauxToolCall("cgc_stats", {}), { stopReason: "toolUse" }),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("stats, then rebuild");
    await waitFor(() => /^cgc rebuilding/.test(ui.statuses.get("cgc") ?? ""), "the rebuild to run");
    const before = h.session.messages.length;
    await h.session.prompt("stats again");
    const during = h.session.messages.slice(before).find((message) => message.role === "toolResult");
    // pi-cgc's own answer, given without asking cgc (which would wait out its lock retries, then say BUSY in its words).
    expect(during?.role === "toolResult" && during.isError).toBe(true);
    const text = during?.role === "toolResult" && during.content[0]?.type === "text" ? during.content[0].text : "";
    expect(text).toMatch(/^BUSY: pi-cgc is rebuilding the graph/);
    await rebuild;
    expect(ui.notices.map((notice) => notice.message)).toContain(`Indexed ${tiny.path}.`);
    await waitFor(() => /^cgc ready/.test(ui.statuses.get("cgc") ?? ""), "ready again");
  }, 900_000);
});
