/**
 * Who made a change, as the audit log records it: a user (by id, and by name, kept after the user is gone), or the
 * server itself (`id` and `name` null: the CLI on the server's database, a mirror's import, sign-in).
 */
export interface AuditActor {
  readonly id: string | null;
  readonly name: string | null;
}

/** The server acting on its own account. */
export const SYSTEM_ACTOR: AuditActor = Object.freeze({ id: null, name: null });

/**
 * What the audit log records. `target` names what changed, in one of a few forms a filter can match:
 * `skill:<name>` (shared), `skill:personal:<owner id>/<name>`, `user:<name>`, `group:<id>`.
 */
export type AuditAction =
  | 'skill.install'
  | 'skill.rollback'
  | 'skill.uninstall'
  | 'skill.switch'
  | 'skill.audience'
  | 'skill.eval-case.add'
  | 'skill.eval-case.remove'
  | 'user.update'
  | 'group.create'
  | 'group.delete'
  | 'group.member.add'
  | 'group.member.remove'
  | 'group.provider-sync';

export const AUDIT_ACTIONS: readonly AuditAction[] = [
  'skill.install',
  'skill.rollback',
  'skill.uninstall',
  'skill.switch',
  'skill.audience',
  'skill.eval-case.add',
  'skill.eval-case.remove',
  'user.update',
  'group.create',
  'group.delete',
  'group.member.add',
  'group.member.remove',
  'group.provider-sync',
];

/** One change, as it is written in the same transaction as the change itself. */
export interface AuditEntry {
  actor: AuditActor;
  action: AuditAction;
  target: string;
  details: Record<string, unknown>;
}

/** One change as the log holds it. */
export interface AuditRecord extends AuditEntry {
  id: string;
  at: Date;
}

/** The audit target of a store skill: shared (`ownerId` null) or a user's personal one. */
export function skillTarget(name: string, ownerId: string | null): string {
  return ownerId === null ? `skill:${name}` : `skill:personal:${ownerId}/${name}`;
}
