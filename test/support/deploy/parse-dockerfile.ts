// A Dockerfile reader for the checks in check-dockerfile.ts: instructions with their line numbers,
// continuation lines joined, comments dropped, grouped into build stages. No heredocs (unused here).

export interface DockerInstruction {
  /** Upper-case keyword: FROM, RUN, COPY, … */
  keyword: string;
  /** Everything after the keyword, continuation lines joined with a space. */
  args: string;
  /** 1-based line where the instruction starts. */
  line: number;
}

export interface DockerStage {
  /** The image or earlier stage this stage starts from. */
  from: string;
  /** `AS name`, if given. */
  name: string | undefined;
  instructions: DockerInstruction[];
}

export const DOCKERFILE_KEYWORDS: ReadonlySet<string> = new Set([
  "ADD",
  "ARG",
  "CMD",
  "COPY",
  "ENTRYPOINT",
  "ENV",
  "EXPOSE",
  "FROM",
  "HEALTHCHECK",
  "LABEL",
  "ONBUILD",
  "RUN",
  "SHELL",
  "STOPSIGNAL",
  "USER",
  "VOLUME",
  "WORKDIR",
]);

/** Splits a Dockerfile into instructions (the escape character is the default backslash). */
export function parseDockerfile(text: string): DockerInstruction[] {
  const instructions: DockerInstruction[] = [];
  let pending: { start: number; parts: string[] } | undefined;
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, index) => {
    const trimmed = raw.trim();
    // Comments and blank lines may sit inside a continued instruction without ending it.
    if (trimmed.startsWith("#") || trimmed === "") return;
    const continues = trimmed.endsWith("\\");
    const body = continues ? trimmed.slice(0, -1).trim() : trimmed;
    if (pending) pending.parts.push(body);
    else pending = { start: index + 1, parts: [body] };
    if (continues) return;
    const joined = pending.parts.filter(Boolean).join(" ");
    const match = /^(\S+)\s*(.*)$/.exec(joined)!;
    instructions.push({ keyword: match[1]!.toUpperCase(), args: match[2]!, line: pending.start });
    pending = undefined;
  });
  if (pending) {
    throw new Error(`Dockerfile ends inside a continued instruction (line ${pending.start})`);
  }
  return instructions;
}

/** Groups instructions into stages; instructions before the first FROM (global ARGs) are dropped. */
export function dockerStages(instructions: readonly DockerInstruction[]): DockerStage[] {
  const stages: DockerStage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === "FROM") {
      const words = instruction.args.split(/\s+/).filter((w) => !w.startsWith("--"));
      const as = words.findIndex((w) => w.toUpperCase() === "AS");
      stages.push({ from: words[0] ?? "", name: as >= 0 ? words[as + 1] : undefined, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return stages;
}

/** `["node", "x"]` (exec form) → the array; shell form → undefined. */
export function execForm(args: string): string[] | undefined {
  if (!args.trim().startsWith("[")) return undefined;
  const value: unknown = JSON.parse(args);
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw new Error(`not a JSON array of strings: ${args}`);
  }
  return value;
}

/** `ENV A=1 B="x y"` and the legacy `ENV A 1` → name/value pairs. */
export function envPairs(args: string): Array<[string, string]> {
  const pairs = [...args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g)];
  if (pairs.length === 0) {
    const legacy = /^([A-Za-z_][A-Za-z0-9_]*)\s+(.*)$/.exec(args.trim());
    return legacy ? [[legacy[1]!, legacy[2]!]] : [];
  }
  return pairs.map((m) => [m[1]!, m[2]!.replace(/^"(.*)"$/, "$1")]);
}
