import type { INestApplication } from '@nestjs/common';
import { UsersService } from '../../src/domain/users/users.service.js';

/** Users made the way the service makes them, one API key each: `{ root: 'admin', ann: 'member' }` → keys by name. */
export async function keysFor(
  app: INestApplication,
  users: Record<string, 'admin' | 'member'>,
): Promise<Record<string, string>> {
  const service = app.get(UsersService);
  const keys: Record<string, string> = {};
  for (const [name, role] of Object.entries(users))
    keys[name] = (await service.createKey((await service.createUser(name, role)).id)).key;
  return keys;
}
