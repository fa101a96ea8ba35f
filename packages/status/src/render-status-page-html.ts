import { STATUS_PAGE_SCRIPT } from "./status-page-script.ts";

const STYLE = `
  body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #222; }
  h1 { font-size: 1.3rem; margin: 0 0 .2rem; } h2 { font-size: 1rem; margin: 1.5rem 0 .5rem; }
  #generated { color: #666; } #banner { background: #fdecea; color: #b71c1c; padding: .5rem; margin: .5rem 0; }
  .tiles { display: flex; flex-wrap: wrap; gap: .75rem; margin-top: 1rem; }
  .tile { border: 1px solid #ddd; border-radius: 6px; padding: .5rem .9rem; min-width: 8rem; }
  .tile.bad { border-color: #c62828; background: #fdecea; }
  .tile .label { display: block; color: #666; font-size: .8rem; } .tile .value { font-size: 1.4rem; font-weight: 600; }
  #events-chart { width: 100%; max-width: 900px; height: auto; display: block; }
  .legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 1rem; }
  .swatch { width: .8rem; height: .8rem; margin-right: .3rem; vertical-align: middle; }
  table { border-collapse: collapse; } th, td { text-align: left; padding: .25rem .6rem; border-bottom: 1px solid #eee; }
  tr.revoked td { color: #999; } td[data-field="last-error"] { max-width: 40rem; word-break: break-word; }
`;

export interface StatusPageHtmlOptions {
  /** How often the page polls its JSON endpoint, in milliseconds. */
  refreshMs: number;
  /** Per-response CSP nonce that allows exactly the inline style and script below. */
  nonce: string;
}

/** The operator page: a shell whose inline script fills it from `./api` and keeps it fresh. */
export function renderStatusPageHtml({ refreshMs, nonce }: StatusPageHtmlOptions): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>loops-sync status</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<h1>loops-sync status</h1>
<div id="generated">loading…</div>
<div id="banner" role="alert" hidden></div>
<main id="status" data-refresh-ms="${refreshMs}"></main>
<script nonce="${nonce}">${STATUS_PAGE_SCRIPT}</script>
</body>
</html>`;
}
