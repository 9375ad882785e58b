/** @skillhost/core: Agent Skills without a framework, a database, a model SDK or child processes. */
export * from './chat/invocation-parser.js';
export * from './chat/prompt-assembler.js';
export * from './commands/command-file.js';
export * from './commands/command.types.js';
export * from './errors/app-error.js';
export * from './options/setting.js';
export * from './options/skills-options.schema.js';
export * from './resources/file-head.js';
export * from './resources/resource-path.js';
export * from './resources/skill-file-headers.js';
export * from './skill/frontmatter-parser.js';
export * from './skill/frontmatter-reader.js';
export * from './skill/skill-order.js';
export * from './skill/truncation.js';
