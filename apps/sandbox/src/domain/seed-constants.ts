// The seed's constants the sandbox command's flags and help name, apart from the seed's parser (zod), so
// building the command (every \`loops-sync\` start) loads no more than this.

/** The demo webhook signing secret (base64 of "sandbox-webhook-secret-001"). */
export const DEFAULT_WEBHOOK_SECRET = "whsec_c2FuZGJveC13ZWJob29rLXNlY3JldC0wMDE=";

/** Most merchants a generated seed may hold (ids have five digits). */
export const MAX_GENERATED_MERCHANTS = 99_999;
