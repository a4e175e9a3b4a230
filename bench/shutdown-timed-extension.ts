// pi-cgc as pi loads it, with a stopwatch around its session_shutdown handlers: how long pi waits at exit
// for pi-cgc (above all for the probe's cgc children, stopped with SIGINT, to end). pi runs an extension's
// handlers one after another and waits for each; each one's time goes to stderr as one line (synchronously:
// print mode exits right after). The product code is untouched.
import { writeSync } from "node:fs";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

// pi-cgc as pi loads it: the bundle the manifest names (scripts/build.mjs; `npm run bench` builds it first).
const { default: piCgc } = (await import("../extensions/pi-cgc/index.js" as string)) as {
  default: (pi: ExtensionAPI) => void;
};

export const SHUTDOWN_LINE = "pi-cgc bench: session_shutdown handler ms ";

export default function shutdownTimedPiCgc(pi: ExtensionAPI): void {
  const on = ((event: string, handler: (...args: unknown[]) => unknown) => {
    if (event !== "session_shutdown") return pi.on(event as "session_start", handler as never);
    const timed = async (...args: unknown[]) => {
      const started = performance.now();
      try {
        return await handler(...args);
      } finally {
        writeSync(2, `${SHUTDOWN_LINE}${(performance.now() - started).toFixed(1)}\n`);
      }
    };
    return pi.on("session_shutdown", timed as never);
  }) as ExtensionAPI["on"];
  piCgc(new Proxy(pi, { get: (target, property) => (property === "on" ? on : Reflect.get(target, property)) }));
}
