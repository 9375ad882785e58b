import type { LoggerService } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../src/app/app.factory.js';
import { configWith } from '../../src/config/config-loader.js';
import { createTestDatabase } from './database.js';

/**
 * The real application (Fastify, filters, guards, pipes, PostgreSQL) for one configuration, on a
 * fresh test database that `app.close()` drops; logs stay quiet unless a logger is given.
 */
export async function createTestApp(
  overrides: Record<string, unknown> = {},
  logger: LoggerService | false = false,
): Promise<NestFastifyApplication> {
  const db = await createTestDatabase();
  const app = await createApp(configWith({ 'app.database.url': db.url, ...overrides }), { logger });
  const close = app.close.bind(app);
  app.close = async () => {
    await close();
    await db.drop();
  };
  return app;
}
