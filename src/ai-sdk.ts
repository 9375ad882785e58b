/**
 * `skillhost/ai-sdk`: the skill tools as AI SDK tools for an app's own `generateText`/`streamText`
 * call, explicit `/name` invocation, and the system prompt that lists the skills. Give them the
 * registry and resources of `SkillsModule` (`skillhost/nest`).
 */
export { invokeSkills, type Invoked, skillSystemPrompt, skillTools, type SkillToolsOptions } from './domain/chats/llm/ai-sdk-skills.js';
export type { ToolCard } from './domain/chats/tools/run-tool.js';
export type { ToolCardSummary } from './infra/database/entities/chat-message.entity.js';
export type { ToolStyle } from './config/app-config.js';
