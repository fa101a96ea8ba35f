import { randomBytes } from "node:crypto";

/**
 * Makes identifiers like `evt_0mhx3k2a10002a7f3c9`: sandbox time, then a per-process counter, then a random
 * tail. Ids of one prefix sort in creation order (the events API depends on that), and two sandbox runs never
 * reuse an id, so a receiver that outlives a sandbox restart does not mistake new events for duplicates.
 */
export class IdFactory {
  readonly #now: () => number;
  readonly #instance = randomBytes(3).toString("hex");
  #lastTime = 0;
  #counter = 0;

  constructor(now: () => number) {
    this.#now = now;
  }

  next(prefix: string): string {
    const time = Math.max(this.#now(), this.#lastTime);
    if (time === this.#lastTime) this.#counter++;
    else this.#counter = 0;
    this.#lastTime = time;
    const timePart = time.toString(36).padStart(9, "0");
    const counterPart = this.#counter.toString(36).padStart(4, "0");
    return `${prefix}_${timePart}${counterPart}${this.#instance}`;
  }

  /** A random, unguessable value (tokens, request ids are not secrets but should not collide). */
  random(prefix: string, bytes = 12): string {
    return `${prefix}_${randomBytes(bytes).toString("hex")}`;
  }
}
