import { InvalidArgumentError } from "commander";

/** `--merchant mer_…` */
export function parseMerchantId(value: string): string {
  if (!/^mer_[A-Za-z0-9_-]+$/.test(value)) {
    throw new InvalidArgumentError(`expected a merchant ID like mer_abc123, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** `--since 2026-11-01T00:00:00Z`: an ISO 8601 date-time, normalised to UTC. */
export function parseIsoDate(value: string): string {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms)) {
    throw new InvalidArgumentError(
      `expected an ISO 8601 date-time like 2026-11-01T00:00:00Z, got ${JSON.stringify(value)}`,
    );
  }
  return new Date(ms).toISOString();
}

/** `--duration 30` (seconds, may be fractional, > 0). */
export function parseSeconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) {
    throw new InvalidArgumentError(`expected a number of seconds above 0, got ${JSON.stringify(value)}`);
  }
  return n;
}

/** A whole number ≥ 0, e.g. `--rate 5`. */
export function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    throw new InvalidArgumentError(`expected a whole number of 0 or more, got ${JSON.stringify(value)}`);
  }
  return n;
}

/** An event ID argument: `evt_…`. */
export function parseEventId(value: string): string {
  if (!/^evt_[A-Za-z0-9_-]+$/.test(value)) {
    throw new InvalidArgumentError(`expected an event ID like evt_abc123, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** `--type order.updated`, or a family: `--type order.*`. */
export function parseEventType(value: string): string {
  if (!/^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*(\.\*)?$/.test(value)) {
    throw new InvalidArgumentError(
      `expected an event type like order.updated, or a family like order.*, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}
