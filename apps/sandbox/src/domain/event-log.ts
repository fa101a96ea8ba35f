import { ProblemError } from "../problem.ts";
import type { SandboxEvent } from "./resources.ts";

/** 30 days, in sandbox milliseconds. */
export const EVENT_RETENTION_MS = 30 * 24 * 3600 * 1000;

/** True when `type` matches one of `patterns`: exact names or a `prefix.*` wildcard (`*` alone matches all). */
export function matchesTypes(type: string, patterns: readonly string[] | undefined): boolean {
  if (!patterns || patterns.length === 0) return true;
  return patterns.some(
    (p) => p === "*" || p === type || (p.endsWith(".*") && type.startsWith(p.slice(0, -1))),
  );
}

export interface EventPageQuery {
  merchantId?: string;
  after?: string;
  types?: readonly string[];
  limit: number;
}

/**
 * The append-only event log, oldest first. Ids sort in creation order, so "after X" is a binary search.
 * Retention drops events older than 30 sandbox days from the front.
 */
export class EventLog {
  #events: SandboxEvent[] = [];
  #byId = new Map<string, SandboxEvent>();
  readonly #now: () => number;
  readonly #retentionMs: number;

  constructor(now: () => number, retentionMs = EVENT_RETENTION_MS) {
    this.#now = now;
    this.#retentionMs = retentionMs;
  }

  append(event: SandboxEvent): void {
    this.#events.push(event);
    this.#byId.set(event.id, event);
  }

  get(id: string): SandboxEvent | undefined {
    this.prune();
    return this.#byId.get(id);
  }

  /** Every retained event, optionally of one merchant. */
  all(merchantId?: string): SandboxEvent[] {
    this.prune();
    return merchantId ? this.#events.filter((e) => e.merchant_id === merchantId) : [...this.#events];
  }

  /** Throws an `unknown_after` ProblemError when `after` names no retained event of this merchant. */
  page({ merchantId, after, types, limit }: EventPageQuery): { data: SandboxEvent[]; has_more: boolean } {
    this.prune();
    let start = 0;
    if (after !== undefined) {
      const anchor = this.#byId.get(after);
      if (!anchor || (merchantId && anchor.merchant_id !== merchantId))
        throw new ProblemError(400, "unknown_after", { detail: after });
      start = this.#indexAfter(after);
    }
    const data: SandboxEvent[] = [];
    for (let i = start; i < this.#events.length; i++) {
      const e = this.#events[i]!;
      if (merchantId && e.merchant_id !== merchantId) continue;
      if (!matchesTypes(e.type, types)) continue;
      if (data.length === limit) return { data, has_more: true };
      data.push(e);
    }
    return { data, has_more: false };
  }

  /** Drops events past retention; cheap when nothing expired. */
  prune(): void {
    const cutoff = this.#now() - this.#retentionMs;
    let n = 0;
    while (n < this.#events.length && Date.parse(this.#events[n]!.created_at) < cutoff) n++;
    if (n === 0) return;
    for (const e of this.#events.slice(0, n)) this.#byId.delete(e.id);
    this.#events = this.#events.slice(n);
  }

  #indexAfter(id: string): number {
    let lo = 0;
    let hi = this.#events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#events[mid]!.id <= id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
