export {
  createReceiver,
  createReceiverApp,
  type Receiver,
  type ReceiverApp,
  type ReceiverAppOptions,
} from "./create-receiver-app.ts";
export { EventStoreError, type StoreOutcome } from "./event-store.ts";
export { problemResponse } from "./problem-response.ts";
export { type RunningReceiver, type StartReceiverOptions, startReceiver } from "./start-receiver.ts";
export type { ReceiverEnv } from "./webhook-handler.ts";
