import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { AuditAction, AuditRecord } from '../../domain/shared/audit.js';
import type { Page } from '../../domain/shared/page.js';
import type { AuditLogStore, AuditQuery } from '../../domain/users/audit-log-store.js';
import { runQuery } from './database-errors.js';
import { DATA_SOURCE } from './persistence.tokens.js';

interface AuditRow {
  id: string;
  at: Date;
  actor_id: string | null;
  actor_name: string | null;
  action: AuditAction;
  target: string;
  details: Record<string, unknown>;
}

/** The audit log, newest first (ix_audit_log_at, or the action's or target's index when filtered). */
@Injectable()
export class AuditLogRepository implements AuditLogStore {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  list(query: AuditQuery): Promise<Page<AuditRecord>> {
    return runQuery(async () => {
      const where = '($1::text IS NULL OR action = $1) AND ($2::text IS NULL OR target = $2)';
      const filters = [query.action ?? null, query.target ?? null];
      const rows = await this.dataSource.query<AuditRow[]>(
        `SELECT id::text, at, actor_id, actor_name, action, target, details FROM audit_log WHERE ${where}
          ORDER BY at DESC, id DESC LIMIT $3 OFFSET $4`,
        [...filters, query.limit, query.offset],
      );
      const [{ total }] = await this.dataSource.query<{ total: number }[]>(
        `SELECT count(*)::int AS total FROM audit_log WHERE ${where}`,
        filters,
      );
      return {
        items: rows.map((row) => ({
          id: row.id,
          at: row.at,
          actor: { id: row.actor_id, name: row.actor_name },
          action: row.action,
          target: row.target,
          details: row.details,
        })),
        total,
        limit: query.limit,
        offset: query.offset,
      };
    });
  }
}
