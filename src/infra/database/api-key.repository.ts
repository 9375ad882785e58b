import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { toStorableTextOrNull } from '@skillhost/core';
import type { ApiKeyStore } from '../../domain/users/api-key-store.js';
import type { KeyOwner, ListedApiKey, NewApiKey } from '../../domain/users/user.types.js';
import { isUniqueViolation, runQuery } from './database-errors.js';
import { ApiKeyEntity } from './entities/api-key.entity.js';
import type { UserRole } from './entities/user.entity.js';
import { lockEnabledAdmins, takesLastAdminKey, WORKING_ADMIN_KEY } from './last-admin.js';
import { DATA_SOURCE } from './persistence.tokens.js';

export type { KeyOwner, ListedApiKey, NewApiKey };

/**
 * API keys, stored as SHA-256 hashes only. Queries that reach one key take its owner when the caller is not an admin.
 */
@Injectable()
export class ApiKeyRepository implements ApiKeyStore {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  create(key: NewApiKey): Promise<ApiKeyEntity> {
    return runQuery(() => this.insert(key));
  }

  /**
   * The new key, or null when a key with this hash is stored already: for a key chosen outside
   * (the bootstrap admin key), which several instances starting at once may all try to register.
   */
  createIfAbsent(key: NewApiKey): Promise<ApiKeyEntity | null> {
    return runQuery(async () => {
      try {
        return await this.insert(key);
      } catch (error) {
        if (isUniqueViolation(error, 'uq_api_keys_key_hash')) return null;
        throw error;
      }
    });
  }

  private async insert(key: NewApiKey): Promise<ApiKeyEntity> {
    const saved = await this.dataSource.manager.save(
      this.dataSource.manager.create(ApiKeyEntity, {
        id: randomUUID(),
        ...key,
        label: toStorableTextOrNull(key.label),
        lastUsedAt: null,
        revokedAt: null,
      }),
    );
    // The hash never leaves the repository.
    const { keyHash: _, ...visible } = saved;
    return Object.assign(new ApiKeyEntity(), visible);
  }

  findOwnerByHash(keyHash: string): Promise<KeyOwner | null> {
    return runQuery(() => this.ownerWhere(this.dataSource.manager, 'k.key_hash = $1', [keyHash]));
  }

  /** The one key `where` finds, with its owner's state. */
  private async ownerWhere(manager: EntityManager, where: string, parameters: unknown[]): Promise<KeyOwner | null> {
    const rows = await manager.query<
      {
        key_id: string;
        revoked_at: Date | null;
        expires_at: Date | null;
        last_used_at: Date | null;
        user_id: string;
        user_name: string;
        role: UserRole;
        disabled: boolean;
      }[]
    >(
      `SELECT k.id AS key_id, k.revoked_at, k.expires_at, k.last_used_at, u.id AS user_id, u.name AS user_name, ` +
        `u.role, u.disabled
         FROM api_keys k JOIN users u ON u.id = k.user_id WHERE ${where}`,
      parameters,
    );
    const row = rows[0];
    if (row === undefined) return null;
    return {
      keyId: row.key_id,
      revokedAt: row.revoked_at,
      expiresAt: row.expires_at,
      lastUsedAt: row.last_used_at,
      userId: row.user_id,
      userName: row.user_name,
      role: row.role,
      disabled: row.disabled,
    };
  }

  /** Keys of one user, or of every user when `userId` is undefined, oldest first. */
  list(userId?: string): Promise<ListedApiKey[]> {
    return runQuery(async () => {
      const rows = await this.dataSource.query<
        {
          id: string;
          user_id: string;
          user_name: string;
          label: string | null;
          prefix: string;
          created_at: Date;
          last_used_at: Date | null;
          revoked_at: Date | null;
          expires_at: Date | null;
        }[]
      >(
        `SELECT k.id, k.user_id, u.name AS user_name, k.label, k.prefix, k.created_at, k.last_used_at, ` +
          `k.revoked_at, k.expires_at
           FROM api_keys k JOIN users u ON u.id = k.user_id
          WHERE $1::uuid IS NULL OR k.user_id = $1::uuid
          ORDER BY k.created_at, k.id`,
        [userId ?? null],
      );
      return rows.map((r) => ({
        key: Object.assign(new ApiKeyEntity(), {
          id: r.id,
          userId: r.user_id,
          label: r.label,
          prefix: r.prefix,
          createdAt: r.created_at,
          lastUsedAt: r.last_used_at,
          revokedAt: r.revoked_at,
          expiresAt: r.expires_at,
        }),
        userName: r.user_name,
      }));
    });
  }

  /**
   * Revokes a key (of `userId` only, when given) and answers it with its hash, so the caller can
   * drop it from caches; null when there is no such key. Revoking twice keeps the first time. With
   * `keepAnAdmin`, the last working key of an enabled admin is not revoked: `lastAdmin` instead
   * (see last-admin.ts).
   */
  revoke(
    id: string,
    userId: string | undefined,
    keepAnAdmin: boolean,
  ): Promise<{ key: ApiKeyEntity; keyHash: string } | { lastAdmin: KeyOwner } | null> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        if (keepAnAdmin) {
          await lockEnabledAdmins(manager);
          if (await takesLastAdminKey(manager, { key: id })) {
            const owner = await this.ownerWhere(manager, 'k.id = $1 AND ($2::uuid IS NULL OR k.user_id = $2::uuid)', [
              id,
              userId ?? null,
            ]);
            if (owner !== null) return { lastAdmin: owner };
          }
        }
        const rows = await manager.query<
          {
            id: string;
            user_id: string;
            label: string | null;
            prefix: string;
            key_hash: string;
            created_at: Date;
            last_used_at: Date | null;
            revoked_at: Date;
            expires_at: Date | null;
          }[]
        >(
          `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
            WHERE id = $1 AND ($2::uuid IS NULL OR user_id = $2::uuid)
            RETURNING id, user_id, label, prefix, key_hash, created_at, last_used_at, revoked_at, expires_at`,
          [id, userId ?? null],
        );
        // TypeORM answers an UPDATE … RETURNING as [rows, affected].
        const row = (Array.isArray(rows[0]) ? (rows[0] as unknown as typeof rows) : rows)[0];
        if (row === undefined) return null;
        const key = Object.assign(new ApiKeyEntity(), {
          id: row.id,
          userId: row.user_id,
          label: row.label,
          prefix: row.prefix,
          createdAt: row.created_at,
          lastUsedAt: row.last_used_at,
          revokedAt: row.revoked_at,
          expiresAt: row.expires_at,
        });
        return { key, keyHash: row.key_hash };
      }),
    );
  }

  /**
   * Whether some enabled admin has a key that works (not revoked, not expired): whether anyone can administer the
   * server with keys.
   */
  hasUsableAdminKey(): Promise<boolean> {
    return runQuery(async () => {
      const [row] = await this.dataSource.query<{ usable: boolean }[]>(
        `SELECT EXISTS (
           SELECT 1 FROM api_keys k JOIN users u ON u.id = k.user_id
            WHERE ${WORKING_ADMIN_KEY}
         ) AS usable`,
      );
      return row.usable;
    });
  }

  /** Records use, at most once a minute per key whatever the number of instances. */
  touchLastUsed(id: string): Promise<void> {
    return runQuery(async () => {
      await this.dataSource.query(
        `UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < ` +
          `now() - interval '1 minute')`,
        [id],
      );
    });
  }
}
