// Feed readers on a streaming standby (docs/scaling.md, "Read replicas"; DESIGN.md "Readers on a streaming
// standby"). Run: pnpm bench:standby [--rate 500] [--seconds 20] [--idle-seconds 60] [--out FILE]
// A primary and a hot standby of their own (testkit/standby-cluster.ts), the CLI receiver and worker writing
// to the primary, signed order webhooks at --rate events/s. Two feed readers of the same run, side by side:
// - on the primary, LISTEN loops_sync_changes then read_changes (the baseline, as docs/feed.md shows it);
// - on the standby, followChanges (which watches the standby's replay there: LISTEN is refused);
// each timed from the webhook's 2xx to holding the order's version. Beside them, the standby's replay lag
// (pg_stat_replication.replay_lag, sampled every 200 ms) and, per change, the standby reader's delay behind the
// primary's reader. Then the services stop and the standby follower's queries are counted for --idle-seconds.
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { connect, migrate } from "@loops-sync/db";
import { startSandbox } from "@loops-sync/sandbox";
import { followChanges } from "@loops-sync/schema";
import postgres from "postgres";
import { startStandbyCluster } from "#testkit/standby-cluster";
import { describeMachine, formatLoad } from "./machine.ts";
import { percentile } from "./percentile.ts";
import { sendOrderTraffic } from "./send-order-traffic.ts";
import {
  type RunningService,
  serviceEnv,
  startReceiverProcess,
  startWorkerProcess,
} from "./service-processes.ts";
import { VersionWaits } from "./version-waits.ts";
import { watchFeedVersions } from "./watch-feed-versions.ts";
import { createWebhookSigner } from "./webhook-signer.ts";

const { values } = parseArgs({
  options: {
    rate: { type: "string", default: "500" },
    seconds: { type: "string", default: "20" },
    "idle-seconds": { type: "string", default: "60" },
    out: { type: "string" },
  },
});
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const IDLE_SECONDS = Number(values["idle-seconds"]);
if (!(RATE > 0 && SECONDS > 0 && IDLE_SECONDS > 0))
  throw new Error("--rate, --seconds and --idle-seconds must be > 0");

const figures = (xs: number[]) => ({
  n: xs.length,
  p50: Math.round(percentile(xs, 50)),
  p99: Math.round(percentile(xs, 99)),
  max: Math.round(percentile(xs, 100)),
});

