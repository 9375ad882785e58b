/**
 * `skillhost/nest`: Agent Skills inside an app's own NestJS backend. Import `SkillsModule.forRoot`
 * (or `forRootAsync`), inject `SkillRegistryService` and `SkillResourcesService`, and use the pure
 * pieces below wherever they help. Importing this file starts nothing and reads no configuration or
 * environment variable.
 */
export { SkillsModule } from './skills/skills.module.js';
export { SkillRegistryService } from './skills/skill-registry.service.js';
export { SkillResourcesService } from './skills/skill-resources.service.js';
export type { ActivatedSkill, ResourceListing, SkillReader, SkillReadScope, SkillResource } from './skills/skill-resources.service.js';
export { resolveSkillsOptions, SKILLS_SETTINGS } from './skills/skills-settings.js';
export type { SkillsModuleAsyncOptions, SkillsModuleOptions, SkillsSettings } from './skills/skills-settings.js';
export { ConfigError } from './config/config-loader.js';
export type { CatalogueFormat, SkillsConfig, ToolStyle, ValidationMode } from './config/app-config.js';
export type { CatalogueSnapshot } from './skills/catalogue-snapshot.js';
export type { InvalidSkill, SkillRecord } from './skills/skill.types.js';

// Errors: every refusal of the services is an AppError with a stable code.
export { AppError, ErrorCode, httpStatusOf } from './common/app-error.js';

// The pure pieces.
export { parseSkillMd, type ParsedSkillMd } from './skills/skill-md.js';
export { parseFrontmatterYaml, type FrontmatterData, type ParsedFrontmatter } from './skills/frontmatter-parser.js';
export { ALLOWED_FIELDS, MAX_COMPATIBILITY_LENGTH, MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH, type SkillFrontmatter, validateFrontmatter, type ValidationResult } from './skills/skill-validator.js';
export { type Invocation, type InvocationRules, MAX_INVOKED_SKILLS, parseInvocation } from './chat/invocation-parser.js';
export { type CatalogueEntry, renderCatalogue } from './skills/catalogue-renderer.js';
export { CatalogueChooser, type SkillSearchResult } from './skills/ranking/catalogue-chooser.js';
export type { CatalogueChoice } from './skills/ranking/catalogue-choice.js';
export { assembleSystemPrompt, type PromptInputs } from './chat/prompt-assembler.js';

// Activations, for an app that keeps its chats itself.
export { activationTableSql, PostgresActivationStore } from './persistence/activation-store.js';
export type { ActivationHow, ActivationStore, NewSkillActivation, PgQueryable, StoredSkillActivation } from './persistence/activation-store.js';
