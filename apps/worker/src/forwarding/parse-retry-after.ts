/**
 * Retry-After (RFC 9110) as milliseconds from `now`: delay-seconds or an HTTP date. Undefined when absent,
 * unreadable, or not in the future, so a bad header falls back to the usual backoff rather than a hold.
 */
export function parseRetryAfterMs(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) {
    const seconds = Number(trimmed);
    return seconds > 0 ? seconds * 1000 : undefined;
  }
  // An HTTP date names a day and a month; without letters Date.parse would take "-3" for a year.
  if (!/^[A-Za-z]{3}, /.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at) || at <= now) return undefined;
  return at - now;
}
