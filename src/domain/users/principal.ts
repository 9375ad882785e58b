import type { AuditActor } from '../shared/audit.js';
import type { Scope } from './scopes.js';
import { LOCAL_USER, type UserRole } from './user.types.js';

/**
 * Who a request acts as: a user, and the key it came with (null when auth is off, or for a web session or an OAuth
 * token).
 */
export interface Principal {
  readonly userId: string;
  readonly name: string;
  readonly role: UserRole;
  readonly keyId: string | null;
  /** The web session the request came with (sign-in through the identity provider), if so. */
  readonly sessionId?: string;
  /**
   * For an OAuth access token, the scopes it was granted (scopes.ts); absent for a key or with auth off, which hold
   * every scope the role allows.
   */
  readonly scopes?: ReadonlySet<Scope>;
  /** For an OAuth access token, the grant it came from (what the person revokes). */
  readonly grantId?: string;
}

/** The principal of every request while auth is off. */
export const LOCAL_PRINCIPAL: Principal = Object.freeze({
  userId: LOCAL_USER.id,
  name: LOCAL_USER.name,
  role: 'admin',
  keyId: null,
});

/** Who the audit log says made a change a request asked for. */
export function actorOf(principal: Principal): AuditActor {
  return { id: principal.userId, name: principal.name };
}
