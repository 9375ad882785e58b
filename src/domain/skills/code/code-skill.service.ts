import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, type SkillsConfig } from '../../../config/app-config.js';
import {
  type CodeSkillInvocation,
  type CodeSkillResult,
  type CodeSkillRunner,
  failedResult,
  type SkillRecord,
} from '@skillhost/core';
import { runCodeSkill, runInProcess, scoreCodeSkill, scoreInProcess } from '@skillhost/sandbox';

export type { CodeSkillInvocation } from '@skillhost/core';

/** canHandle is asked for every code skill when use_skill matches a query: it must answer quickly. */
const MAX_SCORE_TIMEOUT_MS = 5000;

/**
 * Runs code skills with the configured limits and settings: a folder `skill.mjs` in a worker
 * (`app.skills.code_timeout_ms`, `code_memory_mb`), a programmatic `execute` in-process. `ctx.config`
 * is the skill's `[app.skills.settings.NAME]`. Nothing here throws: every failure is a result.
 */
@Injectable()
export class CodeSkillService implements CodeSkillRunner {
  private readonly logger = new Logger(CodeSkillService.name);
  private readonly config: SkillsConfig;

  constructor(@Inject(APP_CONFIG) appConfig: AppConfig) {
    this.config = appConfig.app.skills;
  }

  async run(skill: SkillRecord, invocation: CodeSkillInvocation): Promise<CodeSkillResult> {
    const request = {
      ctx: {
        input: invocation.input,
        userMessage: invocation.userMessage,
        chatId: invocation.chatId,
        config: this.settingsOf(skill.name),
      },
      timeoutMs: this.config.codeTimeoutMs,
      llm: invocation.llm,
      callTool: invocation.callTool,
    };
    const execute = skill.programmatic?.execute;
    let result: CodeSkillResult;
    if (skill.code !== undefined)
      result = await runCodeSkill({ ...request, modulePath: skill.code.module, memoryMb: this.config.codeMemoryMb });
    else if (execute !== undefined) result = await runInProcess(execute, request);
    else result = failedResult(`Skill '${skill.name}' has no code to run; activate it to read its instructions.`, 0);
    if (!result.success)
      this.logger.warn(
        `Code skill '${skill.name}' failed in ${result.durationMs} ms: ` +
          `${result.error?.slice(0, 500) ?? 'no error given'}`,
      );
    return result;
  }

  /** `[app.skills.settings.NAME]`, own keys only: a skill named `constructor` must not get Object's. */
  private settingsOf(name: string): Record<string, unknown> {
    return Object.hasOwn(this.config.settings, name) ? { ...this.config.settings[name] } : {};
  }

  /** How well the skill says it fits the query (its canHandle), 0..1; undefined when it has none or cannot say. */
  async score(skill: SkillRecord, query: string): Promise<number | undefined> {
    const timeoutMs = Math.min(this.config.codeTimeoutMs, MAX_SCORE_TIMEOUT_MS);
    if (skill.code !== undefined) return scoreCodeSkill(skill.code.module, query, timeoutMs);
    const canHandle = skill.programmatic?.canHandle;
    return canHandle === undefined ? undefined : scoreInProcess(canHandle, query, timeoutMs);
  }
}
