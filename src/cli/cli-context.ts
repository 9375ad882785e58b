import 'reflect-metadata';
import { type DynamicModule, type INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AuthService } from '../domain/users/auth.service.js';
import { UsersService } from '../domain/users/users.service.js';
import type { AppConfig } from '../config/app-config.js';
import { ConfigModule } from '../config/config.module.js';
import { COMMAND_PROCESS } from '../config/process-role.js';
import { chatsWithAdapters, skillsWithAdapters } from '../app/domain-modules.js';
import { MetricsModule } from '../infra/observability/metrics.service.js';
import { EmbeddedPostgresServer } from '../infra/database/embedded-postgres.server.js';
import { PersistenceModule } from '../infra/database/persistence.module.js';
import { SkillStoreService } from '../domain/skills/store/skill-store.service.js';
import { SkillImportService } from '../domain/skills/store/skill-import.service.js';
import { SKILL_MIRROR_STORE, type SkillMirrorStore } from '../domain/skills/store/skill-mirror-store.js';
import { SkillMirrorService } from '../domain/skills/store/skill-mirror.service.js';
import { CommandFailure } from './cli-io.js';
import { EVAL_RUN_STORE, type EvalRunStore } from '../domain/skills/evals/eval-run-store.js';
import { EVAL_CASE_STORE, type EvalCaseStore } from '../domain/skills/evals/eval-case-store.js';

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
      imports: [ConfigModule.forRoot(config, COMMAND_PROCESS), PersistenceModule],
      providers: [AuthService, UsersService, SkillStoreService],
    };
  }
}

/** Runs `work` with the server's UsersService on the configured database (see withContext). */
export function withUsersService<T>(config: AppConfig, work: (users: UsersService) => Promise<T>): Promise<T> {
  return withServices(config, (services) => work(services.users));
}

/** What the database commands work with: the server's own services. */
export interface CliServices {
  users: UsersService;
  store: SkillStoreService;
  mirrors: SkillMirrorService;
  runStore: EvalRunStore;
  caseStore: EvalCaseStore;
}

/** The same, with the skill store and the mirrors too (`install`, `versions`, `enable`, `mirrors`…). */
export function withServices<T>(config: AppConfig, work: (services: CliServices) => Promise<T>): Promise<T> {
  return withContext(config, CliModule.forConfig, async (context) => {
    const store = context.get(SkillStoreService);
    const mirrors = mirrorServiceOf(config, context.get<SkillMirrorStore>(SKILL_MIRROR_STORE), store);
    const runStore = context.get<EvalRunStore>(EVAL_RUN_STORE);
    const caseStore = context.get<EvalCaseStore>(EVAL_CASE_STORE);
    return work({ users: context.get(UsersService), store, mirrors, runStore, caseStore });
  });
}

/**
 * Runs `work` with the server's skills and chats as a server on this configuration wires them (app/domain-modules.ts):
 * its catalogue, planner, tools and models (`skillhost eval --level model`). A command's process role: no mirror runs,
 * no catalogue evals after changes, nothing written at start-up.
 */
export function withDomain<T>(config: AppConfig, work: (context: INestApplicationContext) => Promise<T>): Promise<T> {
  return withContext(config, DomainCliModule.forConfig, work);
}

@Module({})
class DomainCliModule {
  static forConfig(config: AppConfig): DynamicModule {
    return {
      module: DomainCliModule,
      imports: [
        ConfigModule.forRoot(config, COMMAND_PROCESS),
        PersistenceModule,
        MetricsModule,
        chatsWithAdapters(skillsWithAdapters()),
      ],
    };
  }
}

/**
 * Builds the module for the configured database, migrated first, and runs `work` with it. With no database URL it uses
 * the embedded server's data folder: through the PostgreSQL of a Skillhost server already running on it (left
 * running), else through one started for this command and stopped afterwards. Nest logs nothing: stdout is for the
 * command's answer.
 */
async function withContext<T>(
  config: AppConfig,
  moduleFor: (config: AppConfig) => DynamicModule,
  work: (context: INestApplicationContext) => Promise<T>,
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
      NestFactory.createApplicationContext(moduleFor(withDatabase(config, url)), {
        logger: false,
        abortOnError: false,
      }),
    );
    try {
      return await work(context);
    } finally {
      await context.close();
    }
  } finally {
    await embedded?.stop();
  }
}

/**
 * The admin routes' mirror service, built by hand rather than by Nest: its start-up would write the configured mirrors
 * (from this command's configuration, which may not be the server's) and run due mirrors in this short-lived process.
 * It gets no registry: the command has no catalogue to refresh, and the servers on the database hear of each install
 * through PostgreSQL and read the store again.
 */
function mirrorServiceOf(
  config: AppConfig,
  mirrorStore: SkillMirrorStore,
  store: SkillStoreService,
): SkillMirrorService {
  return new SkillMirrorService(config, mirrorStore, new SkillImportService(store, config));
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
