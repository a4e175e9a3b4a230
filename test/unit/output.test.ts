// The one output policy: strip, redact (without mangling what the agent needs), cap, spill privately.
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyOutputPolicy, createSpillDir, redactSecrets, stripControl } from "../../src/cgc/output.ts";

const workspace = mkdtempSync(join(tmpdir(), "pi-cgc-ws-"));

describe("output policy", () => {
  it("strips terminal escapes and control characters, keeps text, tabs and newlines", () => {
    expect(stripControl("\u001b[1;32mready\u001b[0m\tok\r\n\u001b]0;title\u0007done\u0000")).toBe("ready\tok\ndone");
  });

  it("redacts secret shapes", () => {
    const text = [
      "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
      "NEO4J_PASSWORD=hunter2secret",
      "key AKIAABCDEFGHIJKLMNOP here",
      "Authorization: Bearer abcdefghijklmnop.qrstuvwx",
      "bolt://neo4j:s3cr3tpass@localhost:7687",
      "sk-ant-REDACTMEREDACTMEREDACTME01",
    ].join("\n");
    const out = redactSecrets(text);
    for (const secret of [
      "ghp_abc",
      "hunter2secret",
      "AKIAABCDEFGHIJKLMNOP",
      "abcdefghijklmnop.qrstuvwx",
      "s3cr3tpass",
      "REDACTME",
    ]) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain("NEO4J_PASSWORD=[REDACTED]");
  });

  it("keeps 40-hex git SHAs, content hashes and long paths intact", () => {
    const sha = "9f838f652670e3ffabec79a2c2e18086e58ea687";
    const sha256 = "a".repeat(20) + "0123456789abcdef".repeat(3) + "b".repeat(12);
    const path = `/home/dev/projects/${"very-long-directory-name/".repeat(12)}app/[id]/page.tsx:42`;
    const text = `commit ${sha}\ncontent_hash ${sha256}\n${path}\nsrc/token_store.py:10 def get_token(secret_name)`;
    expect(redactSecrets(text)).toBe(text);
  });

  it("never throws on arbitrary input", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 400 }), (text) => {
        const out = redactSecrets(stripControl(text));
        expect(typeof out).toBe("string");
      }),
    );
  });

  it("caps head and tail with a marker naming the original size and a private spill file", () => {
    const spill = createSpillDir(workspace);
    const lines = Array.from({ length: 5_000 }, (_, i) => `line ${i} ${"x".repeat(40)}`);
    const result = applyOutputPolicy(lines.join("\n"), { maxBytes: 4_096, maxLines: 100 }, spill);
    expect(result.truncated).toBe(true);
    expect(result.text).toContain("line 0 ");
    expect(result.text).toContain("line 4999 ");
    expect(result.text).toMatch(/output capped: [\d.]+KB \(5000 lines\) in all/);
    expect(Buffer.byteLength(result.text)).toBeLessThan(4_096 + 400);
    const spillPath = result.spillPath as string;
    expect(spillPath.startsWith(workspace)).toBe(false);
    expect(statSync(spillPath).mode & 0o777).toBe(0o600);
    expect(readFileSync(spillPath, "utf8")).toBe(lines.join("\n"));
    spill.cleanup();
    expect(existsSync(spillPath)).toBe(false);
  });

  it("leaves small output alone and writes no file", () => {
    const spill = createSpillDir(workspace);
    expect(applyOutputPolicy("small", { maxBytes: 1_024, maxLines: 10 }, spill)).toEqual({
      text: "small",
      truncated: false,
      originalBytes: 5,
    });
    expect(spill.dir).toBeUndefined();
  });
});
