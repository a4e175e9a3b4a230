// pi-cgc as pi loads it, with a stopwatch around its session_start handlers: pi calls this factory,
// which hands pi-cgc's own factory a pi whose `on("session_start", …)` records how long each handler
// runs synchronously. The product code is untouched. pi loads extensions in their own module
// instances, so the timings travel through globalThis.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

// pi-cgc as pi loads it: the bundle the manifest names (scripts/build.mjs; `npm run bench` builds it first).
const { default: piCgc } = (await import("../extensions/pi-cgc/index.js" as string)) as {
  default: (pi: ExtensionAPI) => void;
};

export interface SessionStartTiming {
  /** performance.now() when the first pi-cgc session_start handler was entered. */
  enteredAt: number;
  /** Synchronous milliseconds of each pi-cgc session_start handler, in registration order. */
  handlerMs: number[];
}

const KEY = Symbol.for("pi-cgc.bench.session-start");

export function sessionStartTimings(): SessionStartTiming[] {
  const holder = globalThis as { [KEY]?: SessionStartTiming[] };
  holder[KEY] ??= [];
  return holder[KEY];
}

export default function timedPiCgc(pi: ExtensionAPI): void {
  let current: SessionStartTiming | undefined;
  let sessionStartHandlers = 0;
  const on = ((event: string, handler: (...args: unknown[]) => unknown) => {
    if (event !== "session_start") return pi.on(event as "session_start", handler as never);
    const timed = (...args: unknown[]) => {
      const started = performance.now();
      if (!current || current.handlerMs.length === sessionStartHandlers) {
        current = { enteredAt: started, handlerMs: [] };
        sessionStartTimings().push(current);
      }
      try {
        return handler(...args);
      } finally {
        current.handlerMs.push(performance.now() - started);
      }
    };
    sessionStartHandlers++;
    return pi.on("session_start", timed as never);
  }) as ExtensionAPI["on"];
  piCgc(new Proxy(pi, { get: (target, property) => (property === "on" ? on : Reflect.get(target, property)) }));
}
