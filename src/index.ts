// pi-cgc: the pi entry. Subscribes to pi's events and hands them to the session core and the feature
// modules; nothing else. pi builds a fresh instance of this module for every session (startup, reload,
// new, resume, fork), so each handler below is registered once per session.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { type ImpactNotes, installImpactNotes } from "./agent/impact-note.ts";
import { annotate, installInjection } from "./agent/inject.ts";
import { installAgentSurface } from "./agent/install.ts";
import { installFreshness } from "./freshness/install.ts";
import { type FirstProbe, trackFirstProbe } from "./lifecycle/first-probe.ts";
import { type CgcSession, type CurrentSession, createCgcSession } from "./lifecycle/session.ts";
import { CHIP_KEY, mountChip } from "./ui/chip.ts";
import { registerCgcCommand } from "./ui/command.ts";

export default function piCgc(pi: ExtensionAPI): void {
  let session: CgcSession | undefined;
  let unmountChip: (() => void) | undefined;
  let firstProbe: FirstProbe | undefined;
  const current: CurrentSession = () => session;

  pi.on("session_start", (_event, ctx) => {
    const started = createCgcSession(ctx);
    session = started;
    if (started.hasUI)
      unmountChip = mountChip(started.store, (text) => started.withUi(() => ctx.ui.setStatus(CHIP_KEY, text)));
    firstProbe = trackFirstProbe(started); // background: session_start returns at once
  });

  // Registered before the feature modules' `input` handlers: they register the graph tools the verdict wants.
  pi.on("input", async () => {
    if (session && firstProbe && !firstProbe.settled) await firstProbe.wait(session.config()["timeouts.probeMs"]);
  });

  pi.on("session_shutdown", async () => {
    const ending = session;
    session = undefined;
    firstProbe = undefined;
    unmountChip?.();
    unmountChip = undefined;
    await ending?.dispose();
  });

  const freshness = installFreshness(pi, current);
  let notes: ImpactNotes | undefined;
  const surface = installAgentSurface(
    pi,
    current,
    { settle: freshness.settle, possibleCallers: freshness.possibleCallers },
    () => notes?.edited() ?? new Set(),
  );
  notes = installImpactNotes(pi, current, surface.deps);
  installInjection(pi, current);
  registerCgcCommand(pi, current, () => ({
    sync: (ctx) => freshness.manualSync(ctx),
    engine: () => freshness.describeEngine(),
    written: (paths) => freshness.written(paths),
    annotate: (text) => annotate(session, text),
  }));
}
