import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { Page } from '../../domain/shared/page.js';
import type { UserStore } from '../../domain/users/user-store.js';
import type { UserSkillFilters } from '../../domain/skills/store/skill-filter-store.js';
import type { AuditActor } from '../../domain/shared/audit.js';
import { writeAudit } from './audit-log.js';
import { isUniqueViolation, runQuery } from './database-errors.js';
import { UserEntity, type UserRole } from './entities/user.entity.js';
import { lockEnabledAdmins, takesLastAdminKey } from './last-admin.js';
import { DATA_SOURCE } from './persistence.tokens.js';
import type { StoredSkillFilter } from '../../domain/shared/skill-filter.js';

/** Users: every query answers `null` for "no such user"; the service decides what that means. */
@Injectable()
export class UserRepository implements UserStore, UserSkillFilters {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  /** The new user, or null when the name is taken. */
  create(name: string, role: UserRole): Promise<UserEntity | null> {
    return runQuery(async () => {
      try {
        return await this.dataSource.manager.save(
          this.dataSource.manager.create(UserEntity, { id: randomUUID(), name, role, disabled: false }),
        );
      } catch (error) {
        if (isUniqueViolation(error, 'uq_users_name')) return null;
        throw error;
      }
    });
  }

  /** The user's skill filter (`PUT /v1/me/skills`); null for none (or no such user). */
  skillFilter(userId: string): Promise<StoredSkillFilter | null> {
    return runQuery(async () => {
      const [row] = await this.dataSource.query<{ skill_filter: StoredSkillFilter | null }[]>(
        'SELECT skill_filter FROM users WHERE id = $1',
        [userId],
      );
      return row?.skill_filter ?? null;
    });
  }

  /** The ids of the groups the user is in (none for no such user). */
  groupIds(userId: string): Promise<string[]> {
    return runQuery(async () => {
      const rows = await this.dataSource.query<{ group_id: string }[]>(
        'SELECT group_id FROM group_members WHERE user_id = $1',
        [userId],
      );
      return rows.map((row) => row.group_id);
    });
  }

  /** False when there is no such user. */
  setSkillFilter(userId: string, filter: StoredSkillFilter | null): Promise<boolean> {
    return runQuery(async () => {
      const [, affected] = await this.dataSource.query<[unknown, number]>(
        'UPDATE users SET skill_filter = $2::jsonb WHERE id = $1',
        [userId, filter === null ? null : JSON.stringify(filter)],
      );
      return affected > 0;
    });
  }

  findById(id: string): Promise<UserEntity | null> {
    return runQuery(() => this.dataSource.manager.findOneBy(UserEntity, { id }));
  }

  findByName(name: string): Promise<UserEntity | null> {
    return runQuery(() => this.dataSource.manager.findOneBy(UserEntity, { name }));
  }

  list(limit: number, offset: number): Promise<Page<UserEntity>> {
    return runQuery(async () => {
      const [items, total] = await this.dataSource.manager.findAndCount(UserEntity, {
        order: { name: 'ASC' },
        take: limit,
        skip: offset,
      });
      return { items, total, limit, offset };
    });
  }

  /**
   * The updated user; null when there is none with that id; `lastAdmin` (nothing changed) when the
   * change would take the server's last working admin key out of use (see last-admin.ts).
   */
  update(
    id: string,
    changes: { role?: UserRole; disabled?: boolean },
    actor: AuditActor,
  ): Promise<{ user: UserEntity } | { lastAdmin: UserEntity } | null> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        await lockEnabledAdmins(manager);
        const user = await manager.findOne(UserEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
        if (user === null) return null;
        const staysAdmin = (changes.role ?? user.role) === 'admin' && !(changes.disabled ?? user.disabled);
        if (user.role === 'admin' && !user.disabled && !staysAdmin && (await takesLastAdminKey(manager, { user: id })))
          return { lastAdmin: user };
        const before = { role: user.role, disabled: user.disabled };
        if (changes.role !== undefined) user.role = changes.role;
        if (changes.disabled !== undefined) user.disabled = changes.disabled;
        const saved = await manager.save(user);
        if (before.role !== saved.role || before.disabled !== saved.disabled)
          await writeAudit(manager, {
            actor,
            action: 'user.update',
            target: `user:${saved.name}`,
            details: { userId: saved.id, from: before, to: { role: saved.role, disabled: saved.disabled } },
          });
        return { user: saved };
      }),
    );
  }
}
