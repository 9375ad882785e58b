import type { User } from '../users/user.types.js';

/** A sign-in under way, between the redirect to the provider and its answer; single use. */
export interface SignInAttempt {
  stateHash: string;
  /** SHA-256 of the sign-in cookie of the browser that started it. */
  browserHash: string;
  codeVerifier: string;
  nonce: string;
  returnTo: string;
  expiresAt: Date;
}

/**
 * The storage of sign-ins (web sessions: users/web-session-store.ts). Every look-up answers `null` for "none"; the
 * services decide what that means.
 */
export interface SignInStore {
  saveAttempt(attempt: SignInAttempt): Promise<void>;
  /** The attempt, deleted in the same statement: a second answer with the same state finds nothing. */
  takeAttempt(stateHash: string): Promise<SignInAttempt | null>;
  findLinkedUser(issuer: string, subject: string): Promise<User | null>;
  /** The user whose email this is, ignoring case. */
  findUserByEmail(email: string): Promise<User | null>;
  /** False when that subject of that issuer is linked already (to anyone). */
  link(issuer: string, subject: string, userId: string): Promise<boolean>;
  /** A new member; null when the name or the email is taken. */
  createMember(name: string, email: string | null): Promise<User | null>;
  /**
   * An admin's mapping: sets the user's email (null clears it) and/or links a subject. `taken` when the email or
   * the subject belongs to another user; null when there is no such user.
   */
  mapUser(
    userId: string,
    changes: { email?: string | null; issuer: string; subject?: string },
  ): Promise<{ email: string | null } | 'taken' | null>;
}

export const SIGN_IN_STORE = Symbol('SIGN_IN_STORE');
