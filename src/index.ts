// pi-cgc: the pi entry. Subscribes to pi's events and hands them to the session core and the feature
// modules; nothing else. pi builds a fresh instance of this module for every session (startup, reload,
// new, resume, fork), so each handler below is registered once per session.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { annotate, installInjection } from "./agent/inject.ts";
import { installAgentSurface } from "./agent/install.ts";
import { installFreshness } from "./freshness/install.ts";
import { type CgcSession, type CurrentSession, createCgcSession } from "./lifecycle/session.ts";
import { CHIP_KEY, mountChip } from "./ui/chip.ts";
import { registerCgcCommand } from "./ui/command.ts";

export default function piCgc(pi: ExtensionAPI): void {
  let session: CgcSession | undefined;
  let unmountChip: (() => void) | undefined;
  const current: CurrentSession = () => session;

  pi.on("session_start", (_event, ctx) => {
    const started = createCgcSession(ctx);
    session = started;
    if (started.hasUI)
      unmountChip = mountChip(started.store, (text) => started.withUi(() => ctx.ui.setStatus(CHIP_KEY, text)));
    void started.refresh(); // background: session_start returns at once
  });

  pi.on("session_shutdown", async () => {
    const ending = session;
    session = undefined;
    unmountChip?.();
    unmountChip = undefined;
    await ending?.dispose();
  });

  const freshness = installFreshness(pi, current);
  installAgentSurface(pi, current, freshness.settle);
  installInjection(pi, current);
  registerCgcCommand(pi, current, () => ({
    sync: (ctx) => freshness.manualSync(ctx),
    engine: () => freshness.describeEngine(),
    written: (paths) => freshness.written(paths),
    annotate: (text) => annotate(session, text),
  }));
}
