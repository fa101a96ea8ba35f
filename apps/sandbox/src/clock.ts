/** A handle to a scheduled callback; `cancel()` is safe to call more than once. */
export interface ScheduledTask {
  cancel(): void;
}

export interface SandboxClockOptions {
  /** Sandbox milliseconds per real millisecond: 3600 makes one real second one sandbox hour. Default: 1. */
  timeScale?: number;
  /** Sandbox time at start, in epoch milliseconds. Default: the real time now. */
  startAt?: number;
}

interface Timer {
  dueAt: number;
  seq: number;
  run: () => void;
}

/**
 * Sandbox time: runs `timeScale` times faster than real time and can jump forward. Everything with a
 * duration in the spec (token lifetime, retention, webhook retries, review delays) is scheduled here, so a
 * test can live through 21 hours of retries in seconds.
 */
export class SandboxClock {
  readonly timeScale: number;
  readonly #realStart: number;
  #sandboxStart: number;
  #last = 0;
  #timers: Timer[] = [];
  #seq = 0;
  #handle: NodeJS.Timeout | undefined;
  #armedFor: Timer | undefined;
  #closed = false;

  constructor({ timeScale = 1, startAt = Date.now() }: SandboxClockOptions = {}) {
    if (!(timeScale > 0) || !Number.isFinite(timeScale)) {
      throw new RangeError(`timeScale must be a positive number, got ${timeScale}`);
    }
    this.timeScale = timeScale;
    this.#realStart = performance.now();
    this.#sandboxStart = startAt;
  }

  /** Sandbox epoch milliseconds; never goes backwards. */
  now(): number {
    const t = Math.floor(this.#sandboxStart + (performance.now() - this.#realStart) * this.timeScale);
    this.#last = Math.max(this.#last, t);
    return this.#last;
  }

  /** The sandbox time now as an ISO 8601 UTC string. */
  iso(): string {
    return new Date(this.now()).toISOString();
  }

  /** Moves sandbox time forward, running every callback that falls due. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`advance needs a non-negative duration, got ${ms}`);
    this.#sandboxStart += ms;
    // Synchronously, so whoever jumps the clock sees the due work started when advance returns.
    if (this.#handle) clearTimeout(this.#handle);
    this.#fire();
  }

  /** Runs `run` after `delayMs` of sandbox time. */
  after(delayMs: number, run: () => void): ScheduledTask {
    return this.at(this.now() + Math.max(0, delayMs), run);
  }

  /** Runs `run` once sandbox time reaches `dueAt`. */
  at(dueAt: number, run: () => void): ScheduledTask {
    const timer: Timer = { dueAt, seq: this.#seq++, run };
    if (this.#closed) return { cancel() {} };
    this.#timers.push(timer);
    // Re-arm only when the new callback is the earliest, so bursts of scheduling stay O(1) each.
    if (!this.#armedFor || dueAt < this.#armedFor.dueAt) this.#arm();
    return {
      cancel: () => {
        const i = this.#timers.indexOf(timer);
        if (i >= 0) {
          this.#timers.splice(i, 1);
          if (this.#armedFor === timer) this.#arm();
        }
      },
    };
  }

  /** Sandbox time until the earliest pending callback, or undefined when none is pending. */
  nextDueIn(): number | undefined {
    const next = this.#earliest();
    return next ? Math.max(0, next.dueAt - this.now()) : undefined;
  }

  /** Drops every pending callback; later `after`/`at` calls are ignored. */
  close(): void {
    this.#closed = true;
    this.#timers = [];
    if (this.#handle) clearTimeout(this.#handle);
    this.#handle = undefined;
  }

  #earliest(): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.#timers) {
      if (!best || t.dueAt < best.dueAt || (t.dueAt === best.dueAt && t.seq < best.seq)) best = t;
    }
    return best;
  }

  // One real timer for the earliest callback keeps thousands of pending retries cheap.
  #arm(): void {
    if (this.#handle) clearTimeout(this.#handle);
    this.#handle = undefined;
    const next = this.#earliest();
    this.#armedFor = next;
    if (!next || this.#closed) return;
    const realDelay = Math.max(0, (next.dueAt - this.now()) / this.timeScale);
    this.#handle = setTimeout(() => this.#fire(), Math.min(realDelay, 2 ** 31 - 1));
    this.#handle.unref?.();
  }

  #fire(): void {
    this.#handle = undefined;
    this.#armedFor = undefined;
    const now = this.now();
    const due = this.#timers.filter((t) => t.dueAt <= now).sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq);
    this.#timers = this.#timers.filter((t) => t.dueAt > now);
    for (const t of due) {
      try {
        t.run();
      } catch {
        // A failing callback must not stop the others; callers handle their own errors.
      }
    }
    this.#arm();
  }
}
