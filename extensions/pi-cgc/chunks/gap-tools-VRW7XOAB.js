import {
  GAP_TOOL_NAMES,
  ToolFailure,
  answered,
  confinedPath,
  failureOf,
  liveSession
} from "./chunk-QWBAJ4R4.js";
import "./chunk-U43P4R4X.js";
import "./chunk-EM356YHV.js";
import "./chunk-K7T5KA4E.js";
import "./chunk-AN223M6Q.js";

// src/agent/gap-tools.ts
import { existsSync } from "node:fs";
import { StringEnum } from "@mariozechner/pi-ai";
import { defineTool } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";
var CONTEXT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
function checked(result) {
  if (result.code !== "OK") throw failureOf(result.code, result.reason);
  return result;
}
var output = (result) => `${result.stdout}
${result.stderr}`.trim();
async function confirmed(ctx, title, message) {
  return ctx.hasUI ? ctx.ui.confirm(title, message) : false;
}
function doctorTool(deps) {
  return defineTool({
    name: GAP_TOOL_NAMES.doctor,
    label: "cgc doctor",
    description: "Diagnose cgc itself (configuration, database backend and connection, parsers, permissions) with `cgc doctor`. Use it when a graph tool fails.",
    parameters: Type.Object({}),
    async execute(_id, _params, signal) {
      const session = liveSession(deps.current);
      return answered(session, async () => {
        await deps.lease(session).release("cgc doctor checks the database");
        const result = await session.runner.run(["doctor"], {
          kind: "query",
          cwd: session.root,
          takesLock: false,
          signal
        });
        if (result.code === "UNAVAILABLE" || result.code === "CANCELLED") throw failureOf(result.code, result.reason);
        return `cgc doctor (${result.code === "OK" ? "no problems reported" : "problems reported"}):
${output(result)}`;
      });
    }
  });
}
var CONTEXT_ACTIONS = ["list", "create", "set_default", "delete"];
function contextsTool(deps) {
  return defineTool({
    name: GAP_TOOL_NAMES.contexts,
    label: "cgc contexts",
    description: "CGC named contexts (separate graphs, e.g. one per git worktree): list them, create one, set the default, or delete one from cgc's registry (asks the user; database files stay on disk).",
    parameters: Type.Object({
      action: StringEnum(CONTEXT_ACTIONS, { description: "list | create | set_default | delete" }),
      name: Type.Optional(Type.String({ description: "The context (required except for list)" }))
    }),
    async execute(_id, params, signal, _update, ctx) {
      const session = liveSession(deps.current);
      return answered(session, async () => {
        const runContext = async (args) => checked(
          await session.runner.run(["context", ...args], {
            kind: "query",
            cwd: session.root,
            takesLock: false,
            signal
          })
        );
        if (params.action === "list") return output(await runContext(["list"]));
        const name = params.name?.trim() ?? "";
        if (!CONTEXT_NAME.test(name)) {
          throw new ToolFailure(
            "NOT_ALLOWED",
            `context name ${JSON.stringify(name)} is missing or not plain (letters, digits, . _ -)`,
            "pass a plain name, e.g. wt-feature."
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
          `cgc context delete ${name} removes the context "${name}" from cgc's registry (its database files stay on disk).`
        );
        if (!yes)
          throw new ToolFailure(
            "NOT_ALLOWED",
            `the user did not confirm deleting context ${name}`,
            "leave it, or ask the user."
          );
        return deleteContext(session, name, signal);
      });
    }
  });
}
async function deleteContext(session, name, signal) {
  const child = session.runner.startLongLived(["context", "delete", name], { cwd: session.root, stdin: true });
  const onAbort = () => void child.stop();
  signal?.addEventListener("abort", onAbort, { once: true });
  child.child?.stdin?.end("y\n");
  const result = await child.exited;
  signal?.removeEventListener("abort", onAbort);
  if (result.exitCode !== 0) throw failureOf(result.code === "OK" ? "FAILED" : result.code, result.reason);
  const text = output(result).replace(/^.*\[y\/N\]:\s*/s, "");
  if (/not found/i.test(text)) throw new ToolFailure("NOT_FOUND", `no context named ${name}`, "list the contexts.");
  if (session.worktree.contextDeleted(name)) void session.refresh();
  return text;
}
function bundleTool(deps) {
  return defineTool({
    name: GAP_TOOL_NAMES.bundle,
    label: "cgc bundle export",
    description: "Export this workspace's code graph to a portable .cgc bundle file (asks the user; the file must be inside the workspace or a root listed in CGC_ALLOWED_ROOTS).",
    parameters: Type.Object({
      output: Type.String({ description: "Bundle file to write, e.g. graph.cgc (a path inside the workspace)" })
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
          `cgc bundle export will write the code graph of ${session.root} to ${path}${replaces}.`
        );
        if (!yes)
          throw new ToolFailure("NOT_ALLOWED", `the user did not confirm writing ${path}`, "ask the user first.");
        await deps.lease(session).release("a bundle export needs the database");
        const result = checked(
          await session.runner.run(["bundle", "export", path, "--repo", session.root], {
            kind: "maintenance",
            cwd: session.root,
            signal
          })
        );
        const text = output(result);
        if (!/Successfully exported/i.test(text))
          throw failureOf("FAILED", text.split("\n").pop() ?? "no bundle written");
        return text;
      });
    }
  });
}
function gapTools(deps) {
  return [doctorTool(deps), contextsTool(deps), bundleTool(deps)];
}
export {
  gapTools
};
