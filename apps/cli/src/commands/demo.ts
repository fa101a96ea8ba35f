import { Command, Option } from "commander";
import { parseCount, parseSeconds } from "../flags.ts";
import type { DemoOptions } from "./run-demo.ts";

export function createDemoCommand(): Command {
  return new Command("demo")
    .description(
      "run a local Loops sandbox, the receiver and the worker; create orders for a while and show the mirror",
    )
    .addOption(
      new Option("--duration <seconds>", "stop after this many seconds").argParser(parseSeconds).default(30),
    )
    .addOption(
      new Option("--rate <orders-per-second>", "new orders per second").argParser(parseCount).default(3),
    )
    .addOption(
      new Option("--port <port>", "receiver port (default: PORT, or any free port)").argParser(parseCount),
    )
    .addOption(
      new Option(
        "--forward",
        "also forward every change to a built-in endpoint that prints what it receives (see FORWARD_URL)",
      ),
    )
    .addOption(
      new Option(
        "--gateway",
        "also edit a location through the gateway (GATEWAY_TOKEN) and read it back from replica.locations at once",
      ),
    )
    .action(async (options: DemoOptions) => {
      const { runDemo } = await import("./run-demo.ts");
      await runDemo(options);
    });
}
