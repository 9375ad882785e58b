import type { ApiKey, User } from '../../domain/users/user.types.js';
import type { CreatedApiKey } from '../../domain/users/users.service.js';

/** Response shapes for users and keys: one place for REST, GraphQL and the CLI. Key hashes never leave. */
export function presentUser(user: User) {
  return { id: user.id, name: user.name, role: user.role, disabled: user.disabled, createdAt: user.createdAt };
}

export function presentApiKey(key: ApiKey, userName: string) {
  return {
    id: key.id,
    user: userName,
    label: key.label,
    prefix: key.prefix,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
    revokedAt: key.revokedAt,
    expiresAt: key.expiresAt,
  };
}

/** The one answer that carries the key itself. */
export function presentCreatedApiKey(created: CreatedApiKey) {
  return { ...presentApiKey(created.apiKey, created.userName), key: created.key };
}
