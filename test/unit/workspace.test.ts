// Workspace root resolution and how cgc's CLI prints paths (Rich markup eats `[tag]` segments).
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { richPrinted } from "../../src/cgc/parse.ts";
import { canonical, isWithin, resolveWorkspaceRoot } from "../../src/workspace/root.ts";

describe("richPrinted", () => {
  it.each([
    ["/src/app/[id]/page.tsx", "/src/app//page.tsx"],
    ["/x/[Id] ünï (x)", "/x/ ünï (x)"],
    ["/x/[0]/y", "/x/[0]/y"],
    ["a[idx] + b[/i]", "a + b"],
    ["plain/path", "plain/path"],
    ["esc\\[id]", "esc\\[id]"],
  ])("%s → %s", (input, printed) => {
    expect(richPrinted(input)).toBe(printed);
  });
});

describe("isWithin", () => {
  it.each([
    ["/w", "/w", true],
    ["/w", "/w/a/b", true],
    ["/w", "/w/..foo", true],
    ["/w", "/w/..foo/x", true],
    ["/w", "/w/a/../b", true],
    ["/w", "/", false],
    ["/w", "/x", false],
    ["/w", "/w/../x", false],
    ["/w", "/wx", false],
    ["/w/a", "/w", false],
  ])("%s holds %s: %s", (parent, child, inside) => {
    expect(isWithin(parent, child)).toBe(inside);
  });
});

describe("resolveWorkspaceRoot", () => {
  const base = canonical(mkdtempSync(join(tmpdir(), "pi-cgc-root-")));
  const repo = join(base, "dir with spaces", "[id] ünïcødé (x)", "repo");
  mkdirSync(join(repo, ".git"), { recursive: true });
  mkdirSync(join(repo, "pkg", "sub"), { recursive: true });

  it("finds the indexed ancestor of a subfolder, even when the graph printed it without [tags]", () => {
    expect(resolveWorkspaceRoot(join(repo, "pkg", "sub"), [richPrinted(repo)], richPrinted)).toBe(repo);
    expect(resolveWorkspaceRoot(join(repo, "pkg"), [repo])).toBe(repo);
  });

  it("falls back to the git toplevel, then the cwd", () => {
    expect(resolveWorkspaceRoot(join(repo, "pkg", "sub"), ["/elsewhere"])).toBe(repo);
    expect(resolveWorkspaceRoot(base)).toBe(base);
  });
});
