import { hash, randomBytes } from 'node:crypto';
import { API_KEY_PATTERN } from '../../config/config-schema.js';

/**
 * API keys: `skh_` and 32 random bytes in base64url (43 characters: `API_KEY_PATTERN`). The key is
 * shown once; only its SHA-256 is stored, with a short prefix that lets people tell their keys apart.
 */
export { API_KEY_PATTERN };
const PREFIX_LENGTH = 'skh_'.length + 6;

export interface GeneratedApiKey {
  key: string;
  prefix: string;
  hash: string;
}

export function generateApiKey(): GeneratedApiKey {
  return describeApiKey(`skh_${randomBytes(32).toString('base64url')}`);
}

/** What is stored of a key, for one made here or one an operator chose (the bootstrap admin key). */
export function describeApiKey(key: string): GeneratedApiKey {
  return { key, prefix: key.slice(0, PREFIX_LENGTH), hash: hashApiKey(key) };
}

/** Every request's key is hashed: the one-shot `hash` makes no Hash object for it. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** Where a request may carry its key. */
export interface CredentialHeaders {
  authorization?: string | string[];
  'x-api-key'?: string | string[];
  /** The web session's cookie, and its CSRF token on writes (users/web-session.ts). */
  cookie?: string | string[];
  'x-csrf-token'?: string | string[];
}

/**
 * The key a request presents: `Authorization: Bearer <key>`, else `x-api-key: <key>`. Answers
 * undefined when neither header is there, and `malformed` for anything that cannot be a key (a
 * repeated header, another scheme, wrong length or alphabet), so no look-up is made for it.
 */
export function presentedKey(headers: CredentialHeaders): string | 'malformed' | undefined {
  const authorization = headers.authorization;
  const apiKey = headers['x-api-key'];
  let candidate: string;
  if (authorization !== undefined) {
    if (typeof authorization !== 'string') return 'malformed';
    const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(authorization);
    if (match === null) return 'malformed';
    candidate = match[1];
  } else if (apiKey !== undefined) {
    if (typeof apiKey !== 'string') return 'malformed';
    candidate = apiKey.trim();
  } else {
    return undefined;
  }
  return API_KEY_PATTERN.test(candidate) ? candidate : 'malformed';
}
