/**
 * `skillhost/nest`: Agent Skills inside an app's own NestJS backend. Import `SkillsModule.forRoot`
 * (or `forRootAsync`), inject `SkillRegistryService` and `SkillResourcesService`, and use the pure
 * pieces below wherever they help (all from the package @skillhost/nest, which this re-exports). Importing this file
 * starts nothing and reads no configuration or environment variable.
 */
export { SkillsModule } from '@skillhost/nest';
export { SkillRegistryService } from '@skillhost/nest';
export { SkillResourcesService } from '@skillhost/nest';
export type { ActivatedSkill, ResourceListing, SkillReader, SkillReadScope, SkillResource } from '@skillhost/nest';
export { resolveSkillsOptions, SKILLS_SETTINGS } from '@skillhost/nest';
export type { SkillsModuleAsyncOptions, SkillsModuleOptions, SkillsSettings } from '@skillhost/nest';
export { ConfigError } from './config/config-loader.js';
export type { CatalogueFormat, SkillsConfig, ToolStyle, ValidationMode } from './config/app-config.js';
export type { CatalogueSnapshot } from '@skillhost/nest';
export type { InvalidSkill, SkillRecord } from '@skillhost/nest';
// Skills from an app's own place (a database, a service), beside the folders: `SkillsModule.forRoot({ sources })`.
export { SKILL_SOURCES } from '@skillhost/nest';
export type { SkillSource, SkillSourceContent, SkillSourceLoad } from '@skillhost/nest';

// Errors: every refusal of the services is an AppError with a stable code.
export { AppError, ErrorCode, httpStatusOf } from '@skillhost/nest';

// The pure pieces.
export { parseSkillMd, type ParsedSkillMd } from '@skillhost/nest';
export { parseFrontmatterYaml, type FrontmatterData, type ParsedFrontmatter } from '@skillhost/nest';
export {
  ALLOWED_FIELDS,
  MAX_COMPATIBILITY_LENGTH,
  MAX_DESCRIPTION_LENGTH,
  MAX_NAME_LENGTH,
  type SkillFrontmatter,
  validateFrontmatter,
  type ValidationResult,
} from '@skillhost/nest';
export { type Invocation, type InvocationRules, MAX_INVOKED_SKILLS, parseInvocation } from '@skillhost/nest';
export { type CatalogueEntry, renderCatalogue } from '@skillhost/nest';
export { CatalogueChooser, type SkillSearchResult } from '@skillhost/nest';
export type { CatalogueChoice } from '@skillhost/nest';
export { assembleSystemPrompt, type PromptInputs } from '@skillhost/nest';

// Activations, for an app that keeps its chats itself.
export { activationTableSql, PostgresActivationStore } from '@skillhost/nest';
export type {
  ActivationHow,
  ActivationStore,
  NewSkillActivation,
  PgQueryable,
  StoredSkillActivation,
} from '@skillhost/nest';
