import { createConnection, createServer, type Socket } from "node:net";

/** A claim whose answer was dropped: the columns of the row Postgres returned (text format). */
export type DroppedClaim = Record<string, string | null>;

export interface LostAnswerProxy {
  /** The port clients connect to. */
  port: number;
  /** Claims whose answer was dropped so far, in order. */
  readonly dropped: readonly DroppedClaim[];
  /** Drops the answers of the next `n` claims that `which` accepts. */
  arm(n: number, which?: (row: DroppedClaim) => boolean): void;
  close(): Promise<void>;
}

/** A Postgres wire message: its type byte and body (without the length). */
interface Message {
  type: number;
  body: Buffer;
  raw: Buffer;
}

/** Splits complete messages off the front of `buffer`; `untyped` for the startup message (no type byte). */
function takeMessages(buffer: Buffer, untyped: boolean): { messages: Message[]; rest: Buffer } {
  const messages: Message[] = [];
  let at = 0;
  let first = untyped;
  for (;;) {
    const head = first ? 4 : 5;
    if (buffer.length - at < head) break;
    const length = buffer.readInt32BE(at + head - 4);
    const end = at + head - 4 + length;
    if (buffer.length < end) break;
    messages.push({
      type: first ? 0 : buffer[at]!,
      body: buffer.subarray(at + head, end),
      raw: buffer.subarray(at, end),
    });
    at = end;
    first = false;
  }
  return { messages, rest: buffer.subarray(at) };
}

const cstring = (body: Buffer, from: number): [string, number] => {
  const end = body.indexOf(0, from);
  return [body.toString("utf8", from, end), end + 1];
};

/** A RowDescription's column names. */
function columnNames(body: Buffer): string[] {
  const names: string[] = [];
  let at = 2;
  for (let i = 0; i < body.readInt16BE(0); i++) {
    const [name, next] = cstring(body, at);
    names.push(name);
    at = next + 18;
  }
  return names;
}

/** A DataRow's values (text format) by column name. */
function rowOf(body: Buffer, names: string[]): DroppedClaim {
  const row: DroppedClaim = {};
  let at = 2;
  for (let i = 0; i < body.readInt16BE(0); i++) {
    const length = body.readInt32BE(at);
    at += 4;
    row[names[i] ?? String(i)] = length < 0 ? null : body.toString("utf8", at, at + length);
    at += Math.max(length, 0);
  }
  return row;
}

const BIND = "B".charCodeAt(0);
const ROW_DESCRIPTION = "T".charCodeAt(0);
const DATA_ROW = "D".charCodeAt(0);
const READY_FOR_QUERY = "Z".charCodeAt(0);

/**
 * A loopback proxy to Postgres that makes graphile-worker's claim of a job (its prepared statement
 * `get_job…`) commit and then never answer: it holds Postgres's answer until ReadyForQuery (the claim's
 * transaction has committed), and when a job was claimed it drops the answer and cuts both connections.
 * The client sees a connection lost mid-query; the job stays locked by its pool id.
 */
export async function startLostAnswerProxy(target: { host: string; port: number }): Promise<LostAnswerProxy> {
  const sockets = new Set<Socket>();
  const dropped: DroppedClaim[] = [];
  let armed = 0;
  let accept: (row: DroppedClaim) => boolean = () => true;

  const server = createServer((client) => {
    const upstream = createConnection(target);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.once("close", () => sockets.delete(s));
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    let fromClient = Buffer.alloc(0);
    let startup = true;
    let fromServer = Buffer.alloc(0);
    /** A claim was sent: its answer is held until ReadyForQuery. */
    let claiming = false;
    let held: Buffer[] = [];
    let names: string[] = [];
    let claimed: DroppedClaim | undefined;

    client.on("data", (chunk: Buffer) => {
      upstream.write(chunk);
      const { messages, rest } = takeMessages(Buffer.concat([fromClient, chunk]), startup);
      fromClient = Buffer.from(rest);
      if (messages.length > 0) startup = false;
      for (const m of messages) {
        if (m.type !== BIND) continue;
        const [, afterPortal] = cstring(m.body, 0);
        const [statement] = cstring(m.body, afterPortal);
        if (statement.startsWith("get_job")) claiming = true;
      }
    });
    upstream.on("data", (chunk: Buffer) => {
      const { messages, rest } = takeMessages(Buffer.concat([fromServer, chunk]), false);
      fromServer = Buffer.from(rest);
      for (const m of messages) {
        if (!claiming) {
          client.write(m.raw);
          continue;
        }
        held.push(Buffer.from(m.raw));
        if (m.type === ROW_DESCRIPTION) names = columnNames(m.body);
        if (m.type === DATA_ROW) claimed = rowOf(m.body, names);
        if (m.type !== READY_FOR_QUERY) continue;
        // The claim's transaction has committed.
        const row = claimed;
        const answer = held;
        claiming = false;
        held = [];
        claimed = undefined;
        if (row && armed > 0 && accept(row)) {
          armed -= 1;
          dropped.push(row);
          cut();
          return;
        }
        for (const piece of answer) client.write(piece);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return {
    port: (server.address() as { port: number }).port,
    dropped,
    arm(n, which = () => true) {
      armed = n;
      accept = which;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}
