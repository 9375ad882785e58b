import 'reflect-metadata';
import { type DynamicModule, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AuthService } from '../domain/users/auth.service.js';
import { UsersService } from '../domain/users/users.service.js';
import type { AppConfig } from '../config/app-config.js';
import { ConfigModule } from '../config/config.module.js';
import { EmbeddedPostgresServer } from '../infra/database/embedded-postgres.server.js';
import { PersistenceModule } from '../infra/database/persistence.module.js';
import { SkillStoreService } from '../domain/skills/store/skill-store.service.js';
import { CommandFailure } from './cli-io.js';

/** A command does one thing at a time: two connections leave the rest of the server's pool alone. */
const CLI_POOL_SIZE = 2;

/**
 * The server's own users and keys services and repositories, without the users' routes and
 * guard: those load Swagger and GraphQL, which would double the start-up time of every command.
 */
@Module({})
export class CliModule {
  static forConfig(config: AppConfig): DynamicModule {
    return {
      module: CliModule,
      imports: [ConfigModule.forRoot(config), PersistenceModule],
      providers: [AuthService, UsersService, SkillStoreService],
    };
  }
}

/**
 * Runs `work` with the server's UsersService on the configured database, migrated first. With no
 * database URL it uses the embedded server's data folder: through the PostgreSQL of a Skillhost
 * server already running on it (left running), else through one started for this command and
 * stopped afterwards. Nest logs nothing: stdout is for the command's answer.
 */
export function withUsersService<T>(config: AppConfig, work: (users: UsersService) => Promise<T>): Promise<T> {
  return withServices(config, (services) => work(services.users));
}

/** The same, with the skill store too (`install`, `versions`, `enable`…). */
export async function withServices<T>(
  config: AppConfig,
  work: (services: { users: UsersService; store: SkillStoreService }) => Promise<T>,
): Promise<T> {
  const settings = config.app.database;
  const embedded =
    settings.url === ''
      ? new EmbeddedPostgresServer({
          dataDir: settings.embeddedDir,
          port: settings.embeddedPort,
          ownerName: 'a skillhost command',
        })
      : undefined;
  try {
    const url = embedded === undefined ? settings.url : await failWith(embedded.connectOrStart());
    const context = await failWith(
      NestFactory.createApplicationContext(CliModule.forConfig(withDatabase(config, url)), {
        logger: false,
        abortOnError: false,
      }),
    );
    try {
      return await work({ users: context.get(UsersService), store: context.get(SkillStoreService) });
    } finally {
      await context.close();
    }
  } finally {
    await embedded?.stop();
  }
}

/** The configuration with the database the command settled on, so the provider only connects and migrates. */
function withDatabase(config: AppConfig, url: string): AppConfig {
  const database = { ...config.app.database, url, poolSize: Math.min(config.app.database.poolSize, CLI_POOL_SIZE) };
  return { ...config, app: { ...config.app, database } };
}

/** Set-up failures (unreachable database, a server that will not start) become one line on stderr. */
async function failWith<T>(step: Promise<T>): Promise<T> {
  try {
    return await step;
  } catch (error) {
    throw new CommandFailure(error instanceof Error ? error.message : String(error));
  }
}
