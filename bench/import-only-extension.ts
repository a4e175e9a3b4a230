// pi-cgc's module graph loaded by pi, with nothing registered: for the memory bench, what pi's loader
// keeps of the extension's modules alone, apart from anything a pi-cgc session holds.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import piCgc from "../src/index.ts";

export default function importOnly(_pi: ExtensionAPI): void {
  void piCgc;
}
