import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import type { AuditActor } from '../../domain/shared/audit.js';
import type { Page } from '../../domain/shared/page.js';
import type { GroupStore } from '../../domain/users/group-store.js';
import type { Group, GroupMember, GroupSource } from '../../domain/users/group.types.js';
import { writeAudit } from './audit-log.js';
import { isUniqueViolation, runQuery } from './database-errors.js';
import { DATA_SOURCE } from './persistence.tokens.js';

interface GroupRow {
  id: string;
  name: string;
  source: GroupSource;
  created_at: Date;
  member_count: number;
}

const GROUP_COLUMNS =
  'g.id, g.name, g.source, g.created_at, (SELECT count(*)::int FROM group_members m WHERE m.group_id = g.id) AS ' +
  'member_count';

/** Groups and memberships; every change writes its audit entry in the same transaction. */
@Injectable()
export class GroupRepository implements GroupStore {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  create(name: string, source: GroupSource, actor: AuditActor): Promise<Group | null> {
    return runQuery(async () => {
      try {
        return await this.dataSource.transaction(async (manager) => {
          const id = randomUUID();
          await manager.query('INSERT INTO groups (id, name, source) VALUES ($1, $2, $3)', [id, name, source]);
          await writeAudit(manager, {
            actor,
            action: 'group.create',
            target: `group:${id}`,
            details: { name, source },
          });
          return (await findGroup(manager, id))!;
        });
      } catch (error) {
        if (isUniqueViolation(error, 'uq_groups_source_name')) return null;
        throw error;
      }
    });
  }

  findById(id: string): Promise<Group | null> {
    return runQuery(() => findGroup(this.dataSource.manager, id));
  }

  list(limit: number, offset: number): Promise<Page<Group>> {
    return runQuery(async () => {
      const rows = await this.dataSource.query<GroupRow[]>(
        `SELECT ${GROUP_COLUMNS} FROM groups g ORDER BY g.name, g.source LIMIT $1 OFFSET $2`,
        [limit, offset],
      );
      const [{ total }] = await this.dataSource.query<{ total: number }[]>('SELECT count(*)::int AS total FROM groups');
      return { items: rows.map(groupOf), total, limit, offset };
    });
  }

  delete(id: string, actor: AuditActor): Promise<Group | null> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        const group = await findGroup(manager, id);
        if (group === null) return null;
        // Skills shared with it keep their other groups; no view holds its id any more, so none offers them through it.
        await manager.query('DELETE FROM groups WHERE id = $1', [id]);
        await writeAudit(manager, {
          actor,
          action: 'group.delete',
          target: `group:${id}`,
          details: { name: group.name, source: group.source, members: group.memberCount },
        });
        return group;
      }),
    );
  }

  members(groupId: string): Promise<GroupMember[]> {
    return runQuery(async () => {
      const rows = await this.dataSource.query<{ user_id: string; name: string; added_at: Date }[]>(
        `SELECT m.user_id, u.name, m.added_at FROM group_members m JOIN users u ON u.id = m.user_id
          WHERE m.group_id = $1 ORDER BY u.name`,
        [groupId],
      );
      return rows.map((row) => ({ userId: row.user_id, name: row.name, addedAt: row.added_at }));
    });
  }

  addMember(groupId: string, userId: string, actor: AuditActor): Promise<'added' | 'already' | 'no-group' | 'no-user'> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        const [group] = await manager.query<{ name: string }[]>('SELECT name FROM groups WHERE id = $1 FOR SHARE', [
          groupId,
        ]);
        if (group === undefined) return 'no-group' as const;
        const [user] = await manager.query<{ name: string }[]>('SELECT name FROM users WHERE id = $1 FOR SHARE', [
          userId,
        ]);
        if (user === undefined) return 'no-user' as const;
        const added = await manager.query<{ user_id: string }[]>(
          'INSERT INTO group_members (group_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING user_id',
          [groupId, userId],
        );
        if (added.length === 0) return 'already' as const;
        await writeAudit(manager, {
          actor,
          action: 'group.member.add',
          target: `group:${groupId}`,
          details: { group: group.name, userId, user: user.name },
        });
        return 'added' as const;
      }),
    );
  }

  removeMember(groupId: string, userId: string, actor: AuditActor): Promise<boolean> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        const [rows, removed] = await manager.query<[{ group: string; user: string }[], number]>(
          `DELETE FROM group_members m USING groups g, users u
            WHERE m.group_id = $1 AND m.user_id = $2 AND g.id = m.group_id AND u.id = m.user_id
            RETURNING g.name AS group, u.name AS user`,
          [groupId, userId],
        );
        if (removed === 0) return false;
        await writeAudit(manager, {
          actor,
          action: 'group.member.remove',
          target: `group:${groupId}`,
          details: { group: rows[0].group, userId, user: rows[0].user },
        });
        return true;
      }),
    );
  }

  groupsOf(userId: string): Promise<Group[]> {
    return runQuery(async () => {
      const rows = await this.dataSource.query<GroupRow[]>(
        `SELECT ${GROUP_COLUMNS} FROM groups g JOIN group_members gm ON gm.group_id = g.id
          WHERE gm.user_id = $1 ORDER BY g.name, g.source`,
        [userId],
      );
      return rows.map(groupOf);
    });
  }

  /**
   * The user's row is locked first, so two sign-ins of one user at once apply one claim after the other; the groups
   * are made with ON CONFLICT, so two users' sign-ins naming a new group at once make it once.
   */
  setProviderGroups(
    userId: string,
    names: readonly string[],
    actor: AuditActor,
  ): Promise<{ joined: string[]; left: string[] } | null> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        const [user] = await manager.query<{ name: string }[]>('SELECT name FROM users WHERE id = $1 FOR UPDATE', [
          userId,
        ]);
        if (user === undefined) return null;
        for (const name of [...names].sort())
          await manager.query(
            `INSERT INTO groups (id, name, source) VALUES ($1, $2, 'provider')
             ON CONFLICT ON CONSTRAINT uq_groups_source_name DO NOTHING`,
            [randomUUID(), name],
          );
        const [left] = await manager.query<[{ name: string }[], number]>(
          `DELETE FROM group_members m USING groups g
            WHERE m.group_id = g.id AND m.user_id = $1 AND g.source = 'provider' AND NOT (g.name = ANY($2::text[]))
            RETURNING g.name`,
          [userId, names],
        );
        const joined = await manager.query<{ name: string }[]>(
          `INSERT INTO group_members (group_id, user_id)
             SELECT g.id, $1 FROM groups g WHERE g.source = 'provider' AND g.name = ANY($2::text[])
           ON CONFLICT DO NOTHING RETURNING (SELECT name FROM groups WHERE id = group_id) AS name`,
          [userId, names],
        );
        const change = { joined: joined.map((row) => row.name).sort(), left: left.map((row) => row.name).sort() };
        if (change.joined.length > 0 || change.left.length > 0)
          await writeAudit(manager, {
            actor,
            action: 'group.provider-sync',
            target: `user:${user.name}`,
            details: { userId, ...change },
          });
        return change;
      }),
    );
  }
}

async function findGroup(manager: EntityManager, id: string): Promise<Group | null> {
  const [row] = await manager.query<GroupRow[]>(`SELECT ${GROUP_COLUMNS} FROM groups g WHERE g.id = $1`, [id]);
  return row === undefined ? null : groupOf(row);
}

function groupOf(row: GroupRow): Group {
  return { id: row.id, name: row.name, source: row.source, createdAt: row.created_at, memberCount: row.member_count };
}
