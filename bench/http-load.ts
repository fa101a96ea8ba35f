// A closed-loop HTTP/1.1 load generator on raw keep-alive sockets: every request is serialized to bytes
// before the run, so the timed loop only writes a buffer and reads a status line per answer. autocannon
// rebuilds each request in JavaScript (setupRequest), which on this 2-core machine made the generator, not
// the server, the limit of the fastest server measured (docs/decisions.md, "Benchmarks").
import { connect, type Socket } from "node:net";

export interface HttpLoadResult {
  /** Seconds the load ran. */
  duration: number;
  /** Answers by class. */
  ok: number;
  notOk: number;
  /** Connection errors. */
  errors: number;
  /** Latency per answer, in ms. */
  latencies: Float64Array;
  count: number;
}

export interface HttpLoadOptions {
  url: string;
  /** Ready-made requests (method, path, headers, body), sent in order, one per request. */
  next: () => Buffer;
  connections: number;
  seconds: number;
}

/** `POST path` with `headers` and `body` as HTTP/1.1 bytes (keep-alive, Content-Length). */
export function serializeRequest(host: string, path: string, headers: Record<string, string>, body: string) {
  const payload = Buffer.from(body);
  let head = `POST ${path} HTTP/1.1\r\nhost: ${host}\r\ncontent-length: ${payload.length}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`), payload]);
}

const HEADER_END = Buffer.from("\r\n\r\n");
const LENGTH = /\r\ncontent-length: *(\d+)/i;

/** Runs `connections` sockets, each sending its next request as soon as the previous answer is complete. */
export async function runHttpLoad({
  url,
  next,
  connections,
  seconds,
}: HttpLoadOptions): Promise<HttpLoadResult> {
  const { hostname, port } = new URL(url);
  const result: HttpLoadResult = {
    duration: 0,
    ok: 0,
    notOk: 0,
    errors: 0,
    latencies: new Float64Array(1 << 16),
    count: 0,
  };
  const started = performance.now();
  const endAt = started + seconds * 1000;
  const record = (status: number, sentAt: number) => {
    if (status >= 200 && status < 300) result.ok++;
    else result.notOk++;
    if (result.count === result.latencies.length) {
      const grown = new Float64Array(result.latencies.length * 2);
      grown.set(result.latencies);
      result.latencies = grown;
    }
    result.latencies[result.count++] = performance.now() - sentAt;
  };

  const runSocket = () =>
    new Promise<void>((resolve) => {
      const socket: Socket = connect(Number(port), hostname);
      socket.setNoDelay(true);
      let pending: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      const send = () => {
        if (performance.now() >= endAt) {
          socket.end();
          return;
        }
        sentAt = performance.now();
        socket.write(next());
      };
      socket.on("connect", send);
      socket.on("data", (chunk: Buffer) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
        // One request in flight per socket: at most one answer to find.
        const end = pending.indexOf(HEADER_END);
        if (end < 0) return;
        const head = pending.toString("latin1", 0, end);
        const length = Number(LENGTH.exec(head)?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        pending = pending.subarray(end + 4 + length);
        record(Number(head.slice(9, 12)), sentAt);
        send();
      });
      socket.on("error", () => {
        result.errors++;
      });
      socket.on("close", () => resolve());
    });

  await Promise.all(Array.from({ length: connections }, runSocket));
  result.duration = (performance.now() - started) / 1000;
  return result;
}
