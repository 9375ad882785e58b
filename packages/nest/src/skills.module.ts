import { type DynamicModule, type FactoryProvider, Module, type ModuleMetadata } from '@nestjs/common';
import { SkillRegistryService } from './skill-registry.service.js';
import { SkillResourcesService } from './skill-resources.service.js';
import { ConfigError, SKILL_SOURCES, SKILLS_SETTINGS, type SkillsSettings } from '@skillhost/core';
import { resolveSkillsOptions, type SkillsModuleAsyncOptions, type SkillsModuleOptions } from './skills-options.js';

/** The options as the app gave them: the settings are resolved from them, and its `sources` taken as they are. */
const SKILLS_MODULE_OPTIONS = Symbol('SKILLHOST_SKILLS_MODULE_OPTIONS');

/**
 * The skills of an app: the registry (discovery, validation, the catalogue snapshot, reloads) and
 * the resources service (activation, reads that never leave a skill's folder). An app embedding
 * Skillhost imports `SkillsModule.forRoot(options)` from `skillhost/nest`; the server imports the
 * same module with its configuration and its skill store (`TeamSkillsModule`).
 */
@Module({})
export class SkillsModule {
  /** Options checked when the module is built (a `ConfigError` listing every problem). */
  static forRoot(options: SkillsModuleOptions): DynamicModule {
    return SkillsModule.forOptions({ useFactory: () => options, isGlobal: options?.isGlobal });
  }

  /** Options from a factory, which may inject providers of `imports`. */
  static forRootAsync(options: SkillsModuleAsyncOptions): DynamicModule {
    return SkillsModule.forOptions({
      imports: options.imports,
      inject: options.inject,
      useFactory: async (...args: never[]) => {
        const given = await options.useFactory(...args);
        if (given !== null && typeof given === 'object' && 'isGlobal' in given) {
          throw new ConfigError([
            'SkillsModule option `isGlobal` goes in forRootAsync({ isGlobal }) itself, not in what its factory ' +
              'returns (the module is global or not before the factory runs)',
          ]);
        }
        return given;
      },
      isGlobal: options.isGlobal,
    });
  }

  private static forOptions(options: {
    imports?: ModuleMetadata['imports'];
    inject?: FactoryProvider['inject'];
    useFactory: (...args: never[]) => SkillsModuleOptions | Promise<SkillsModuleOptions>;
    isGlobal?: boolean;
  }): DynamicModule {
    const module = SkillsModule.forSettings({
      imports: options.imports,
      inject: [SKILLS_MODULE_OPTIONS],
      useFactory: (given: SkillsModuleOptions) => resolveSkillsOptions(given),
      isGlobal: options.isGlobal,
    });
    const given = { provide: SKILLS_MODULE_OPTIONS, useFactory: options.useFactory, inject: options.inject ?? [] };
    const sources = {
      provide: SKILL_SOURCES,
      useFactory: (given: SkillsModuleOptions) => given?.sources ?? [],
      inject: [SKILLS_MODULE_OPTIONS],
    };
    return { ...module, providers: [given, sources, ...(module.providers ?? [])] };
  }

  /**
   * Settings already checked (the server's configuration). `imports` may provide the
   * `SkillStoreService` (installed skills) and the `MetricsService` the registry reports to.
   */
  static forSettings(options: {
    imports?: ModuleMetadata['imports'];
    inject?: FactoryProvider['inject'];
    useFactory: (...args: never[]) => SkillsSettings | Promise<SkillsSettings>;
    isGlobal?: boolean;
  }): DynamicModule {
    return {
      module: SkillsModule,
      global: options.isGlobal === true,
      imports: options.imports ?? [],
      providers: [
        { provide: SKILLS_SETTINGS, useFactory: options.useFactory, inject: options.inject ?? [] },
        SkillRegistryService,
        SkillResourcesService,
      ],
      exports: [SKILLS_SETTINGS, SkillRegistryService, SkillResourcesService],
    };
  }
}
