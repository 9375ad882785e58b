/**
 * `skillhost/ai-sdk`: the skill tools as AI SDK tools for an app's own `generateText`/`streamText`
 * call, explicit `/name` invocation, and the system prompt that lists the skills (the package
 * @skillhost/ai-sdk, re-exported). Give them the registry and resources of `SkillsModule`
 * (`skillhost/nest`).
 */
export {
  invokeSkills,
  type Invoked,
  skillSystemPrompt,
  type SkillToolsOptions,
  skillTools,
  type ToolCard,
} from '@skillhost/ai-sdk';
export type { ToolCardSummary, ToolStyle } from '@skillhost/ai-sdk';
