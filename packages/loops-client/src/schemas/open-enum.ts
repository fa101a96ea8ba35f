import { z } from "zod";

/** Receives each enum value the client did not know, with the field it came in. */
export type UnknownValueSink = (field: string, value: string) => void;

// Zod offers no per-parse context, and parsing is synchronous, so the sink of the parse in
// progress is held here for the length of that one call (see parseReporting).
let currentSink: UnknownValueSink | undefined;

/**
 * An enum that keeps values it does not know: upstream may add an order status tomorrow and the
 * sync must carry it, not crash. Unknown values are reported to the sink of the current parse.
 */
export function openEnum<const V extends readonly [string, ...string[]]>(field: string, values: V) {
  const known = new Set<string>(values);
  return z.string().transform((value): V[number] | (string & {}) => {
    if (!known.has(value)) currentSink?.(field, value);
    return value;
  });
}

/** safeParse with `sink` receiving the unknown enum values met on the way. */
export function parseReporting<T extends z.ZodType>(
  schema: T,
  value: unknown,
  sink: UnknownValueSink,
): z.ZodSafeParseResult<z.output<T>> {
  const previous = currentSink;
  currentSink = sink;
  try {
    return schema.safeParse(value);
  } finally {
    currentSink = previous;
  }
}
