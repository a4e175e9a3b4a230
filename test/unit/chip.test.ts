import { describe, expect, it } from "vitest";
import { changesObserved, otherWritersSeen, probeSettled } from "../../src/state/model.ts";
import { createStore } from "../../src/state/store.ts";
import { mountChip } from "../../src/ui/chip.ts";

describe("the footer chip", () => {
  it("shows each new text once: a state change it does not render is not shown again as a new claim", () => {
    const store = createStore();
    const shown: string[] = [];
    const unmount = mountChip(store, (text) => shown.push(text));
    try {
      store.apply((state, now) =>
        probeSettled(
          state,
          { readiness: "ready", reason: "ok", drift: { changed: false, paths: [], detail: "" } },
          now,
        ),
      );
      expect(shown).toEqual(["cgc checking…", "cgc ready · fresh"]);
      // A user's `cgc watch` seen beside pi-cgc changes the state, not the chip: repeating "fresh" here would
      // read as a verification that never happened.
      store.apply((state) => otherWritersSeen(state, "a cgc watch outside pi-cgc (pid 1 on /repo)"));
      expect(shown).toEqual(["cgc checking…", "cgc ready · fresh"]);
      store.apply((state) => changesObserved(state, ["/repo/a.py"]));
      expect(shown.at(-1)).toBe("cgc ready · possibly stale");
    } finally {
      unmount();
    }
  });
});
