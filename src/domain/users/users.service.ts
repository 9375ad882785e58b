import { Inject, Injectable } from '@nestjs/common';
import { AppError, ErrorCode } from '@skillhost/core';
import { type AuditActor, SYSTEM_ACTOR } from '../shared/audit.js';
import type { Page } from '../shared/page.js';
import { isUuid } from '../shared/uuid.js';
import { validationFailed } from '../shared/validation-errors.js';
import { describeApiKey, generateApiKey } from './api-key.js';
import { API_KEY_STORE, type ApiKeyStore } from './api-key-store.js';
import { AuthService } from './auth.service.js';
import { USER_STORE, type UserStore } from './user-store.js';
import {
  type ApiKey,
  type KeyOwner,
  type ListedApiKey,
  USER_NAME_PATTERN,
  type User,
  type UserRole,
} from './user.types.js';

/** A key as created: the only moment the key itself exists outside the client. */
export interface CreatedApiKey {
  apiKey: ApiKey;
  userName: string;
  key: string;
}

/** The admin the bootstrap admin key (app.auth.bootstrap_admin_key) belongs to, and the key's label. */
export const BOOTSTRAP_ADMIN_NAME = 'admin';
export const BOOTSTRAP_KEY_LABEL = 'bootstrap';

/**
 * What registering the bootstrap admin key found: `registered` now; `stored` before (by an earlier
 * start or by an instance starting beside this one), its owner as it is now; `revoked`, and left
 * so; or not registered because the user `admin` exists but is not an enabled admin.
 */
export type BootstrapKeyOutcome =
  | { kind: 'registered'; keyId: string; userName: string }
  | { kind: 'stored'; owner: KeyOwner }
  | { kind: 'revoked'; owner: KeyOwner }
  | { kind: 'user-not-admin'; user: User };

/** Users and their keys, for the REST and GraphQL front doors and the CLI alike. */
@Injectable()
export class UsersService {
  constructor(
    @Inject(USER_STORE) private readonly users: UserStore,
    @Inject(API_KEY_STORE) private readonly keys: ApiKeyStore,
    private readonly auth: AuthService,
  ) {}

  async getUser(id: string): Promise<User> {
    const user = isUuid(id) ? await this.users.findById(id) : null;
    if (user === null) throw userNotFound(id);
    return user;
  }

  async getUserByName(name: string): Promise<User> {
    const user = await this.users.findByName(name);
    if (user === null) throw new AppError(ErrorCode.USER_NOT_FOUND, `No user is named '${name}'.`, { name });
    return user;
  }

  listUsers(limit = 50, offset = 0): Promise<Page<User>> {
    return this.users.list(limit, offset);
  }

  async createUser(name: string, role: UserRole): Promise<User> {
    if (!USER_NAME_PATTERN.test(name)) {
      throw validationFailed([
        `name: '${name}' is not allowed; use 1–64 lowercase letters, digits, '.', '_' or '-', starting with a ` +
          `letter or digit`,
      ]);
    }
    const user = await this.users.create(name, role);
    if (user === null)
      throw new AppError(ErrorCode.USER_NAME_TAKEN, `A user named '${name}' already exists.`, { name });
    return user;
  }

