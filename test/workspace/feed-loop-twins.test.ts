// The twins named in issue 54: the feed's follow loops and the consumers verb's flags, each written once.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const read = (file: string) => readFile(path.join(root, file), "utf8");
const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;

describe("the feed's readers", () => {
  it("LISTEN, wait and back off in one loop (poll-feed.ts), which followChanges and consumeChanges call", async () => {
    const dir = "packages/schema/src";
    const files = (await readdir(path.join(root, dir))).filter((f) => f.endsWith(".ts"));
    const listeners: string[] = [];
    const backoffs: string[] = [];
    for (const file of files) {
      const text = await read(path.join(dir, file));
      if (/\.listen\(/.test(text)) listeners.push(file);
      if (/backoff \* 2/.test(text)) backoffs.push(file);
    }
    expect({ listeners, backoffs }).toEqual({ listeners: ["poll-feed.ts"], backoffs: ["poll-feed.ts"] });
    for (const file of ["follow-changes.ts", "consume-changes.ts"]) {
      expect(await read(path.join(dir, file)), file).toMatch(/\bpollFeed\(/);
    }
  });
});

describe("loops-sync consumers", () => {
  it("declares the consumer name and --json once, for every verb", async () => {
    const text = await read("apps/cli/src/commands/consumers.ts");
    expect(count(text, /"<name>"/g)).toBe(1);
    expect(count(text, /"--json"/g)).toBe(1);
    expect(count(text, /parseConsumerName\)/g)).toBe(1);
  });
});
