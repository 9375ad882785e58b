import type { ApiKey, KeyOwner, ListedApiKey, NewApiKey } from './user.types.js';

/** The API keys' storage as the users' rules use it: hashes only; `null` for "no such key". */
export interface ApiKeyStore {
  create(key: NewApiKey): Promise<ApiKey>;
  /** The new key, or null when a key with this hash is stored already. */
  createIfAbsent(key: NewApiKey): Promise<ApiKey | null>;
  findOwnerByHash(keyHash: string): Promise<KeyOwner | null>;
  /** Keys of one user, or of every user when `userId` is undefined, oldest first. */
  list(userId?: string): Promise<ListedApiKey[]>;
  /**
   * Revokes a key (of `userId` only, when given) and answers it with its hash, so the caller can
   * drop it from caches; null when there is no such key. With `keepAnAdmin`, the last working key
   * of an enabled admin is not revoked: `lastAdmin` instead.
   */
  revoke(
    id: string,
    userId: string | undefined,
    keepAnAdmin: boolean,
  ): Promise<{ key: ApiKey; keyHash: string } | { lastAdmin: KeyOwner } | null>;
  /** Whether some enabled admin has a key that works (not revoked, not expired). */
  hasUsableAdminKey(): Promise<boolean>;
  /** Records use, at most once a minute per key. */
  touchLastUsed(id: string): Promise<void>;
}

export const API_KEY_STORE = Symbol('API_KEY_STORE');
