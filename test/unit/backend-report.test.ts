// The backend named to the user is the one cgc reports on its own call (the fixtures' stderr, captured from
// the real binary on each backend), while the watcher's gating keeps detectCgcBackend's answer.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeBackend, reportedBackend, shownBackend } from "../../src/cgc/backend.ts";
import { initialState } from "../../src/state/model.ts";
import { renderStatus } from "../../src/ui/status.ts";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";

const stderrOf = (name: string) =>
  (
    JSON.parse(readFileSync(join(PROJECT_ROOT, "test", "fixtures", "cgc", `${name}.json`), "utf8")) as {
      stderr: string;
    }
  ).stderr;

describe("the backend cgc reports", () => {
  it("reads each backend's line", () => {
    expect(reportedBackend(stderrOf("banner-falkordb"))).toEqual({
      name: "falkordb",
      source: "cgc's own report (auto-detect)",
    });
    expect(reportedBackend(stderrOf("banner-kuzudb"))?.name).toBe("kuzudb");
    expect(reportedBackend(stderrOf("banner-falkordb-remote"))).toEqual({
      name: "falkordb-remote",
      source: "cgc's own report (environment (DEFAULT_DATABASE), host 127.0.0.1)",
    });
    expect(reportedBackend(stderrOf("banner-neo4j"))?.name).toBe("neo4j");
    expect(reportedBackend(stderrOf("version"))).toBeUndefined();
  });

  it("is what /cgc status names; the gating's own answer is added only where it differs", () => {
    const reported = reportedBackend(stderrOf("banner-falkordb"));
    const status = renderStatus({
      state: initialState(),
      root: "/w",
      backend: null,
      reportedBackend: reported,
      executable: "cgc",
      maintenanceRunning: false,
    });
    expect(status).toContain(
      "backend:    falkordb — from cgc's own report (auto-detect); the watcher's auto mode reads no configured backend (treated as embedded)",
    );
    const detected = { name: "falkordb-remote", source: "environment (DEFAULT_DATABASE)" };
    expect(describeBackend(reportedBackend(stderrOf("banner-falkordb-remote")), detected)).toBe(
      "falkordb-remote — from cgc's own report (environment (DEFAULT_DATABASE), host 127.0.0.1)",
    );
    // Nothing reported yet (before the first probe): the detection, as before.
    expect(describeBackend(undefined, detected)).toBe("falkordb-remote — from environment (DEFAULT_DATABASE)");
    expect(describeBackend(undefined, null)).toBe("unknown (treated as embedded)");
    expect(shownBackend(reported, detected)).toBe(reported);
    expect(shownBackend(undefined, detected)).toBe(detected);
    expect(shownBackend(undefined, null)).toBeUndefined();
  });
});
