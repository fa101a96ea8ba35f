import { randomUUID } from "node:crypto";

export interface ProblemOptions {
  status: number;
  /** Stable machine-readable code; clients and metrics switch on it. */
  code: string;
  title: string;
  detail?: string;
  /** Extra response headers (Retry-After, Allow, Connection). */
  headers?: Record<string, string>;
}

/** An RFC 9457 `application/problem+json` answer in the shape the Loops API itself uses. */
export function problemResponse({ status, code, title, detail, headers = {} }: ProblemOptions): Response {
  const body = {
    type: `urn:loops-sync:problem:${code}`,
    title,
    status,
    code,
    ...(detail === undefined ? {} : { detail }),
    request_id: `req_${randomUUID()}`,
  };
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/problem+json", ...headers },
  });
}
