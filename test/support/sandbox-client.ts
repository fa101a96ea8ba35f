import { LoopsClient } from "@loops-sync/loops-client";
import { DEFAULT_SANDBOX_CREDENTIALS, type Sandbox } from "@loops-sync/sandbox";

type ClientOptions = ConstructorParameters<typeof LoopsClient>[0];

/** A LoopsClient of `sandbox` with its default credentials; `options` adds or replaces the rest. */
export function sandboxClient(
  sandbox: Pick<Sandbox, "apiUrl" | "authUrl">,
  options: Partial<ClientOptions> = {},
): LoopsClient {
  return new LoopsClient({
    apiUrl: sandbox.apiUrl,
    authUrl: sandbox.authUrl,
    clientId: DEFAULT_SANDBOX_CREDENTIALS.clientId,
    clientSecret: DEFAULT_SANDBOX_CREDENTIALS.clientSecret,
    ...options,
  });
}
