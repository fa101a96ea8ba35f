import type { Context } from "hono";
import type { z } from "zod";
import { invalidRequest } from "../problem.ts";

/** Parses a JSON body against a schema; every problem becomes one `errors` entry of a 400 invalid_request. */
export async function parseJsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  const type = c.req.header("content-type") ?? "";
  if (!type.includes("application/json")) {
    throw invalidRequest([{ field: "content-type", message: "must be application/json" }]);
  }
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw invalidRequest([{ field: "body", message: "is not valid JSON" }]);
  }
  return parseWith(schema, raw);
}

export function parseWith<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw invalidRequest(
      parsed.error.issues.map((issue) => ({
        field: issue.path.map(String).join(".") || "body",
        message: issue.message,
      })),
    );
  }
  return parsed.data;
}
