export {
  eventEnvelopeSchema,
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
export { decodeWebhookSecret, decodeWebhookSecrets, WebhookSecretError } from "./webhook-secret.ts";
export { WebhookVerificationError, type WebhookVerificationErrorCode } from "./webhook-verification-error.ts";
