// Docker Compose variable interpolation, resolved as on a machine with an empty .env: `${X:-d}` and
// `${X-d}` give d, `${X}` gives "", `${X:?msg}` is an error, `$$` is a literal `$`.

/** Thrown for `${X:?message}` when X is unset: compose would refuse to start. */
export class RequiredVariableError extends Error {
  readonly code = "compose_variable_required";
  constructor(name: string, message: string) {
    super(`${name} must be set: ${message}`);
    this.name = "RequiredVariableError";
  }
}

const PATTERN = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/** The value compose would use with `given` as the environment (default: nothing set). */
export function interpolate(value: string, given: Readonly<Record<string, string>> = {}): string {
  return value.replace(
    PATTERN,
    (whole, braced?: string, operator?: string, operand?: string, bare?: string) => {
      if (whole === "$$") return "$";
      const name = (braced ?? bare)!;
      const current = given[name];
      const unset = current === undefined || (operator?.startsWith(":") === true && current === "");
      if (operator?.endsWith("?") && unset) throw new RequiredVariableError(name, operand ?? "");
      if (operator?.endsWith("-") && unset) return operand ?? "";
      return current ?? "";
    },
  );
}

/** Names of the variables a value interpolates (`${X…}` or `$X`). */
export function interpolatedNames(value: string): string[] {
  return [...value.matchAll(PATTERN)].map((m) => m[1] ?? m[4]).filter((n): n is string => n !== undefined);
}
