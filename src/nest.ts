/**
 * `skillhost/nest`: Agent Skills inside an app's own NestJS backend. Import `SkillsModule.forRoot`
 * (or `forRootAsync`), inject `SkillRegistryService` and `SkillResourcesService`, and use the pure
 * pieces below wherever they help. Importing this file starts nothing and reads no configuration or
 * environment variable.
 */
export { SkillsModule } from './domain/skills/skills.module.js';
export { SkillRegistryService } from './domain/skills/skill-registry.service.js';
export { SkillResourcesService } from './domain/skills/skill-resources.service.js';
export type { ActivatedSkill, ResourceListing, SkillReader, SkillReadScope, SkillResource } from './domain/skills/skill-resources.service.js';
export { resolveSkillsOptions, SKILLS_SETTINGS } from './domain/skills/skills-settings.js';
export type { SkillsModuleAsyncOptions, SkillsModuleOptions, SkillsSettings } from './domain/skills/skills-settings.js';
export { ConfigError } from './config/config-loader.js';
export type { CatalogueFormat, SkillsConfig, ToolStyle, ValidationMode } from './config/app-config.js';
export type { CatalogueSnapshot } from '@skillhost/core';
export type { InvalidSkill, SkillRecord } from '@skillhost/core';

// Errors: every refusal of the services is an AppError with a stable code.
export { AppError, ErrorCode, httpStatusOf } from '@skillhost/core';

// The pure pieces.
export { parseSkillMd, type ParsedSkillMd } from '@skillhost/core';
export { parseFrontmatterYaml, type FrontmatterData, type ParsedFrontmatter } from '@skillhost/core';
export { ALLOWED_FIELDS, MAX_COMPATIBILITY_LENGTH, MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH, type SkillFrontmatter, validateFrontmatter, type ValidationResult } from '@skillhost/core';
export { type Invocation, type InvocationRules, MAX_INVOKED_SKILLS, parseInvocation } from '@skillhost/core';
export { type CatalogueEntry, renderCatalogue } from '@skillhost/core';
export { CatalogueChooser, type SkillSearchResult } from '@skillhost/core';
export type { CatalogueChoice } from '@skillhost/core';
export { assembleSystemPrompt, type PromptInputs } from '@skillhost/core';

// Activations, for an app that keeps its chats itself.
export { activationTableSql, PostgresActivationStore } from './infra/database/activation-store.js';
export type { ActivationHow, ActivationStore, NewSkillActivation, PgQueryable, StoredSkillActivation } from './infra/database/activation-store.js';
