import { AppError, ErrorCode } from '../errors/app-error.js';
import type { CodeSkillLlm, CodeSkillResult, CodeSkillToolCaller } from '../code/code-skill.types.js';
import type { SkillRecord } from '../skill/skill.types.js';

/** Who a script runs for; the per-user and per-turn caps count by these (absent: not counted there). */
export interface ScriptCaller {
  userId?: string;
  /** One id per chat turn; a call through the tool API is no turn. */
  turnId?: string;
}

export interface ScriptRequest {
  skill: SkillRecord;
  /** Relative to the skill folder, e.g. `scripts/extract.py`. */
  path: string;
  args: readonly string[];
  stdin?: string;
  /** Who it runs for: counted against the per-user and per-turn caps. */
  caller?: ScriptCaller;
}

/** What a script run gave, as its card shows it. */
export interface ScriptRun {
  /** The script, normalised and relative to the skill folder, e.g. `scripts/echo.sh`. */
  path: string;
  /** As shown on the card, e.g. `sh scripts/echo.sh a`. */
  command: string;
  /**
   * The exit code; 128 + the signal number for a script killed inside the sandbox; null when the sandbox was killed.
   */
  exitCode: number | null;
  /** `SIGKILL` when the sandbox was killed (timeout, output cap, abort); otherwise null. */
  signal: string | null;
  durationMs: number;
  timedOut: boolean;
  truncated: boolean;
  /** stdout and stderr interleaved as written, UTF-8, cut at the cap with a notice line. */
  output: string;
}

/** Runs a skill's scripts (a port: the server's sandbox implements it; absent where scripts are not offered). */
export interface ScriptRunner {
  run(request: ScriptRequest): Promise<ScriptRun>;
}

/** One invocation of a code skill, as the chat makes it. */
export interface CodeSkillInvocation {
  /** What the skill is asked to do (use_skill's `input`, or the text after `/name`). */
  input: string;
  /** The user's words this turn. */
  userMessage: string;
  chatId: string;
  /** The chat's model; its use counts in the turn. */
  llm: CodeSkillLlm;
  /** The chat's tools (the skill tools, and `skills.runScript` while scripts are on). */
  callTool: CodeSkillToolCaller;
}

/** Runs and scores code skills (a port: the server's worker pool implements it). */
export interface CodeSkillRunner {
  run(skill: SkillRecord, invocation: CodeSkillInvocation): Promise<CodeSkillResult>;
  score(skill: SkillRecord, query: string): Promise<number | undefined>;
}

export function scriptsDisabledError(): AppError {
  return new AppError(
    ErrorCode.SCRIPTS_DISABLED,
    'Running skill scripts is disabled on this server ([app.scripts] enabled = false).',
  );
}
