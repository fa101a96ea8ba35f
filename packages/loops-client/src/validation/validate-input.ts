import type { z } from "zod";
import { LoopsError } from "../errors.ts";
import { formatIssuePath } from "./format-issue-path.ts";

/**
 * Checks a request argument before anything is sent, returning the parsed value (unknown fields
 * kept). Throws an `invalid` LoopsError naming the first bad field, e.g. `products[2].price.currency`.
 * `prefix` names the argument when the schema covers only part of it.
 */
export function validateInput<S extends z.ZodType>(schema: S, value: unknown, prefix = ""): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue ? formatIssuePath(issue.path) : "";
  const field = prefix && path ? `${prefix}.${path}` : prefix || path;
  throw LoopsError.invalidArgument(field, issue?.message ?? "invalid value");
}
