import type { AuditActor } from '../shared/audit.js';
import { LOCAL_USER, type UserRole } from './user.types.js';

/** Who a request acts as: a user, and the key it came with (null when auth is off). */
export interface Principal {
  readonly userId: string;
  readonly name: string;
  readonly role: UserRole;
  readonly keyId: string | null;
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
