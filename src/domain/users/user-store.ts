import type { AuditActor } from '../shared/audit.js';
import type { Page } from '../shared/page.js';
import type { User, UserRole } from './user.types.js';

/**
 * The users' storage as the users' rules use it: every query answers `null` for "no such user"; the service decides
 * what that means.
 */
export interface UserStore {
  /** The new user, or null when the name is taken. */
  create(name: string, role: UserRole): Promise<User | null>;
  findById(id: string): Promise<User | null>;
  findByName(name: string): Promise<User | null>;
  list(limit: number, offset: number): Promise<Page<User>>;
  /**
   * The updated user; null when there is none with that id; `lastAdmin` (nothing changed) when the
   * change would take the server's last working admin key out of use. A change of role is written to the audit log, as
   * `actor`, in the same transaction.
   */
  update(
    id: string,
    changes: { role?: UserRole; disabled?: boolean },
    actor: AuditActor,
  ): Promise<{ user: User } | { lastAdmin: User } | null>;
}

export const USER_STORE = Symbol('USER_STORE');
