export {
  createReceiver,
  createReceiverApp,
  type Receiver,
  type ReceiverApp,
  type ReceiverAppOptions,
} from "./create-receiver-app.ts";
export type { StoreOutcome } from "./event-store.ts";
export { problemResponse } from "./problem-response.ts";
export type { ReceiverEnv } from "./receiver-env.ts";
export { ReceiverError, type ReceiverErrorCode } from "./receiver-error.ts";
export { type RunningReceiver, type StartReceiverOptions, startReceiver } from "./start-receiver.ts";
