// Tools for cgc verbs CGC's MCP catalog lacks (ADR 0006), registered whether or not an MCP adapter
// carries the catalog: diagnostics (`cgc doctor`), named contexts, bundle export. Deleting a context and
// writing a bundle ask the user first, naming the context or the file (ADR 0003); without a UI the answer
// is no. cgc reports most of these failures with exit code 0, so the text decides.
import { existsSync } from "node:fs";
import { StringEnum } from "@mariozechner/pi-ai";
import { defineTool, type ExtensionContext, type ToolDefinition } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
import type { RunResult } from "../cgc/runner.ts";
import { GAP_TOOL_NAMES } from "./catalog.ts";
import { answered, confinedPath, failureOf, liveSession, ToolFailure } from "./results.ts";
import type { GraphDeps, GraphSession } from "./tools.ts";

const CONTEXT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function checked(result: RunResult): RunResult {
  if (result.code !== "OK") throw failureOf(result.code, result.reason);
  return result;
}

const output = (result: RunResult) => `${result.stdout}\n${result.stderr}`.trim();

/** Declines unless a person said yes in this session. */
async function confirmed(ctx: ExtensionContext, title: string, message: string): Promise<boolean> {
  return ctx.hasUI ? ctx.ui.confirm(title, message) : false;
}

function doctorTool(deps: GraphDeps) {
  return defineTool({
    name: GAP_TOOL_NAMES.doctor,
    label: "cgc doctor",
    description:
      "Diagnose cgc itself (configuration, database backend and connection, parsers, permissions) with `cgc doctor`. Use it when a graph tool fails.",
    parameters: Type.Object({}),
    async execute(_id, _params, signal) {
      const session = liveSession(deps.current);
      return answered(session, async () => {
        await deps.lease(session).release("cgc doctor checks the database");
        const result = await session.runner.run(["doctor"], {
          kind: "query",
          cwd: session.root,
          takesLock: false,
          signal,
        });
        if (result.code === "UNAVAILABLE" || result.code === "CANCELLED") throw failureOf(result.code, result.reason);
        // doctor exits non-zero when it finds problems; its report is the answer either way.
        return `cgc doctor (${result.code === "OK" ? "no problems reported" : "problems reported"}):\n${output(result)}`;
      });
    },
  });
}

const CONTEXT_ACTIONS = ["list", "create", "set_default", "delete"] as const;

function contextsTool(deps: GraphDeps) {
  return defineTool({
    name: GAP_TOOL_NAMES.contexts,
    label: "cgc contexts",
    description:
      "CGC named contexts (separate graphs, e.g. one per git worktree): list them, create one, set the default, or delete one from cgc's registry (asks the user; database files stay on disk).",
    parameters: Type.Object({
      action: StringEnum(CONTEXT_ACTIONS, { description: "list | create | set_default | delete" }),
      name: Type.Optional(Type.String({ description: "The context (required except for list)" })),
    }),
    async execute(_id, params, signal, _update, ctx) {
      const session = liveSession(deps.current);
      return answered(session, async () => {
        const runContext = async (args: string[]) =>
          checked(
            await session.runner.run(["context", ...args], {
              kind: "query",
              cwd: session.root,
              takesLock: false,
              signal,
            }),
          );
        if (params.action === "list") return output(await runContext(["list"]));
        const name = params.name?.trim() ?? "";
        if (!CONTEXT_NAME.test(name)) {
          throw new ToolFailure(
            "NOT_ALLOWED",
            `context name ${JSON.stringify(name)} is missing or not plain (letters, digits, . _ -)`,
            "pass a plain name, e.g. wt-feature.",
          );
        }
        if (params.action === "create") {
          const text = output(await runContext(["create", name]));
          if (/already exists/i.test(text))
            throw new ToolFailure("FAILED", `context ${name} already exists`, "use it, or pick another name.");
          return text;
        }
        if (params.action === "set_default") {
          const text = output(await runContext(["default", name]));
          if (/not found/i.test(text))
            throw new ToolFailure("NOT_FOUND", `no context named ${name}`, "list the contexts, or create it first.");
          return text;
        }
        const yes = await confirmed(
          ctx,
          "Delete a CGC context?",
          `cgc context delete ${name} removes the context "${name}" from cgc's registry (its database files stay on disk).`,
        );
        if (!yes)
          throw new ToolFailure(
            "NOT_ALLOWED",
            `the user did not confirm deleting context ${name}`,
            "leave it, or ask the user.",
          );
        return deleteContext(session, name, signal);
      });
    },
  });
}

/** `cgc context delete` asks on stdin and has no --yes: the user already said yes, so the answer is piped. */
async function deleteContext(session: GraphSession, name: string, signal: AbortSignal | undefined): Promise<string> {
  const child = session.runner.startLongLived(["context", "delete", name], { cwd: session.root, stdin: true });
  const onAbort = () => void child.stop();
  signal?.addEventListener("abort", onAbort, { once: true });
  child.child?.stdin?.end("y\n");
  const result = await child.exited;
  signal?.removeEventListener("abort", onAbort);
  // A long-lived start classifies any exit as a failure; this one is meant to exit, so its code decides.
  if (result.exitCode !== 0) throw failureOf(result.code === "OK" ? "FAILED" : result.code, result.reason);
  const text = output(result).replace(/^.*\[y\/N\]:\s*/s, "");
  if (/not found/i.test(text)) throw new ToolFailure("NOT_FOUND", `no context named ${name}`, "list the contexts.");
  // A worktree's context is gone by the user's word: its record goes too, and readiness is re-derived.
  if (session.worktree.contextDeleted(name)) void session.refresh();
  return text;
}

function bundleTool(deps: GraphDeps) {
  return defineTool({
    name: GAP_TOOL_NAMES.bundle,
    label: "cgc bundle export",
    description:
      "Export this workspace's code graph to a portable .cgc bundle file (asks the user; the file must be inside the workspace or a root listed in CGC_ALLOWED_ROOTS).",
    parameters: Type.Object({
      output: Type.String({ description: "Bundle file to write, e.g. graph.cgc (a path inside the workspace)" }),
    }),
    async execute(_id, params, signal, _update, ctx) {
      const session = liveSession(deps.current);
      return answered(session, async () => {
        const roots = [session.root, ...(process.env.CGC_ALLOWED_ROOTS ?? "").split(":").filter(Boolean)];
        const path = confinedPath(ctx.cwd, params.output, roots);
        if (path instanceof ToolFailure) throw path;
        const replaces = existsSync(path) ? " (replacing the file that is there)" : "";
        const yes = await confirmed(
          ctx,
          "Write a graph bundle?",
          `cgc bundle export will write the code graph of ${session.root} to ${path}${replaces}.`,
        );
        if (!yes)
          throw new ToolFailure("NOT_ALLOWED", `the user did not confirm writing ${path}`, "ask the user first.");
        await deps.lease(session).release("a bundle export needs the database");
        const result = checked(
          await session.runner.run(["bundle", "export", path, "--repo", session.root], {
            kind: "maintenance",
            cwd: session.root,
            signal,
          }),
        );
        const text = output(result);
        if (!/Successfully exported/i.test(text))
          throw failureOf("FAILED", text.split("\n").pop() ?? "no bundle written");
        return text;
      });
    },
  });
}

export function gapTools(deps: GraphDeps): ToolDefinition[] {
  return [doctorTool(deps), contextsTool(deps), bundleTool(deps)];
}
