// What a rolling upgrade run measured, and the figures a reader wants from it: per phase, the longest wait of
// a webhook answer and of a reader of replica.orders, and the webhooks accepted per second.

import type { WebhookAnswer } from "./delivery-log.ts";
import type { MigrateRun } from "./migrate-run.ts";
import type { ReadSample } from "./order-reader.ts";
import type { SeededHistory } from "./seed-history.ts";
import type { Settled } from "./settle-mirror.ts";

export interface Phase {
  name: "before" | "migrate" | "old-on-new" | "handover" | "after";
  /** ms since the epoch. */
  start: number;
  end: number;
}

export interface RollingUpgradeReport extends Settled {
  runId: string;
  release: { version: string; commit: string; checkoutSeconds: number };
  seeded: SeededHistory & { fromCache: boolean; template: string };
  phases: Phase[];
  migrate: MigrateRun;
  /** `migrate --check` after the upgrade: exit 0 when nothing is pending. */
  migrateCheck: MigrateRun;
  migrateAgain: MigrateRun & { appliedAny: boolean };
  answers: WebhookAnswer[];
  reads: ReadSample[];
  /** Feed changes of live orders written while only the old worker ran on the new schema. */
  oldOnNew: { changesWritten: number; stillRunning: boolean };
  /** How the old receiver and worker exited after SIGTERM. */
  oldExits: { code: number | null; signal: NodeJS.Signals | null }[];
  /** The new processes still running at the end (all of them, when nothing crashed). */
  stillRunning: string[];
}

export interface PhaseFigures {
  phase: Phase["name"];
  seconds: number;
  webhooks: number;
  /** 2xx answers per second of the phase. */
  acceptedPerSecond: number;
  maxAnswerMs: number;
  reads: number;
  maxReadMs: number;
}

const isOk = (a: WebhookAnswer) => a.status !== null && a.status >= 200 && a.status < 300;
const max = (values: number[]) => values.reduce((m, v) => Math.max(m, v), 0);

/** Figures per phase; an answer or read belongs to the phase in which it started. */
export function phaseFigures(report: RollingUpgradeReport): PhaseFigures[] {
  return report.phases.map((p) => {
    const answers = report.answers.filter((a) => a.startedAt >= p.start && a.startedAt < p.end);
    const reads = report.reads.filter((r) => r.at >= p.start && r.at < p.end);
    const seconds = (p.end - p.start) / 1000;
    return {
      phase: p.name,
      seconds: Math.round(seconds * 10) / 10,
      webhooks: answers.length,
      acceptedPerSecond: Math.round((answers.filter(isOk).length / seconds) * 10) / 10,
      maxAnswerMs: Math.round(max(answers.map((a) => a.ms))),
      reads: reads.length,
      maxReadMs: Math.round(max(reads.map((r) => r.ms))),
    };
  });
}

/** Answers that were not 2xx (or no answer at all), for a failure message. */
export function refusedAnswers(report: RollingUpgradeReport): WebhookAnswer[] {
  return report.answers.filter((a) => !isOk(a));
}

/** The slowest webhook answers and reads over `limitMs`, with the phase they fell in. */
export function slowWaits(report: RollingUpgradeReport, limitMs: number): string[] {
  const phaseAt = (t: number) => report.phases.find((p) => t >= p.start && t < p.end)?.name ?? "outside";
  return [
    ...report.answers
      .filter((a) => a.ms > limitMs)
      .map((a) => `webhook ${a.eventId} ${Math.round(a.ms)} ms (${phaseAt(a.startedAt)})`),
    ...report.reads
      .filter((r) => r.ms > limitMs || r.error)
      .map((r) => `read ${Math.round(r.ms)} ms${r.error ? ` ${r.error}` : ""} (${phaseAt(r.at)})`),
  ];
}
