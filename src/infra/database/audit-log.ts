import type { EntityManager } from 'typeorm';
import type { AuditEntry } from '../../domain/shared/audit.js';

/** Writes one audit entry in the caller's transaction: the entry exists exactly when the change does. */
export async function writeAudit(manager: EntityManager, entry: AuditEntry): Promise<void> {
  await manager.query(
    'INSERT INTO audit_log (actor_id, actor_name, action, target, details) VALUES ($1, $2, $3, $4, $5::jsonb)',
    [entry.actor.id, entry.actor.name, entry.action, entry.target, JSON.stringify(entry.details)],
  );
}
