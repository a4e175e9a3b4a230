// How counts read in what users and the agent read: "1 file", "5 files", never "5 file(s)".

/** `n` and the noun in the number it takes: count(1, "file") is "1 file", count(2, "child", "children") "2 children". */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
