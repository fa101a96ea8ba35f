import type { Context } from "hono";
import { problemResponse } from "../problem-response.ts";
import { readBody } from "../read-body.ts";
import type { ReceiverEnv } from "../receiver-env.ts";
import { ReceiverError } from "../receiver-error.ts";
import type { GatewayRoute } from "./gateway-routes.ts";

const tooLarge = (code: "invalid_request" | "invalid_file", detail: string) =>
  problemResponse({
    status: 413,
    code,
    title: "Payload too large",
    detail: `${detail}; nothing was sent to Loops`,
    headers: { connection: "close" },
  });

/** Past this, an oversized body's rest is not even read: the connection is cut. */
const MAX_DISCARDED_BYTES = 64_000_000;

/**
 * Reads and drops the rest of a refused body, so the client, still sending, gets to read the 413 (cutting
 * the connection under it shows the backend a broken pipe instead). Nothing of it is kept.
 */
async function discardRest(c: Context<ReceiverEnv>): Promise<void> {
  const incoming = c.env?.incoming;
  if (!incoming) {
    await c.req.raw.body?.cancel().catch(() => {});
    return;
  }
  await new Promise<void>((resolve) => {
    let size = 0;
    const stop = () => {
      incoming.off("data", onData);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_DISCARDED_BYTES) {
        incoming.destroy();
        stop();
      }
    };
    incoming.on("data", onData);
    incoming.once("end", stop);
    incoming.once("close", stop);
    incoming.once("error", stop);
    incoming.resume();
  });
}

/**
 * The request's body, held to the route's limit before anything is sent: a Content-Length over it is refused
 * unread, a body that streams past it is cut off, and a document's `file` part over 4 MB is refused after
 * parsing the form (the envelope around it does not count). Nothing of the body is logged.
 */
export async function readWrite(
  c: Context<ReceiverEnv>,
  route: GatewayRoute,
): Promise<{ body: Uint8Array | undefined } | { refused: Response }> {
  const limit = route.maxBodyBytes;
  const declared = Number(c.req.header("content-length"));
  if (Number.isFinite(declared) && declared > limit) {
    await discardRest(c);
    return { refused: tooLarge("invalid_request", `${route.route} takes at most ${limit} bytes`) };
  }
  let body: Buffer;
  try {
    body = await readBody({ incoming: c.env?.incoming, request: c.req.raw, maxBytes: limit });
  } catch (error) {
    if (error instanceof ReceiverError && error.code === "payload_too_large") {
      await discardRest(c);
      return { refused: tooLarge("invalid_request", `${route.route} takes at most ${limit} bytes`) };
    }
    throw error;
  }
  if (route.maxFileBytes !== undefined && body.length > 0) {
    const size = await fileSize(body, c.req.header("content-type"));
    if (size > route.maxFileBytes) {
      return {
        refused: tooLarge("invalid_file", `the file is ${size} bytes; the limit is ${route.maxFileBytes}`),
      };
    }
  }
  return { body: body.length > 0 ? body : undefined };
}

/** The size of a multipart form's `file` part (0 when there is none or the form does not parse: Loops says why). */
async function fileSize(body: Buffer, contentType: string | undefined): Promise<number> {
  if (!contentType?.toLowerCase().startsWith("multipart/form-data")) return 0;
  try {
    const form = await new Response(body, { headers: { "content-type": contentType } }).formData();
    const file = form.get("file");
    return typeof file === "object" && file !== null ? file.size : 0;
  } catch {
    return 0;
  }
}
