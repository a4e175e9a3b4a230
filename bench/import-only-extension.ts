// pi-cgc's module graph loaded by pi, with nothing registered: for the memory bench, what pi's loader
// keeps of the extension's modules alone, apart from anything a pi-cgc session holds.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

// pi-cgc as pi loads it: the bundle the manifest names (scripts/build.mjs; `npm run bench` builds it first).
const { default: piCgc } = (await import("../extensions/pi-cgc/index.js" as string)) as {
  default: (pi: ExtensionAPI) => void;
};

export default function importOnly(_pi: ExtensionAPI): void {
  void piCgc;
}
