import type { IncomingMessage } from "node:http";
import { ReceiverError } from "./receiver-error.ts";

export interface ReadBodyOptions {
  /** The Node request when served by @hono/node-server: read directly, skipping the web-stream wrapper. */
  incoming?: IncomingMessage | undefined;
  /** The fetch Request, used in-process (app.request) where there is no Node request. */
  request: Request;
  maxBytes: number;
}

/**
 * Reads the raw body, counting bytes as they stream in and stopping at the first chunk past `maxBytes`,
 * so an oversized (or lying, chunked) body is never held in memory beyond the limit.
 */
export async function readBody({ incoming, request, maxBytes }: ReadBodyOptions): Promise<Buffer> {
  if (incoming) return await readIncoming(incoming, maxBytes);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (!request.body) return Buffer.alloc(0);
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new ReceiverError("payload_too_large", `the body exceeds ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

function readIncoming(incoming: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
      incoming.off("aborted", onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        // Stop reading but keep the socket: the 413 still has to go out (with Connection: close).
        cleanup();
        incoming.pause();
        reject(new ReceiverError("payload_too_large", `the body exceeds ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onAborted = () => onError(new Error("the client aborted the request"));
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onError);
    incoming.on("aborted", onAborted);
  });
}
