/**
 * Code skills (the Rumi design): a skill whose `execute(ctx)` runs when it is invoked, instead of
 * (or besides) instructions the model reads. Folder code skills (`skill.mjs` in an operator-trusted
 * `app.skills.code_directories` folder) run in a worker thread; programmatic ones, registered by
 * the embedding application, run in-process. Both get the same `ctx` and return the same result.
 */

/** The chat's model, counted in the turn: a prompt (and an optional system prompt) in, text out. */
export type CodeSkillLlm = (prompt: string, options: { system?: string }) => Promise<string>;

/** One of the chat's tools (the skill tools, and `skills.runScript` when scripts are on), as its card ends. */
export type CodeSkillToolCaller = (name: string, args: unknown) => Promise<CodeSkillToolOutcome>;

export interface CodeSkillToolOutcome {
  status: 'ok' | 'error';
  output: string;
}

/** The plain-data part of `ctx`: what crosses into a worker. */
export interface CodeSkillInput {
  /** What the skill was asked to do (use_skill's `input`, or the text after `/name`). */
  input: string;
  /** The user's words this turn. */
  userMessage: string;
  chatId: string;
  /** `[app.skills.settings.NAME]` of this skill; `{}` when it has none. */
  config: Record<string, unknown>;
}

/** What `execute(ctx)` receives. */
export interface CodeSkillContext extends CodeSkillInput {
  llm: { complete(prompt: string, options?: { system?: string }): Promise<string> };
  tools: { call(name: string, args?: unknown): Promise<CodeSkillToolOutcome> };
}

/** What `execute(ctx)` returns (before the server checks it). */
export interface CodeSkillOutput {
  success: boolean;
  output: string;
  error?: string;
  metadata?: Record<string, unknown>;
  /** Added to the system prompt for the rest of the turn. */
  promptInjection?: string;
}

/** A checked, size-capped result; a throw, a timeout, a crash or a bad shape is `success: false` with `error`. */
export interface CodeSkillResult extends CodeSkillOutput {
  durationMs: number;
}

export interface CodeSkillRequest {
  /** Absolute path of the `skill.mjs` to import. */
  modulePath: string;
  ctx: CodeSkillInput;
  timeoutMs: number;
  /** The worker's JS heap limit (`resourceLimits.maxOldGenerationSizeMb`). */
  memoryMb: number;
  llm: CodeSkillLlm;
  callTool: CodeSkillToolCaller;
}

/** A programmatic code skill's own functions: trusted application code, called in-process. */
export type CodeSkillExecute = (ctx: CodeSkillContext) => Promise<CodeSkillOutput> | CodeSkillOutput;
export type CodeSkillCanHandle = (query: string) => Promise<number> | number;
