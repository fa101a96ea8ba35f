// Every webhook attempt the sandbox made during a run, with how long the receiver took to answer. The sandbox
// keeps its last 5 000 deliveries only, so the log copies them every half second (a delivery is updated in
// place as attempts are added; the latest copy wins).

import type { Delivery, Sandbox } from "@loops-sync/sandbox";

export interface WebhookAnswer {
  eventId: string;
  /** ms since the epoch when the request left (the sandbox clock runs at real time in these runs). */
  startedAt: number;
  ms: number;
  /** null: no answer (a refused connection, a timeout). */
  status: number | null;
  error: string | null;
}

export interface DeliveryLog {
  /** Every attempt so far, oldest first. */
  answers(): WebhookAnswer[];
  /** Event ids that got a 2xx. */
  accepted(): string[];
  stop(): void;
}

export function startDeliveryLog(
  sandbox: Sandbox,
  { everyMs = 500 }: { everyMs?: number } = {},
): DeliveryLog {
  const seen = new Map<string, Delivery>();
  const copy = () => {
    for (const d of sandbox.deliveries()) seen.set(d.id, d);
  };
  const timer = setInterval(copy, everyMs);
  const all = () => {
    copy();
    return [...seen.values()];
  };
  return {
    answers: () =>
      all()
        .flatMap((d) =>
          d.attempts.map((a) => ({
            eventId: d.event_id,
            startedAt: Date.parse(a.started_at),
            ms: Date.parse(a.ended_at) - Date.parse(a.started_at),
            status: a.status,
            error: a.error,
          })),
        )
        .sort((a, b) => a.startedAt - b.startedAt),
    accepted: () =>
      all()
        .filter((d) => d.attempts.some((a) => a.status !== null && a.status >= 200 && a.status < 300))
        .map((d) => d.event_id),
    stop: () => clearInterval(timer),
  };
}
