import { LoopsError } from "./errors.ts";
import type { Page } from "./schemas/common.ts";

/**
 * Walks cursor pages from `cursor` (or the first page) to the one whose `next_cursor` is null.
 * A cursor that repeats would loop forever, so it is reported instead of followed.
 */
export async function* iterateCursorPages<P extends Page<unknown>>(
  route: string,
  fetchPage: (cursor: string | undefined) => Promise<P>,
  cursor?: string,
): AsyncGenerator<P, void, undefined> {
  const seen = new Set<string>();
  let next = cursor;
  for (;;) {
    const page = await fetchPage(next);
    yield page;
    if (!page.next_cursor) return;
    if (seen.has(page.next_cursor)) {
      throw LoopsError.badResponse("GET", route, "next_cursor", "the same cursor came back twice");
    }
    seen.add(page.next_cursor);
    next = page.next_cursor;
  }
}

/** The items of every page, in order. */
export async function* flattenPages<T>(
  pages: AsyncIterable<{ data: T[] }>,
): AsyncGenerator<T, void, undefined> {
  for await (const page of pages) yield* page.data;
}
