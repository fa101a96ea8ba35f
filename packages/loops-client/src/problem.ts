import { LoopsError, type LoopsFieldError } from "./errors.ts";
import type { HttpResponse } from "./http.ts";
import { parseRetryAfter } from "./retry-policy.ts";

export interface ReadProblemOptions {
  method: string;
  route: string;
  /** Code used when the body carries none (not problem+json, or an empty 502 from a proxy). */
  fallbackCode?: string;
}

const MAX_PROBLEM_BYTES = 64 * 1024;

/**
 * Turns an error answer into a LoopsError: RFC 9457 problem+json fields, the OAuth
 * `error`/`error_description` pair from a token endpoint, or only the status when the body is neither.
 */
export async function readProblem(response: HttpResponse, options: ReadProblemOptions): Promise<LoopsError> {
  const text = await response.text().catch(() => "");
  let body: Record<string, unknown> = {};
  if (text && text.length <= MAX_PROBLEM_BYTES) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
        body = parsed as Record<string, unknown>;
    } catch {
      // Not JSON (an HTML page from a proxy, say): status and fallback code still say enough.
    }
  }
  const str = (key: string): string | undefined =>
    typeof body[key] === "string" ? (body[key] as string) : undefined;
  const code = str("code") ?? str("error") ?? options.fallbackCode ?? defaultCode(response.status);
  return LoopsError.fromAnswer({
    status: response.status,
    code,
    title: str("title") ?? (response.statusText || `HTTP ${response.status}`),
    detail: str("detail") ?? str("error_description"),
    type: str("type"),
    requestId:
      str("request_id") ??
      response.headers.get("request-id") ??
      response.headers.get("x-request-id") ??
      undefined,
    existingId: str("existing_id"),
    errors: readFieldErrors(body["errors"]),
    retryAfter: parseRetryAfter(response.headers.get("retry-after")),
    method: options.method,
    route: options.route,
  });
}

function readFieldErrors(value: unknown): LoopsFieldError[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) => {
    if (!item || typeof item !== "object") return [];
    const { field, message } = item as Record<string, unknown>;
    return [
      { field: typeof field === "string" ? field : "", message: typeof message === "string" ? message : "" },
    ];
  });
}

function defaultCode(status: number): string {
  switch (status) {
    case 400:
      return "invalid_request";
    case 401:
      return "unauthorized";
    case 404:
      return "not_found";
    case 429:
      return "rate_limited";
    default:
      return status >= 500 ? "upstream_unavailable" : `http_${status}`;
  }
}
