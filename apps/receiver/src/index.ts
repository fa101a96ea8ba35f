export {
  createReceiver,
  createReceiverApp,
  type Receiver,
  type ReceiverApp,
  type ReceiverAppOptions,
} from "./create-receiver-app.ts";
export type { StoreOutcome } from "./event-store.ts";
export { MIRRORED_HEADER } from "./gateway/answer-upstream.ts";
export { createGatewayApp, GATEWAY_PREFIX, type GatewayOptions } from "./gateway/create-gateway-app.ts";
export type { GatewayOutcome } from "./gateway/gateway-metrics.ts";
export { GATEWAY_ROUTES, type GatewayRoute, type WriteKind } from "./gateway/gateway-routes.ts";
export type { AcceptedWrite, WriteMirror } from "./gateway/write-mirror.ts";
export { problemResponse } from "./problem-response.ts";
export type { ReceiverEnv } from "./receiver-env.ts";
export { ReceiverError, type ReceiverErrorCode } from "./receiver-error.ts";
export { type RunningReceiver, type StartReceiverOptions, startReceiver } from "./start-receiver.ts";
