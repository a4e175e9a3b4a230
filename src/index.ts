// pi-cgc: the pi entry. Subscribes to pi's events and hands them to the session core; nothing else.
// pi builds a fresh instance of this module for every session (startup, reload, new, resume, fork),
// so the handlers below are registered once per session and the session state lives in `session`.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { type CgcSession, createCgcSession } from "./lifecycle/session.ts";
import { registerCgcCommand } from "./ui/command.ts";

export default function piCgc(pi: ExtensionAPI): void {
  let session: CgcSession | undefined;

  pi.on("session_start", (_event, ctx) => {
    session = createCgcSession(ctx);
    void session.refresh(); // background: session_start returns at once
  });

  pi.on("session_shutdown", async () => {
    const ending = session;
    session = undefined;
    await ending?.dispose();
  });

  registerCgcCommand(
    pi,
    () => session,
    () => ({
      sync: async () => {
        const current = session;
        if (!current) return "pi-cgc is not active.";
        const result = await current.runMaintenance("syncing", ["index", "--force", current.root], "sync");
        return result.code === "OK" ? `Synced ${current.root}.` : `Sync ended ${result.code}: ${result.reason}`;
      },
      annotate: (text) => text,
    }),
  );
}
