import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { ProblemError } from "../problem.ts";

/** Renders a ProblemError as RFC 9457 problem+json; `type` points at `{origin}/docs/errors/<code>`. */
export function problemResponse(c: Context, problem: ProblemError): Response {
  const requestId = (c.get("requestId" as never) as string | undefined) ?? "req_unknown";
  const body: Record<string, unknown> = {
    type: `${new URL(c.req.url).origin}/docs/errors/${problem.code}`,
    title: problem.title(),
    status: problem.status,
    code: problem.code,
    request_id: requestId,
  };
  if (problem.detail) body.detail = problem.detail;
  if (problem.existingId) body.existing_id = problem.existingId;
  if (problem.errors) body.errors = problem.errors;
  return new Response(JSON.stringify(body), {
    status: problem.status,
    headers: { "content-type": "application/problem+json", "x-request-id": requestId, ...problem.headers },
  });
}

/** Every error of the app ends here: ours keep their status and code, anything else is a 500. */
export const onProblem: ErrorHandler = (error, c) => {
  if (error instanceof ProblemError) return problemResponse(c, error);
  if (error instanceof HTTPException) {
    const code =
      error.status === 413
        ? "invalid_request"
        : error.status >= 500
          ? "upstream_unavailable"
          : "invalid_request";
    return problemResponse(c, new ProblemError(error.status, code, { detail: error.message }));
  }
  return problemResponse(
    c,
    new ProblemError(500, "upstream_unavailable", {
      detail: "the sandbox hit an internal error; this is a sandbox bug",
    }),
  );
};

export const onNotFound: NotFoundHandler = (c) =>
  problemResponse(
    c,
    new ProblemError(404, "not_found", {
      detail: `no route for ${c.req.method} ${new URL(c.req.url).pathname}`,
    }),
  );
