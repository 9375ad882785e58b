import type { User } from './user.types.js';

/** What authenticating one web session needs, in one round trip: the session's times and its user's state. */
export interface SessionOwner {
  sessionId: string;
  expiresAt: Date;
  lastSeenAt: Date;
  userId: string;
  userName: string;
  role: User['role'];
  disabled: boolean;
}

/** The storage of web sessions; tokens arrive here hashed. */
export interface WebSessionStore {
  createSession(session: { tokenHash: string; userId: string; expiresAt: Date }): Promise<void>;
  findSession(tokenHash: string): Promise<SessionOwner | null>;
  touchSession(sessionId: string): Promise<void>;
  deleteSession(tokenHash: string): Promise<void>;
  /** Removes ended sessions and abandoned sign-ins; how many rows went. */
  sweep(idleBefore: Date): Promise<number>;
}

export const WEB_SESSION_STORE = Symbol('WEB_SESSION_STORE');
