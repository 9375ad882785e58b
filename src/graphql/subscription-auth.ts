import type { CredentialHeaders } from '../auth/api-key.js';

/**
 * The credentials a graphql-ws client sends in `connection_init`: `{authorization: "Bearer skh_…"}`
 * (or `{"x-api-key": "skh_…"}`), at the top of the payload or under `headers` as some clients
 * nest them; names in any case. Undefined when the payload carries none, so the upgrade request's
 * own headers apply.
 */
export function connectionCredentials(payload: unknown): CredentialHeaders | undefined {
  const credentials: CredentialHeaders = {};
  for (const source of [payload, (payload as { headers?: unknown } | null)?.headers]) {
    if (typeof source !== 'object' || source === null) continue;
    for (const [name, value] of Object.entries(source)) {
      const header = name.toLowerCase();
      if ((header === 'authorization' || header === 'x-api-key') && credentials[header] === undefined) {
        // Anything but a string is kept as it is and refused by the key parser as malformed.
        credentials[header] = value as string;
      }
    }
  }
  return Object.keys(credentials).length > 0 ? credentials : undefined;
}
