/**
 * @skillhost/nest: Agent Skills inside an app's own NestJS backend. Import `SkillsModule.forRoot`
 * (or `forRootAsync`), inject `SkillRegistryService` and `SkillResourcesService`, and use the pure
 * pieces of @skillhost/core (re-exported here) wherever they help. Importing it starts nothing and
 * reads no configuration or environment variable.
 */
export * from '@skillhost/core';
export { SkillRegistryService } from './skill-registry.service.js';
export { SkillResourcesService } from './skill-resources.service.js';
export { resolveSkillsOptions, type SkillsModuleAsyncOptions, type SkillsModuleOptions } from './skills-options.js';
export { SkillsModule } from './skills.module.js';