  /** A change of role or of disabled is written to the audit log as `actor` (the server itself by default: the CLI). */
  async updateUser(
    id: string,
    changes: { role?: UserRole | null; disabled?: boolean | null },
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<User> {
    // A JSON null is "not sent", as an omitted field is: neither may be unset.
    const updated = isUuid(id)
      ? await this.users.update(id, { role: changes.role ?? undefined, disabled: changes.disabled ?? undefined }, actor)
      : null;
    if (updated === null) throw userNotFound(id);
    if ('lastAdmin' in updated)
      throw lastAdmin(
        `'${updated.lastAdmin.name}' holds the last working API key of an enabled admin: ` +
          `${changes.disabled ? 'disabling' : 'demoting'} them`,
        { id: updated.lastAdmin.id, name: updated.lastAdmin.name },
      );
    // Keys this instance has cached for the user must not outlive a demotion or a disabling.
    this.auth.forgetUser(updated.user.id);
    return updated.user;
  }

  async createKey(
    userId: string,
    options: { label?: string | null; expiresAt?: Date | null } = {},
  ): Promise<CreatedApiKey> {
    const user = await this.getUser(userId);
    if (options.expiresAt && options.expiresAt.getTime() <= Date.now()) {
      throw validationFailed(['expiresAt: must be in the future']);
    }
    const generated = generateApiKey();
    const apiKey = await this.keys.create({
      userId: user.id,
      label: options.label ?? null,
      prefix: generated.prefix,
      keyHash: generated.hash,
      expiresAt: options.expiresAt ?? null,
    });
    return { apiKey, userName: user.name, key: generated.key };
  }

  /**
   * Registers a key the operator chose (validated by the configuration) for the admin `admin`,
   * created when there is no user of that name. Idempotent, and safe with several instances
   * starting at once on one database: a name or key another instance inserted first counts as
   * done (the unique constraints decide). A revoked key is never registered again, and an
   * existing `admin` who is a member or disabled is neither promoted nor re-enabled: the
   * environment is not an admin's decision, and promoting that account would hand admin rights
   * to whoever holds its other keys.
   */
  async registerBootstrapKey(key: string): Promise<BootstrapKeyOutcome> {
    const { prefix, hash } = describeApiKey(key);
    const stored = await this.keys.findOwnerByHash(hash);
    if (stored !== null) return { kind: stored.revokedAt === null ? 'stored' : 'revoked', owner: stored };
    const user = await this.bootstrapAdmin();
    if (user.role !== 'admin' || user.disabled) return { kind: 'user-not-admin', user };
    const created = await this.keys.createIfAbsent({
      userId: user.id,
      label: BOOTSTRAP_KEY_LABEL,
      prefix,
      keyHash: hash,
      expiresAt: null,
    });
    // null: another instance stored it since the look-up above, which now finds it (keys are never deleted).
    if (created === null) return this.registerBootstrapKey(key);
    return { kind: 'registered', keyId: created.id, userName: user.name };
  }

  /** Whether some enabled admin has a working key (else, with keys required, nobody can administer the server). */
  hasUsableAdminKey(): Promise<boolean> {
    return this.keys.hasUsableAdminKey();
  }

  /** The user `admin`: found, created as an admin, or found after another instance created it first. */
  private async bootstrapAdmin(): Promise<User> {
    const user =
      (await this.users.findByName(BOOTSTRAP_ADMIN_NAME)) ??
      (await this.users.create(BOOTSTRAP_ADMIN_NAME, 'admin')) ??
      (await this.users.findByName(BOOTSTRAP_ADMIN_NAME));
    // Users are disabled, never deleted: a name once taken stays found.
    if (user === null) throw new Error(`The user '${BOOTSTRAP_ADMIN_NAME}' could be neither created nor found`);
    return user;
  }

  /** Keys of one user, or of everyone when `userId` is undefined. */
  listKeys(userId?: string): Promise<ListedApiKey[]> {
    return this.keys.list(userId);
  }

  /**
   * Revokes a key (only one of `userId`'s, when given); it stops working on this instance at once.
   * The last working key of an enabled admin is LAST_ADMIN, unless `keepAnAdmin` is false: the CLI,
   * whose operator can always make a new admin key, may revoke any key (a leaked one above all).
   */
  async revokeKey(
    id: string,
    userId?: string,
    options: { keepAnAdmin: boolean } = { keepAnAdmin: true },
  ): Promise<ApiKey> {
    const revoked = isUuid(id) ? await this.keys.revoke(id, userId, options.keepAnAdmin) : null;
    if (revoked === null) throw new AppError(ErrorCode.API_KEY_NOT_FOUND, `API key '${id}' not found.`, { id });
    if ('lastAdmin' in revoked) {
      const { keyId, userId: ownerId, userName } = revoked.lastAdmin;
      throw lastAdmin(`This is the last working API key of an enabled admin ('${userName}'): revoking it`, {
        id: keyId,
        userId: ownerId,
        name: userName,
      });
    }
    this.auth.forgetKey(revoked.keyHash);
    return revoked.key;
  }
}

/**
 * A change that would leave nobody able to administer the server over the API; `change` says which
 * change, as the start of a sentence. The CLI on the server's database is the way back in either way.
 */
function lastAdmin(change: string, details: Record<string, unknown>): AppError {
  return new AppError(
    ErrorCode.LAST_ADMIN,
    `${change} would leave no enabled admin with a working API key, and nobody able to administer the server ` +
      `over the API. Make another admin a key first (POST /v1/admin/users/{id}/keys), then try again.`,
    details,
  );
}

function userNotFound(id: string): AppError {
  return new AppError(ErrorCode.USER_NOT_FOUND, `User '${id}' not found.`, { id });
}
