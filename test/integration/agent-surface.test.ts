// The agent surface with the real pi (SDK, faux model) and the real cgc on tinyRepo(): the graph tools
// answer with real callers at real path:line, the routing card is in the system prompt on every prompt
// while the graph is ready and never before, and big results go through the output policy.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Context, fauxAssistantMessage, fauxToolCall } from "@mariozechner/pi-ai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CARD_HEADING } from "../../src/agent/card.ts";
import { type CgcHome, cgcBinary, cgcExec, makeCgcHome } from "../helpers/cgc-env.ts";
import { type PiHarness, recordingUi, startPi, waitFor } from "../helpers/pi-sdk.ts";
import { type TinyRepo, tinyRepo } from "../helpers/repos.ts";

let home: CgcHome;
const harnesses: PiHarness[] = [];
const repos: TinyRepo[] = [];

beforeAll(() => {
  home = makeCgcHome();
  process.env.HOME = home.home;
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
  for (const repo of repos.splice(0)) repo.cleanup();
  process.env.CGC_EXECUTABLE = cgcBinary();
  delete process.env.CGC_OUTPUT_MAX_BYTES;
  delete process.env.CGC_OUTPUT_MAX_LINES;
});
afterAll(() => home.cleanup());

async function repo(indexed: boolean): Promise<TinyRepo> {
  const made = tinyRepo();
  repos.push(made);
  if (indexed) expect((await cgcExec(["index", made.path], { cwd: made.path, env: home.env })).code).toBe(0);
  return made;
}

async function session(cwd: string, chip: RegExp) {
  const ui = recordingUi();
  const h = await startPi({ cwd, ui });
  harnesses.push(h);
  await waitFor(() => chip.test(ui.statuses.get("cgc") ?? ""), `chip ${chip}`);
  return { h, ui };
}

/** Tool result texts of the session, in order. */
function toolTexts(h: PiHarness): Array<{ name: string; text: string; isError: boolean }> {
  return h.session.messages.flatMap((message) =>
    message.role === "toolResult"
      ? [
          {
            name: message.toolName,
            text: message.content.map((part) => (part.type === "text" ? part.text : "")).join(""),
            isError: message.isError,
          },
        ]
      : [],
  );
}

/** A faux step that records the system prompt it was given. */
function capture(prompts: string[], reply = "ok") {
  return (context: Context) => {
    prompts.push(context.systemPrompt ?? "");
    return fauxAssistantMessage(reply);
  };
}

function lineOf(repoPath: string, file: string, line: number): string {
  return readFileSync(join(repoPath, file), "utf8").split("\n")[line - 1] ?? "";
}

beforeAll(() => {
  process.env.CGC_EXECUTABLE = cgcBinary();
});

describe("graph tools through the faux model", () => {
  it("callers of normalize are alpha, beta and main at their call sites; orphan has none", async () => {
    const tiny = await repo(true);
    const { h } = await session(tiny.path, /^cgc ready/);
    h.faux.setResponses([
      fauxAssistantMessage(fauxToolCall("cgc_relations", { relation: "callers", target: "normalize" }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxToolCall("cgc_relations", { relation: "callers", target: "orphan" }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(fauxToolCall("cgc_relations", { relation: "callers", target: "no_such_function" }), {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("who calls normalize, and orphan?");
    const [normalize, orphan, missing] = toolTexts(h);

    expect(normalize?.isError).toBe(false);
    const callers = [
      ...(normalize?.text ?? "").matchAll(
        /^- (\w+) {2}(\S+):(\d+) {2}\(calls normalize; \w+ defined at line (\d+)\)$/gm,
      ),
    ];
    expect(callers.map((m) => m[1]).sort()).toEqual(tiny.facts.callers.normalize);
    for (const [, name, file, callLine, defLine] of callers) {
      expect(lineOf(tiny.path, file as string, Number(callLine))).toContain("normalize(");
      expect(lineOf(tiny.path, file as string, Number(defLine))).toMatch(new RegExp(`^def ${name}\\(`));
    }

    expect(orphan?.isError).toBe(false);
    expect(orphan?.text).toBe("No callers of orphan in the graph.");
    expect(missing?.isError).toBe(true);
    expect(missing?.text).toMatch(/^NOT_FOUND: no function or class named "no_such_function"/);
    expect(missing?.text).toMatch(/\nRemedy: .+/);
  });
});
