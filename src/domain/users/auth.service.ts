import { Inject, Injectable, Logger, type OnModuleInit, Optional } from '@nestjs/common';
import { AppError, ErrorCode } from '@skillhost/core';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { API_KEY_STORE, type ApiKeyStore } from './api-key-store.js';
import { type CredentialHeaders, hashApiKey, presentedKey } from './api-key.js';
import { type BearerTokenVerifier, presentedBearerToken } from './bearer-token.js';
import { effectiveAuthMode, isLoopbackHost } from './auth-mode.js';
import { LOCAL_PRINCIPAL, type Principal } from './principal.js';
import type { KeyOwner } from './user.types.js';
import { WebSessionService } from './web-session.service.js';

/**
 * How long a key look-up is trusted. A revocation clears the entry on the instance that made it at
 * once; other instances see it when their entry expires, so this is the most they lag (under 5 s).
 */
export const KEY_CACHE_TTL_MS = 4000;
const KEY_CACHE_MAX_ENTRIES = 10_000;
const LAST_USED_INTERVAL_MS = 60_000;

interface CachedKey {
  owner: KeyOwner | null;
  /** What the owner authenticates as, made once per look-up rather than once per request. */
  principal: Principal | null;
  until: number;
}

/** Turns a request's credentials into a principal: the mode, key look-ups and their brief cache. */
@Injectable()
export class AuthService implements OnModuleInit {
  private readonly logger = new Logger('Auth');
  readonly mode: 'api_key' | 'none';
  private readonly cache = new Map<string, CachedKey>();
  /** OAuth access tokens, when `[app.auth.oauth]` is on (the OAuth module hands its verifier over at start-up). */
  private tokens: BearerTokenVerifier | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(API_KEY_STORE) private readonly keys: ApiKeyStore,
    @Optional() private readonly sessions?: WebSessionService,
  ) {
    this.mode = effectiveAuthMode(config.app.auth.mode, config.app.host);
  }

  onModuleInit(): void {
    const { host, auth } = this.config.app;
    // The start-up summary says which mode is in force; only auth off where others can reach the server is a warning.
    if (this.mode === 'api_key' || isLoopbackHost(host)) {
      this.logger.debug(`Auth mode ${this.mode} (app.auth.mode = ${auth.mode}, listening on ${host})`);
    } else {
      const bar = '!'.repeat(78);
      this.logger.warn(
        `${bar}\nAUTH IS OFF on a non-loopback address (${host}): anyone who can reach this server acts as the ` +
          `admin 'local'.\nSet [app.auth] mode = "api_key" (or SKILLHOST_AUTH_MODE=api_key) unless a proxy in ` +
          `front authenticates.\n${bar}`,
      );
    }
  }

  /** From now on, a bearer credential that is not an API key is checked by `verifier` (an OAuth access token). */
  acceptBearerTokens(verifier: BearerTokenVerifier): void {
    this.tokens = verifier;
  }

  /**
   * The principal for a request, or UNAUTHENTICATED (missing, malformed, unknown, revoked or
   * expired key; disabled user). With auth off, a request without a key acts as `local`; one that
   * carries a key is checked all the same, so a wrong key is never silently ignored.
   */
  async authenticate(headers: CredentialHeaders): Promise<Principal> {
    return this.authenticateNow(headers);
  }

  /**
   * `authenticate` for the request path (`method`: the request's, which decides whether a cookie-authenticated call
   * needs its CSRF token; a caller that cannot say gets the strict answer): the principal itself (or a thrown
   * UNAUTHENTICATED) when the key's look-up is cached, as it is for nearly every request, and a promise only when the
   * database must be asked.
   */
  authenticateNow(headers: CredentialHeaders, method = 'POST'): Principal | Promise<Principal> {
    const key = presentedKey(headers);
    // Without a key, the web session's cookie (users/web-session.service.ts), CSRF-checked unless `method` is a read.
    const session = key === undefined ? this.sessions?.authenticate(headers, method) : undefined;
    if (session !== undefined) return session;
    if (key === undefined && this.mode === 'none') return LOCAL_PRINCIPAL;
    if (key === undefined)
      throw unauthenticated('An API key is required: send `Authorization: Bearer <key>` or `x-api-key: <key>`.');
    if (key === 'malformed') {
      const token = this.tokens === undefined ? undefined : presentedBearerToken(headers);
      if (token !== undefined) return this.tokens!.verify(token);
      throw unauthenticated(
        'The API key is malformed: expected `Authorization: Bearer skh_…` (or `x-api-key: skh_…`).',
      );
    }
    const hash = hashApiKey(key);
    const cached = this.cache.get(hash);
    if (cached !== undefined && cached.until > Date.now()) return this.admit(cached);
    return this.keys.findOwnerByHash(hash).then((owner) => this.admit(this.remember(hash, owner)));
  }

  /** The key's principal, or why it is refused (checked on every request: an expiry falls inside a cache entry). */
  private admit({ owner, principal }: CachedKey): Principal {
    if (owner === null || principal === null) throw unauthenticated('The API key is not valid.');
    if (owner.revokedAt !== null) throw unauthenticated('The API key has been revoked.');
    if (owner.expiresAt !== null && owner.expiresAt.getTime() <= Date.now())
      throw unauthenticated('The API key has expired.');
    if (owner.disabled) throw unauthenticated(`The user '${owner.userName}' is disabled.`);
    this.noteUse(owner);
    return principal;
  }

  /** Drops a key from the cache (it was revoked here): the next request with it is refused at once. */
  forgetKey(keyHash: string): void {
    this.cache.delete(keyHash);
  }

  /** Drops every cached key of a user (its role or disabled flag changed here). */
  forgetUser(userId: string): void {
    for (const [hash, entry] of this.cache) if (entry.owner?.userId === userId) this.cache.delete(hash);
  }

  private remember(hash: string, owner: KeyOwner | null): CachedKey {
    const entry: CachedKey = {
      owner,
      principal:
        owner === null ? null : { userId: owner.userId, name: owner.userName, role: owner.role, keyId: owner.keyId },
      until: Date.now() + KEY_CACHE_TTL_MS,
    };
    this.cache.delete(hash);
    // Unknown keys are cached too, so a flood of made-up keys costs no more queries than real ones;
    // a key cannot be looked up before it is created, so such an entry never hides a new key.
    if (this.cache.size >= KEY_CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(hash, entry);
    return entry;
  }

  /** `last_used_at` is written at most once a minute per key, off the request's path. */
  private noteUse(owner: KeyOwner): void {
    const now = Date.now();
    if (owner.lastUsedAt !== null && now - owner.lastUsedAt.getTime() < LAST_USED_INTERVAL_MS) return;
    owner.lastUsedAt = new Date(now);
    this.keys
      .touchLastUsed(owner.keyId)
      .catch((error: unknown) =>
        this.logger.warn(
          `Could not record the use of key ${owner.keyId}: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
  }
}

export function unauthenticated(message: string): AppError {
  return new AppError(ErrorCode.UNAUTHENTICATED, message);
}
