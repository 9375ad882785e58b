import type { EntityManager } from 'typeorm';

/**
 * Someone can administer the server over the API while an enabled admin holds a key that works.
 * Changes that could end that (a demotion, a disabling, a revoked key) run in one transaction that
 * first locks the enabled admins' rows: two admins demoting each other at once are decided one
 * after the other, and the second sees what the first committed.
 */

/** A key (`k`) that works, of a user (`u`) who is an enabled admin. */
export const WORKING_ADMIN_KEY =
  `u.role = 'admin' AND NOT u.disabled AND k.revoked_at IS NULL AND (k.expires_at IS ` +
  `NULL OR k.expires_at > now())`;

/** Locks the enabled admins' rows, in id order so that two callers never wait on each other crosswise. */
export async function lockEnabledAdmins(manager: EntityManager): Promise<void> {
  await manager.query(`SELECT id FROM users WHERE role = 'admin' AND NOT disabled ORDER BY id FOR UPDATE`);
}

/**
 * Whether taking away one user's admin keys (`user`) or one key (`key`) would leave no working admin
 * key where there was one. Call it after `lockEnabledAdmins`, in the same transaction.
 */
export async function takesLastAdminKey(
  manager: EntityManager,
  taken: { user: string } | { key: string },
): Promise<boolean> {
  const [column, id] = 'user' in taken ? ['u.id', taken.user] : ['k.id', taken.key];
  const [row] = await manager.query<{ taken: boolean; kept: boolean }[]>(
    `SELECT EXISTS (SELECT 1 FROM api_keys k JOIN users u ON u.id = k.user_id WHERE ${WORKING_ADMIN_KEY} AND ` +
      `${column} = $1) AS taken,
            EXISTS (SELECT 1 FROM api_keys k JOIN users u ON u.id = k.user_id WHERE ${WORKING_ADMIN_KEY} AND ` +
      `${column} <> $1) AS kept`,
    [id],
  );
  return row.taken && !row.kept;
}
