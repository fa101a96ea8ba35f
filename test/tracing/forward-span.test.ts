// A forwarded delivery, traced: each POST of a change to the partner's endpoint is an HTTP client span
// `POST {forward_url}` naming the change's position and how it ended, without the body, the signature,
// the secret or the URL's query.

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startTracing } from "@loops-sync/tracing";
import { decodeWebhookSecret } from "@loops-sync/webhooks";
import { sendChange } from "@loops-sync/worker";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type OtlpCollector, startOtlpCollector } from "#testkit/otlp-collector";

const SECRET = `whsec_${Buffer.from("forwarding secret of 32 bytes...").toString("base64")}`;
let collector: OtlpCollector;
beforeEach(async () => {
  collector = await startOtlpCollector();
});
afterEach(async () => {
  await collector.close();
});

describe("forwarded deliveries", () => {
  it("are client spans with the change's position and the endpoint's answer", async () => {
    const statuses = [503, 200];
    const endpoint = createServer((request, response) => {
      request.resume();
      request.on("end", () => response.writeHead(statuses.shift() ?? 500).end("busy"));
    });
    await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/changes?token=partner-query-secret`;
    const tracing = await startTracing({
      endpoint: collector.url,
      protocol: "http/protobuf",
      serviceName: "forwarder",
      serviceVersion: "0.1.0",
    });
    const options = {
      url,
      keys: [decodeWebhookSecret(SECRET)],
      timeoutMs: 5000,
      userAgent: "loops-sync-test",
    };
    try {
      expect(await sendChange(41, '{"position":41,"secret_field":"body-only"}', options)).toMatchObject({
        ok: false,
      });
      expect(await sendChange(42, '{"position":42}', options)).toEqual({ ok: true });
    } finally {
      await tracing.shutdown();
      await new Promise((resolve) => endpoint.close(resolve));
    }
    const spans = collector.spans.filter((s) => s.name === "POST {forward_url}");
    expect(spans.map((s) => s.attributes["loops.change.position"]).sort()).toEqual([41, 42]);
    const [failed, sent] = [41, 42].map(
      (p) => spans.find((s) => s.attributes["loops.change.position"] === p)!,
    );
    expect(failed).toMatchObject({ kind: 3, statusCode: 2 });
    expect(failed!.attributes).toMatchObject({ "http.response.status_code": 503, "error.type": "503" });
    expect(sent!.statusCode).toBe(0);
    expect(sent!.attributes["url.full"]).toBe(url.replace(/\?.*$/, ""));
    const exported = Buffer.concat(collector.bodies).toString("latin1");
    for (const secret of [SECRET.slice(6), "partner-query-secret", "body-only", "v1,"]) {
      expect(exported).not.toContain(secret);
    }
  });
});
