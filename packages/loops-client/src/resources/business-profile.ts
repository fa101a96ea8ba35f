import type { CallOptions, IdempotentCallOptions } from "../call-options.ts";
import {
  type BusinessDocument,
  BusinessDocumentSchema,
  type BusinessProfile,
  BusinessProfileSchema,
} from "../schemas/business-profile.ts";
import {
  BusinessProfileDetailsInput,
  type BusinessProfileDetailsParams,
  buildDocumentForm,
  type DocumentUploadParams,
} from "../validation/business-profile-input.ts";
import { validateInput } from "../validation/validate-input.ts";
import { idempotencyKeyFor } from "./idempotency.ts";
import { ScopedResource } from "./scoped-resource.ts";

/** The merchant's business profile: details, documents, submission for review. */
export class BusinessProfileResource extends ScopedResource {
  /** PUT /merchant/business-profile: replaces every detail field (draft or rejected only). */
  async put(details: BusinessProfileDetailsParams, options: CallOptions = {}): Promise<BusinessProfile> {
    const json = validateInput(BusinessProfileDetailsInput, details);
    return this.send({
      method: "PUT",
      route: "/merchant/business-profile",
      path: "/merchant/business-profile",
      json,
      schema: BusinessProfileSchema,
      signal: options.signal,
    });
  }

  /** POST …/documents as multipart (Idempotency-Key); a type already uploaded is replaced. */
  async uploadDocument(
    params: DocumentUploadParams,
    options: IdempotentCallOptions = {},
  ): Promise<BusinessDocument> {
    const form = await buildDocumentForm(params);
    return this.send({
      method: "POST",
      route: "/merchant/business-profile/documents",
      path: "/merchant/business-profile/documents",
      form,
      idempotencyKey: idempotencyKeyFor(options),
      schema: BusinessDocumentSchema,
      signal: options.signal,
    });
  }

  /** POST …/submit (Idempotency-Key): moves the profile to in_review. */
  async submit(options: IdempotentCallOptions = {}): Promise<BusinessProfile> {
    return this.send({
      method: "POST",
      route: "/merchant/business-profile/submit",
      path: "/merchant/business-profile/submit",
      idempotencyKey: idempotencyKeyFor(options),
      schema: BusinessProfileSchema,
      signal: options.signal,
    });
  }
}
