/**
 * `sync.merchants`: each merchant's sync state (migrations 0001, 0012, 0020). Only the functions of this
 * folder write the table (test/workspace/table-owners.test.ts holds the rest of the tree to it); each is one
 * transition. The statuses:
 *
 * - `active`: synced (caught up, reconciled, its order events fetched).
 * - `unconfirmed`: first named by a webhook, or a revoked merchant's event naming a new connection; nothing
 *   is fetched for it until confirm_merchant's GET /connection answers.
 * - `unknown`: GET /connection refused it (`confirm_error` says why); kept, so it is not asked again.
 * - `revoked`: its connection was revoked; its data is kept and no call is made for it.
 *
 * No row: not heard of yet (`readMerchantState` lets its calls go ahead). `learned_from` says who named it
 * first: config (LOOPS_MERCHANT_IDS), webhook, catchup, cli or gateway (created through it).
 *
 * | from        | to                                            | function                    | who                               |
 * | ----------- | --------------------------------------------- | --------------------------- | --------------------------------- |
 * | (none)      | unconfirmed (webhook), active (catch-up, CLI) | `learnInboxMerchants` (CTE) | the inbox's one statement         |
 * | (none)      | active, learned from config                   | `learnConfiguredMerchants`  | worker start, catch-up, reconcile |
 * | (none), unconfirmed | active (learned from gateway when new) | `learnCreatedMerchant`      | POST /merchants via the gateway   |
 * | unconfirmed | active, naming the connection answered        | `confirmMerchant`           | confirm_merchant: answered        |
 * | unconfirmed | unknown with why (revoked if it was)          | `refuseMerchant`            | confirm_merchant: refused         |
 * | active      | active, naming its active connection          | `recordActiveConnection`    | `upsertConnection`                |
 * | any, (none) | revoked, naming the connection                | `markMerchantRevoked`       | `revokeMerchant`                  |
 * | revoked     | unconfirmed, naming the new connection        | `reopenRevokedMerchant`     | process_events: a reconnect       |
 * | any, (none) | the same (none: active), calls paused         | `pauseMerchant`             | a 429 (worker, catch-up)          |
 * | any         | the same, `locations_listed_at`               | `recordLocationsListing`    | a complete locations listing      |
 * | any         | the same, `reconciled_at`, `reconcile_calls`  | `recordMerchantReconciled`  | reconcile_merchant: a complete run |
 *
 * Reads (`readMerchantState`, the lists of active merchants) stay with their callers.
 */
export type MerchantStatus = "active" | "unconfirmed" | "unknown" | "revoked";
