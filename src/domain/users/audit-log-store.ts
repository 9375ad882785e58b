import type { AuditAction, AuditRecord } from '../shared/audit.js';
import type { Page } from '../shared/page.js';

/** What the audit log is searched by: an action, a target (exact), or both. */
export interface AuditQuery {
  action?: AuditAction;
  target?: string;
  limit: number;
  offset: number;
}

/** The audit log as admins read it (entries are written by the changes themselves, in their transactions). */
export interface AuditLogStore {
  /** Newest first. */
  list(query: AuditQuery): Promise<Page<AuditRecord>>;
}

export const AUDIT_LOG_STORE = Symbol('AUDIT_LOG_STORE');
