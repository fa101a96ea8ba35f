import { randomUUID } from "node:crypto";
import type { IdempotentCallOptions } from "../call-options.ts";
import { idempotencyKey } from "../validation/rules.ts";
import { validateInput } from "../validation/validate-input.ts";

/** The caller's key (checked to be a UUID) or a fresh one; made once per logical call. */
export function idempotencyKeyFor(options: IdempotentCallOptions): string {
  if (options.idempotencyKey === undefined) return randomUUID();
  return validateInput(idempotencyKey, options.idempotencyKey, "idempotencyKey");
}
