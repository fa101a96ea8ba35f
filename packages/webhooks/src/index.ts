export { type BoundedLabel, boundedLabel } from "./bounded-label.ts";
export {
  DEFAULT_MAX_ID_LENGTH,
  DEFAULT_MAX_JSON_DEPTH,
  eventEnvelopeSchema,
  jsonDepthExceeds,
  KNOWN_EVENT_TYPES,
  type ParseEventOptions,
  parseEventEnvelope,
  type WebhookEvent,
} from "./event-envelope.ts";
export {
  computeSignature,
  type SignWebhookOptions,
  signWebhook,
  type WebhookHeaders,
} from "./sign-webhook.ts";
export {
  createWebhookVerifier,
  type VerifiedWebhook,
  type VerifyInput,
  verifyWebhook,
  type WebhookHeaderSource,
  type WebhookVerifier,
  type WebhookVerifierOptions,
} from "./verify-webhook.ts";
export { type UnstorableReason, WebhookError, type WebhookErrorCode } from "./webhook-error.ts";
export { decodeWebhookSecret, decodeWebhookSecrets } from "./webhook-secret.ts";
