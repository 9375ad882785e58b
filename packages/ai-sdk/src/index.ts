/**
 * @skillhost/ai-sdk: the skill tools as AI SDK tools for an app's own `generateText`/`streamText`
 * call, explicit `/name` invocation, and the system prompt that lists the skills. Give them the
 * registry and resources of `SkillsModule` (@skillhost/nest) or of @skillhost/core.
 */
export { invokeSkills, type Invoked, skillSystemPrompt, skillTools, type SkillToolsOptions } from './ai-sdk-skills.js';
export {
  errorOutput,
  failedCallSummary,
  runSkillTool,
  serverCallMessages,
  type ToolCard,
  type ToolExecution,
} from './run-tool.js';
export { type LoopTool, type LoopToolCall, toolSetOf } from './tool-set.js';
export type { StoredToolCard, ToolCardSummary, ToolStyle } from '@skillhost/core';