const machine = await describeMachine();
const cluster = await startStandbyCluster({
  prepare: async (url) => {
    const sql = connect(url, { max: 2 });
    await migrate(sql, url).finally(() => sql.end());
  },
});
const primary = connect(cluster.primary.url("loops"), { max: 4, applicationName: "bench-primary" });
// The follower's queries, as it sends them: its state polls and its reads of the feed.
const sent = { polls: 0, reads: 0 };
const follower = postgres(cluster.standby.url("loops"), {
  max: 2,
  debug: (_connection, query) => {
    if (query.includes("replay_timestamp")) sent.polls++;
    else sent.reads++;
  },
});
const sandbox = await startSandbox({ port: 0, faults: { apiSlowRate: 1, apiSlowMs: 20 } });
const signer = createWebhookSigner();
const env = serviceEnv({ databaseUrl: cluster.primary.url("loops"), sandbox });
const stop = new AbortController();
let receiver: RunningService | undefined;
let worker: RunningService | undefined;
try {
  receiver = await startReceiverProcess(env, signer.secret);
  worker = await startWorkerProcess(env, { concurrency: 8, poolSize: 10 });
  const onPrimary = new VersionWaits();
  const onStandby = new VersionWaits();
  const primaryAt = new Map<string, number>();
  const behindPrimary: number[] = [];
  let measuring = false;
  const feed = await watchFeedVersions(primary, (id, version, at) => {
    onPrimary.onVersion(id, version, at);
    if (measuring) primaryAt.set(`${id}:${version}`, at);
  });
  const following = (async () => {
    for await (const c of followChanges(follower, { after: 0, signal: stop.signal })) {
      if (c.resource !== "order" || c.version === null) continue;
      const at = performance.now();
      onStandby.onVersion(c.resource_id, c.version, at);
      const seen = primaryAt.get(`${c.resource_id}:${c.version}`);
      if (seen !== undefined) behindPrimary.push(at - seen);
    }
  })();
  const replayLag: number[] = [];
  const sampler = setInterval(() => {
    if (!measuring) return;
    primary<{ ms: number | null }[]>`
      select (extract(epoch from replay_lag) * 1000)::float8 as ms from pg_stat_replication`
      .then(([row]) => replayLag.push(row?.ms ?? 0))
      .catch(() => {});
  }, 200);
  const traffic = {
    sandbox,
    signer,
    receiverUrl: receiver.url!,
    rate: RATE,
    onAck: (e: Parameters<VersionWaits["onAck"]>[0]) => {
      if (!measuring) return;
      onPrimary.onAck(e);
      onStandby.onAck(e);
    },
  };
  // Warm-up (token, pools, the worker's catch-up at start), not counted.
  await sendOrderTraffic({ ...traffic, seconds: 2 });
  await worker.process.waitForLine((l) => l.msg === "catch-up run finished", 30_000);
  measuring = true;
  const traffic500 = await sendOrderTraffic({ ...traffic, seconds: SECONDS });
  const deadline = performance.now() + 20_000;
  while ((onPrimary.waitingOrders > 0 || onStandby.waitingOrders > 0) && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  measuring = false;
  clearInterval(sampler);
  const unseen = { primary: onPrimary.close(), standby: onStandby.close() };
  const busy = { ...sent };

  // Idle: nothing writes to the primary; the standby follower keeps watching.
  await receiver.process.stop();
  await worker.process.stop();
  await feed.close();
  await new Promise((r) => setTimeout(r, 5000));
  const idleBefore = { ...sent };
  await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
  const perMinute = (n: number) => Math.round((n / IDLE_SECONDS) * 60);
  const idle = {
    pollsPerMinute: perMinute(sent.polls - idleBefore.polls),
    readsPerMinute: perMinute(sent.reads - idleBefore.reads),
  };
  stop.abort();
  await following;

  const result = {
    bench: "standby",
    machine,
    rate: RATE,
    seconds: SECONDS,
    acked: traffic500.acked,
    failed: traffic500.failed,
    /** ms from each webhook's 2xx to the reader holding the order's version. */
    primaryListenReader: { ...figures(onPrimary.freshness), unseen: unseen.primary },
    standbyFollower: { ...figures(onStandby.freshness), unseen: unseen.standby },
    /** ms the standby's follower held a version after the primary's LISTEN reader did. */
    standbyBehindPrimaryReader: figures(behindPrimary),
    /** pg_stat_replication.replay_lag on the primary, ms, sampled every 200 ms while measuring. */
    replayLag: figures(replayLag),
    /** The standby follower's state polls and feed reads from its start to the end of the measured window. */
    followerQueriesBusy: busy,
    idleSeconds: IDLE_SECONDS,
    /** With the primary idle (receiver and worker stopped), per minute. */
    idleFollower: idle,
  };
  console.log(
    `standby bench, ${RATE} order events/s for ${SECONDS} s (load ${formatLoad(machine)}; ${traffic500.acked} acknowledged)\n` +
      `  primary, LISTEN reader:  p50 ${result.primaryListenReader.p50} ms, p99 ${result.primaryListenReader.p99} ms (unseen ${unseen.primary})\n` +
      `  standby, followChanges:  p50 ${result.standbyFollower.p50} ms, p99 ${result.standbyFollower.p99} ms (unseen ${unseen.standby})\n` +
      `  standby behind primary reader: p50 ${result.standbyBehindPrimaryReader.p50} ms, p99 ${result.standbyBehindPrimaryReader.p99} ms\n` +
      `  replay lag: p50 ${result.replayLag.p50} ms, p99 ${result.replayLag.p99} ms, max ${result.replayLag.max} ms\n` +
      `  idle follower: ${idle.pollsPerMinute} state polls and ${idle.readsPerMinute} feed reads a minute (over ${IDLE_SECONDS} s)`,
  );
  if (values.out) writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
} finally {
  stop.abort();
  await receiver?.process.stop();
  await worker?.process.stop();
  await follower.end({ timeout: 2 });
  await primary.end({ timeout: 2 });
  await sandbox.close();
  await cluster.stop();
}
