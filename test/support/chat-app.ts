import type { LoggerService } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../src/app/app.factory.js';
import { configWith } from '../../src/config/config-loader.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { ScriptedModelServer } from './scripted-model-server.js';

export interface ChatTestContext {
  app: NestFastifyApplication;
  model: ScriptedModelServer;
  db: TestDatabase;
  /** Closes the app (keeps the database and model server). */
  closeApp(): Promise<void>;
  /** Starts a new app on the same database and model server. */
  restartApp(): Promise<NestFastifyApplication>;
  close(): Promise<void>;
}

/**
 * The real app on a fresh database, skills from `skillDirectories`, and one model `scripted`
 * (tools on) pointing at a scripted server; `overrides` adjust any configuration key, and `env`
 * is the environment the configuration sees (for `api_key_env`); logs go to `logger` (none by default).
 */
export async function startChatApp(
  skillDirectories: string[],
  overrides: Record<string, unknown> = {},
  models?: (modelUrl: string) => Record<string, Record<string, unknown>>,
  env: Record<string, string> = {},
  logger: LoggerService | false = false,
): Promise<ChatTestContext> {
  const model = await new ScriptedModelServer().start();
  const db = await createTestDatabase();
  const build = () =>
    createApp(
      configWith(
        {
          'app.skills.enabled': true,
          'app.skills.directories': skillDirectories,
          'app.database.url': db.url,
          // A bound, not behaviour under test (the time-out's own tests set theirs): generous, as on a busy
          // machine a worker beside another can wait seconds for the CPU between two model steps.
          'app.models': models?.(model.url) ?? {
            scripted: {
              provider: 'openai-compatible',
              base_url: model.url,
              model: 'scripted-1',
              timeout_ms: 20_000,
              max_retries: 0,
            },
          },
          ...overrides,
        },
        undefined,
        undefined,
        env,
      ),
      { logger },
    );
  const context: ChatTestContext = {
    app: await build(),
    model,
    db,
    async closeApp() {
      await context.app.close();
    },
    async restartApp() {
      context.app = await build();
      return context.app;
    },
    async close() {
      await context.app.close().catch(() => undefined);
      await model.stop();
      await db.drop();
    },
  };
  return context;
}
