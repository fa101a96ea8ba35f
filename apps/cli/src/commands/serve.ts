import { Command, Option } from "commander";
import { untilSignal } from "../shutdown.ts";
import type { Part } from "./run-serve.ts";

const DESCRIPTIONS: Record<string, string> = {
  receiver:
    "run the webhook receiver (PORT: POST /webhooks/loops, /healthz, /readyz; ADMIN_PORT: /metrics, /status)",
  worker: "run the worker: apply stored events, refresh resources, catch up from the event log",
  start: "run the receiver and the worker in one process",
};

function createServeCommand(name: "receiver" | "worker" | "start", parts: readonly Part[]): Command {
  return new Command(name)
    .description(DESCRIPTIONS[name]!)
    .addOption(
      new Option("--no-migrate", "do not apply migrations at start (default: LOOPS_SYNC_MIGRATE_ON_START)"),
    )
    .action(async (options: { migrate: boolean }) => {
      // Listen for the signal from the first moment: one that arrives while the process starts (an
      // orchestrator scaling down) ends it cleanly once it has started, not with Node's default exit 143.
      const signalled = untilSignal();
      const { runServe } = await import("./run-serve.ts");
      await runServe(name, parts, options, signalled);
    });
}

export const createReceiverCommand = () => createServeCommand("receiver", ["receiver"]);
export const createWorkerCommand = () => createServeCommand("worker", ["worker"]);
export const createStartCommand = () => createServeCommand("start", ["receiver", "worker"]);
