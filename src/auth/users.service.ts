import { Injectable } from '@nestjs/common';
import { AppError, ErrorCode } from '../common/app-error.js';
import { isUuid } from '../common/uuid.js';
import { ApiKeyRepository, type ListedApiKey } from '../persistence/api-key.repository.js';
import type { Page } from '../persistence/chat.repository.js';
import type { ApiKeyEntity } from '../persistence/entities/api-key.entity.js';
import { USER_NAME_PATTERN, type UserEntity, type UserRole } from '../persistence/entities/user.entity.js';
import { UserRepository } from '../persistence/user.repository.js';
import { generateApiKey } from './api-key.js';
import { AuthService } from './auth.service.js';

/** A key as created: the only moment the key itself exists outside the client. */
export interface CreatedApiKey {
  apiKey: ApiKeyEntity;
  userName: string;
  key: string;
}

/** Users and their keys, for the REST and GraphQL front doors and the CLI alike. */
@Injectable()
export class UsersService {
  constructor(
    private readonly users: UserRepository,
    private readonly keys: ApiKeyRepository,
    private readonly auth: AuthService,
  ) {}

  async getUser(id: string): Promise<UserEntity> {
    const user = isUuid(id) ? await this.users.findById(id) : null;
    if (user === null) throw userNotFound(id);
    return user;
  }

  async getUserByName(name: string): Promise<UserEntity> {
    const user = await this.users.findByName(name);
    if (user === null) throw new AppError(ErrorCode.USER_NOT_FOUND, `No user is named '${name}'.`, { name });
    return user;
  }

  listUsers(limit = 50, offset = 0): Promise<Page<UserEntity>> {
    return this.users.list(limit, offset);
  }

  async createUser(name: string, role: UserRole): Promise<UserEntity> {
    if (!USER_NAME_PATTERN.test(name)) {
      const problem = `name: '${name}' is not allowed; use 1–64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit`;
      throw new AppError(ErrorCode.VALIDATION_FAILED, `Invalid request: ${problem}`, { problems: [problem] });
    }
    const user = await this.users.create(name, role);
    if (user === null) throw new AppError(ErrorCode.USER_NAME_TAKEN, `A user named '${name}' already exists.`, { name });
    return user;
  }

  async updateUser(id: string, changes: { role?: UserRole | null; disabled?: boolean | null }): Promise<UserEntity> {
    // A JSON null is "not sent", as an omitted field is: neither may be unset.
    const user = isUuid(id) ? await this.users.update(id, { role: changes.role ?? undefined, disabled: changes.disabled ?? undefined }) : null;
    if (user === null) throw userNotFound(id);
    // Keys this instance has cached for the user must not outlive a demotion or a disabling.
    this.auth.forgetUser(user.id);
    return user;
  }

  async createKey(userId: string, options: { label?: string | null; expiresAt?: Date | null } = {}): Promise<CreatedApiKey> {
    const user = await this.getUser(userId);
    if (options.expiresAt && options.expiresAt.getTime() <= Date.now()) {
      const problem = 'expiresAt: must be in the future';
      throw new AppError(ErrorCode.VALIDATION_FAILED, `Invalid request: ${problem}`, { problems: [problem] });
    }
    const generated = generateApiKey();
    const apiKey = await this.keys.create({ userId: user.id, label: options.label ?? null, prefix: generated.prefix, keyHash: generated.hash, expiresAt: options.expiresAt ?? null });
    return { apiKey, userName: user.name, key: generated.key };
  }

  /** Keys of one user, or of everyone when `userId` is undefined. */
  listKeys(userId?: string): Promise<ListedApiKey[]> {
    return this.keys.list(userId);
  }

  /** Revokes a key (only one of `userId`'s, when given); it stops working on this instance at once. */
  async revokeKey(id: string, userId?: string): Promise<ApiKeyEntity> {
    const revoked = isUuid(id) ? await this.keys.revoke(id, userId) : null;
    if (revoked === null) throw new AppError(ErrorCode.API_KEY_NOT_FOUND, `API key '${id}' not found.`, { id });
    this.auth.forgetKey(revoked.keyHash);
    return revoked.key;
  }
}

function userNotFound(id: string): AppError {
  return new AppError(ErrorCode.USER_NOT_FOUND, `User '${id}' not found.`, { id });
}
