// Readiness at session start on each backend of the matrix (test/helpers/backends.ts), with the real pi (SDK,
// faux model, recording UI) and the real cgc: an indexed tiny repository reaches `cgc ready · fresh`, an
// unindexed one `cgc unindexed`. Server backends are started here on 127.0.0.1 and stopped here; on FalkorDB
// Lite nothing pi-cgc started may still run once pi has ended.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  BACKEND_NAMES,
  falkordbLiteDaemons,
  startBackend,
  type TestBackend,
  useBackendInProcess,
} from "../helpers/backends.ts";
import { type PiHarness, recordingUi, startPi, waitFor } from "../helpers/pi-sdk.ts";
import { indexedTinyRepo, tinyRepo } from "../helpers/repos.ts";

// Two cores shared by every suite: a probe's cgc call on a server backend or FalkorDB Lite (a daemon
// started per call) can take several seconds here, so the probe gets a wide budget; the verdict is under test.
const PROBE_BUDGET = { CGC_TIMEOUTS_PROBE_MS: "90000" };

describe.each(BACKEND_NAMES)("readiness on %s", (name) => {
  let backend: TestBackend;
  let restore: () => void = () => {};
  const harnesses: PiHarness[] = [];

  beforeAll(async () => {
    backend = await startBackend(name);
    restore = useBackendInProcess({ ...backend, env: { ...backend.env, ...PROBE_BUDGET } });
  }, 300_000);
  afterEach(async () => {
    for (const h of harnesses.splice(0)) await h.dispose();
    // pi ended: whatever pi-cgc's cgc children started (FalkorDB Lite's daemon) ended with them.
    if (name === "falkordb") expect(falkordbLiteDaemons(backend.home.home)).toEqual([]);
  });
  afterAll(async () => {
    restore();
    await backend?.stop();
  }, 120_000);

  async function start(cwd: string) {
    const ui = recordingUi();
    const h = await startPi({ cwd, ui });
    harnesses.push(h);
    return { h, ui, chip: () => ui.statuses.get("cgc") };
  }

  it("an indexed repository: cgc ready · fresh", async () => {
    const repo = await indexedTinyRepo(backend.env, { cgc: backend.cgc, timeoutMs: 240_000 });
    const { h, ui, chip } = await start(repo.path);
    await waitFor(() => chip() === "cgc ready · fresh", `chip ready on ${name} (was ${chip()})`, 150_000);
    // The backend named is the one cgc reported on the probe's own call.
    expect(ui.notices.map((notice) => notice.message)).toEqual([
      expect.stringMatching(new RegExp(`^cgc ready: .* — 6 files, \\d+ functions \\(${backend.reported.name}\\)\\.$`)),
    ]);
    const before = ui.notices.length;
    await h.session.prompt("/cgc status");
    const status = ui.notices
      .slice(before)
      .map((notice) => notice.message)
      .join("\n");
    expect(status).toContain(
      `backend:    ${backend.reported.name} — from cgc's own report (${backend.reported.source}`,
    );
  });

  it("an unindexed repository: cgc unindexed", async () => {
    const { chip } = await start(tinyRepo().path);
    await waitFor(() => chip() === "cgc unindexed", `chip unindexed on ${name} (was ${chip()})`, 150_000);
  });
});
