import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { Duplex } from "node:stream";

const ANSWERS: Record<
  string,
  { status: number; reason: string; code: string; title: string; detail: string }
> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: "Request Header Fields Too Large",
    code: "headers_too_large",
    title: "Request header fields too large",
    detail: "the request's headers exceed the server's limit",
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    reason: "Request Timeout",
    code: "request_timeout",
    title: "Request timeout",
    detail: "the request was not received in time",
  },
};
const MALFORMED = {
  status: 400,
  reason: "Bad Request",
  code: "malformed_request",
  title: "Bad request",
  detail: "the request is not valid HTTP/1.1",
};

/** How long the rest of a refused request is read (and dropped) so the client gets the answer, not a reset. */
const LINGER_MS = 2000;

/**
 * Answers requests Node's HTTP parser refuses before the app sees them (headers too large, malformed HTTP,
 * a request that never finished) with the same problem+json the app sends, where the protocol still allows
 * an answer: nothing of another response has been written on the socket. The connection is then closed
 * after the client has had the chance to read the answer.
 */
export function answerClientErrors(server: Server): void {
  const answered = new WeakSet<Duplex>();
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The parser reports its error again for each later chunk: answer once.
    if (answered.has(socket)) return;
    answered.add(socket);
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const answer = ANSWERS[error.code ?? ""] ?? MALFORMED;
    const body = JSON.stringify({
      type: `urn:loops-sync:problem:${answer.code}`,
      title: answer.title,
      status: answer.status,
      code: answer.code,
      detail: answer.detail,
      request_id: `req_${randomUUID()}`,
    });
    socket.end(
      `HTTP/1.1 ${answer.status} ${answer.reason}\r\n` +
        "content-type: application/problem+json\r\n" +
        `content-length: ${Buffer.byteLength(body)}\r\n` +
        "connection: close\r\n\r\n" +
        body,
    );
    // Closing with unread bytes makes the kernel send a reset, which can overtake the answer: drain first.
    socket.removeAllListeners("data");
    socket.on("data", () => {});
    socket.resume();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
}
