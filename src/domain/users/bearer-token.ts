import type { CredentialHeaders } from './api-key.js';
import type { Principal } from './principal.js';

/**
 * A bearer credential that is not an API key: an OAuth access token (src/domain/oauth), when `[app.auth.oauth]` is
 * on. The verifier answers the token's principal, or throws UNAUTHENTICATED; like key look-ups, it answers at once
 * when it has the token cached.
 */
export interface BearerTokenVerifier {
  verify(token: string): Principal | Promise<Principal>;
}

/** RFC 6750 §2.1's b64token, of a sane length: anything else is no token and is never looked up. */
const BEARER_TOKEN = /^Bearer[ ]+([A-Za-z0-9\-._~+/]{16,512}=*)[ ]*$/i;

/** The token of `Authorization: Bearer …`, or undefined when there is none of the right shape. */
export function presentedBearerToken(headers: CredentialHeaders): string | undefined {
  const authorization = headers.authorization;
  if (typeof authorization !== 'string') return undefined;
  return BEARER_TOKEN.exec(authorization)?.[1];
}
