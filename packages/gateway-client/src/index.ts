// loops-sync's gateway client for a partner's TypeScript backend: the Loops client's typed writes, sent through
// loops-sync (docs/gateway.md). Packed on its own by scripts/pack-gateway-client.ts.

export type {
  Brand,
  BusinessDocument,
  BusinessProfile,
  Job,
  Location,
  Merchant,
  OpeningHours,
  Order,
} from "@loops-sync/loops-client";
export {
  type BrandCreateParams,
  type BrandUpdateParams,
  type BusinessProfileDetailsParams,
  createGatewayClient,
  type DocumentUploadParams,
  type GatewayClient,
  type GatewayClientOptions,
  type GatewayMerchantClient,
  isLoopsError,
  type LocationCreateParams,
  type LocationUpdateParams,
  LoopsError,
  type LoopsErrorCode,
  type LoopsErrorKind,
  type MenuImportParams,
  type MenuPublishParams,
  type MerchantCreateParams,
  type MerchantUpdateParams,
  type SandboxOrderParams,
} from "@loops-sync/loops-client";
