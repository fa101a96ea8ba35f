import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { signWebhook } from "./sign.ts";

export interface PostWebhookOptions {
  url: string;
  secrets: readonly string[];
  messageId: string;
  /** The exact bytes that are signed and sent. */
  body: string;
  /** Real ms to wait for the whole answer. */
  timeoutMs: number;
  agents: WebhookAgents;
}

export interface PostOutcome {
  /** HTTP status, or null when no answer came. */
  status: number | null;
  error: "timeout" | "connection failed" | null;
}

/** Keep-alive connection pools, one pair per dispatcher so closing a sandbox closes its sockets. */
export interface WebhookAgents {
  http: HttpAgent;
  https: HttpsAgent;
  destroy(): void;
}

// node:http with keep-alive rather than fetch: far cheaper per delivery, which matters to benchmarks.
export function createWebhookAgents(maxSockets = 256): WebhookAgents {
  const http = new HttpAgent({ keepAlive: true, maxSockets });
  const https = new HttpsAgent({ keepAlive: true, maxSockets });
  return {
    http,
    https,
    destroy() {
      http.destroy();
      https.destroy();
    },
  };
}

/** One signed delivery attempt. Never throws: a missing answer is an outcome like any other. */
export function postWebhook({
  url,
  secrets,
  messageId,
  body,
  timeoutMs,
  agents,
}: PostWebhookOptions): Promise<PostOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: PostOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      finish({ status: null, error: "connection failed" });
      return;
    }
    const secure = target.protocol === "https:";
    const headers = {
      ...signWebhook(secrets, messageId, body),
      "content-length": String(Buffer.byteLength(body)),
    };
    const req = (secure ? httpsRequest : httpRequest)(
      target,
      { method: "POST", headers, agent: secure ? agents.https : agents.http },
      (res) => {
        // Drain so the keep-alive socket can be reused; the answer counts once fully read.
        res.resume();
        res.on("end", () => finish({ status: res.statusCode ?? null, error: null }));
        res.on("error", () => finish({ status: null, error: "connection failed" }));
      },
    );
    timer = setTimeout(() => {
      finish({ status: null, error: "timeout" });
      req.destroy();
    }, timeoutMs);
    req.on("error", () => finish({ status: null, error: "connection failed" }));
    req.end(body);
  });
}
