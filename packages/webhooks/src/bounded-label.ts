/** Maps a value from outside (an event type, an upstream string) to a metric label value of a bounded set. */
export type BoundedLabel = (value: string) => string;

const LABEL_VALUE = /^[a-z0-9_.:-]{1,64}$/i;

/**
 * The `known` values are kept; the first `cap` other values seen are kept too (so a new type upstream adds
 * still gets its own series); everything else, and anything that does not look like a short label, is
 * `other`. Series per label therefore stay at most `known.size + cap + 1`, whatever a sender invents.
 */
export function boundedLabel(known: Iterable<string>, cap = 20): BoundedLabel {
  const kept = new Set(known);
  const learned = new Set<string>();
  return (value) => {
    if (kept.has(value) || learned.has(value)) return value;
    if (learned.size >= cap || !LABEL_VALUE.test(value)) return "other";
    learned.add(value);
    return value;
  };
}
