import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import { ChatActivatedSkillEntity } from './entities/chat-activated-skill.entity.js';
import { ChatMessageEntity } from './entities/chat-message.entity.js';
import { ApiKeyEntity } from './entities/api-key.entity.js';
import { ChatEntity } from './entities/chat.entity.js';
import { UserEntity } from './entities/user.entity.js';

export const ENTITIES = [ChatEntity, ChatMessageEntity, ChatActivatedSkillEntity, UserEntity, ApiKeyEntity];

/** A DataSource for a URL; schema changes only through migrations, never `synchronize`. */
export function createDataSource(url: string, options: { poolSize?: number } = {}): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    poolSize: options.poolSize ?? 20,
    connectTimeoutMS: 5000,
    extra: { connectionTimeoutMillis: 5000 },
  });
}

/** `postgres://user:secret@host:5432/db` → `postgres://user@host:5432/db`, for logs. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString().replace(/:@/, '@');
  } catch {
    return '(unparseable database URL)';
  }
}
