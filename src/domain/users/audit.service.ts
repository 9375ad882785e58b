import { Inject, Injectable } from '@nestjs/common';
import type { AuditRecord } from '../shared/audit.js';
import type { Page } from '../shared/page.js';
import { AUDIT_LOG_STORE, type AuditLogStore, type AuditQuery } from './audit-log-store.js';

/**
 * Who installed, rolled back, switched or shared a skill, changed a role or a group's members, and when: written in
 * the same transaction as each change (so an entry exists exactly when its change does), read here by admins.
 */
@Injectable()
export class AuditService {
  constructor(@Inject(AUDIT_LOG_STORE) private readonly log: AuditLogStore) {}

  list(query: Partial<AuditQuery>): Promise<Page<AuditRecord>> {
    return this.log.list({ ...query, limit: query.limit ?? 50, offset: query.offset ?? 0 });
  }
}
