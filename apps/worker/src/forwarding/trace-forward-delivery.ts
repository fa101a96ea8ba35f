import { activeTracing, withSpan } from "@loops-sync/tracing";

/** The route of a forwarded delivery's span: the partner's FORWARD_URL, never its query. */
export const FORWARD_ROUTE = "{forward_url}";

/** How a POST ended, as far as its span needs to know (send-change.ts's `SendResult` is one). */
type SendOutcome = { ok: true } | { ok: false; kind: string; error: string };

/**
 * Runs one POST of a change in an HTTP client span `POST {forward_url}` (method, the URL without its
 * query, server, the change's position, and how it ended: the status, or `error.type` timeout / network).
 * Neither the body nor the signature is recorded. Call it only while tracing is on.
 */
export function traceForwardDelivery<R extends SendOutcome>(
  position: number,
  url: string,
  send: () => Promise<R>,
): Promise<R> {
  const target = new URL(url);
  const attributes = {
    "http.request.method": "POST",
    "url.template": FORWARD_ROUTE,
    "url.full": `${target.origin}${target.pathname}`,
    "server.address": target.hostname,
    "server.port": Number(target.port || (target.protocol === "https:" ? 443 : 80)),
    "loops.change.position": position,
  };
  return withSpan(`POST ${FORWARD_ROUTE}`, { kind: "client", attributes }, async (span) => {
    const result = await send();
    if (result.ok) return result;
    const status = /^HTTP (\d{3})/.exec(result.error)?.[1];
    if (status) span?.setAttribute("http.response.status_code", Number(status));
    span?.setAttribute("error.type", status ?? result.kind);
    const error = activeTracing()?.api.SpanStatusCode.ERROR;
    if (error !== undefined) span?.setStatus({ code: error });
    return result;
  });
}
