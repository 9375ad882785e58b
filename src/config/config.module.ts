import { type DynamicModule, Global, Module } from '@nestjs/common';
import { ConfigModule as NestConfigModule } from '@nestjs/config';
import { APP_CONFIG, type AppConfig } from './app-config.js';
import { PROCESS_ROLE, type ProcessRole, SINGLE_PROCESS } from './process-role.js';

/**
 * The one validated configuration, through `@nestjs/config`: its ConfigService serves the tree
 * (`config.get('app.port')`), and `APP_CONFIG` the same object typed and frozen, which is what
 * Skillhost's own modules inject. The loader (config.toml + environment, validated against the
 * zod schema derived from the settings table) runs once, before the application is built, so an
 * invalid configuration stops the process with one line per problem before anything starts.
 * No `.env` file is read and nothing is written to `process.env`. `PROCESS_ROLE` says which process of the server
 * this is (the cluster's primary never builds the app).
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig, role: ProcessRole = SINGLE_PROCESS): DynamicModule {
    return {
      module: ConfigModule,
      imports: [
        NestConfigModule.forRoot({ load: [() => config], ignoreEnvFile: true, skipProcessEnv: true, cache: true }),
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: PROCESS_ROLE, useValue: role },
      ],
      exports: [APP_CONFIG, PROCESS_ROLE, NestConfigModule],
    };
  }
}
