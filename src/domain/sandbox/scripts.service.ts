import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import {
  AppError,
  ErrorCode,
  type ScriptCaller,
  type ScriptRequest,
  type ScriptRun,
  type ScriptRunner,
  scriptsDisabledError,
  skillGoneError,
  type SkillRecord,
} from '@skillhost/core';
import { APP_CONFIG, type AppConfig, type ScriptsConfig } from '../../config/app-config.js';
import { SCRIPT_METRICS, type ScriptMetrics } from './script-metrics.js';
import {
  checkSandbox,
  checkScriptAllowed,
  parseAllowedTools,
  runSandboxed,
  SandboxSlots,
  type ScriptInvocation,
  type SlotScope,
} from '@skillhost/sandbox';
import { inheritedEnvironment } from '../../config/inherited-environment.js';

export { scriptsDisabledError };
export type { ScriptCaller, ScriptRequest, ScriptRun } from '@skillhost/core';

/**
 * Runs a skill's scripts, only ever in the bubblewrap sandbox and only as its `allowed-tools`
 * permits (unless the operator turned that off). With scripts enabled and no working sandbox, the
 * server does not start: a script never runs unsandboxed.
 */
@Injectable()
export class ScriptsService implements OnModuleInit, ScriptRunner {
  private readonly logger = new Logger(ScriptsService.name);
  private readonly config: ScriptsConfig;
  private readonly slots: SandboxSlots;

  constructor(
    @Inject(APP_CONFIG) appConfig: AppConfig,
    @Inject(SCRIPT_METRICS) private readonly metrics: ScriptMetrics,
  ) {
    this.config = appConfig.app.scripts;
    this.slots = new SandboxSlots({
      instance: this.config.maxConcurrent,
      perUser: this.config.maxConcurrentPerUser,
      perTurn: this.config.maxConcurrentPerTurn,
    });
    this.metrics.observeScripts(() => this.slots.running);
  }

  async onModuleInit(): Promise<void> {
    if (!this.config.enabled) return;
    try {
      await checkSandbox('bwrap', inheritedEnvironment().PATH ?? '');
    } catch (error) {
      const reason = (error as Error).message.replace(/\.$/, '');
      throw new Error(
        `[app.scripts] enabled = true, but the sandbox cannot run: ${reason}. Scripts are never run ` +
          `unsandboxed: fix this or set enabled = false.`,
      );
    }
    const {
      timeoutMs,
      maxOutputBytes,
      memoryMb,
      maxProcesses,
      maxConcurrent,
      maxConcurrentPerUser,
      maxConcurrentPerTurn,
    } = this.config;
    this.logger.log(
      `Scripts enabled: bubblewrap sandbox, ${timeoutMs} ms, ${maxOutputBytes} bytes of output, ${memoryMb} MB, ` +
        `${maxProcesses} processes; at most ${maxConcurrent} at once (${maxConcurrentPerUser || 'no cap'} per ` +
        `user, ${maxConcurrentPerTurn || 'no cap'} per turn)`,
    );
  }

  get enabled(): boolean {
    return this.config.enabled;
  }

  /**
   * SCRIPTS_DISABLED, SCRIPT_NOT_ALLOWED, SCRIPTS_BUSY or a path/interpreter problem as an
   * AppError; a script that runs and fails is a result. The slot is taken once the call is known
   * to be valid, just before the sandbox starts, and given back however the run ends (exit,
   * time limit, output cap, a sandbox that would not start).
   */
  async run(request: ScriptRequest): Promise<ScriptRun> {
    if (!this.config.enabled) throw scriptsDisabledError();
    if (request.skill.origin === 'programmatic') {
      throw new AppError(
        ErrorCode.VALIDATION_FAILED,
        `Skill '${request.skill.name}' was registered by the application and has no folder: it has no scripts to run.`,
        { name: request.skill.name },
      );
    }
    const skill = request.skill;
    if (skill.store?.scope === 'personal' && !this.config.personalSkills) {
      throw new AppError(
        ErrorCode.SCRIPT_NOT_ALLOWED,
        `Skill '${skill.name}' is a personal skill (installed by ` +
          `${skill.store.owner ?? 'a user'}); scripts of personal skills do not run on ` +
          `this server ([app.scripts] personal_skills = false). An admin can install it as a shared skill.`,
        { name: skill.name },
      );
    }
    let release: (() => void) | undefined;
    const result = await this.sandboxed(skill, {
      skillDir: skill.path,
      scriptPath: request.path,
      args: [...request.args],
      stdin: request.stdin,
      timeoutMs: this.config.timeoutMs,
      maxOutputBytes: this.config.maxOutputBytes,
      memoryBytes: this.config.memoryMb * 1024 * 1024,
      maxProcesses: this.config.maxProcesses,
      authorize: (invocation) => {
        if (this.config.requireAllowedTools) assertAllowed(skill, invocation);
        release = this.takeSlot(request.caller ?? {});
      },
    }).finally(() => release?.());
    this.logger.log(
      `Script ${skill.name}/${result.path}: exit ${result.exitCode ?? result.signal} in ` +
        `${Math.round(result.durationMs)} ` +
        `ms${result.timedOut ? ' (timed out)' : ''}${result.truncated ? ' (output cut)' : ''}`,
    );
    return result;
  }

  /** A slot for `caller`'s sandbox, or SCRIPTS_BUSY naming the cap that is full. */
  private takeSlot(caller: ScriptCaller): () => void {
    const grant = this.slots.take(caller);
    if ('release' in grant) return grant.release;
    this.metrics.observeScriptsRefused(grant.refused);
    throw scriptsBusyError(grant.refused, grant.limit);
  }

  /**
   * A sandbox that cannot start (bwrap gone since start-up, a folder uid 65534 cannot read) is the card's error, not
   * the turn's.
   */
  private async sandboxed(skill: SkillRecord, request: Parameters<typeof runSandboxed>[0]): Promise<ScriptRun> {
    try {
      return await runSandboxed(request, 'bwrap', inheritedEnvironment().PATH ?? '');
    } catch (error) {
      if (AppError.isInstance(error) && error.code === ErrorCode.SKILL_NOT_FOUND) throw skillGoneError(skill);
      if (AppError.isInstance(error)) throw error;
      this.logger.error(`Script sandbox failed to start: ${(error as Error).message}`);
      throw new AppError(ErrorCode.INTERNAL, (error as Error).message);
    }
  }
}

/** SCRIPT_NOT_ALLOWED unless the skill's `allowed-tools` permits the command, saying what it would need to declare. */
function assertAllowed(skill: SkillRecord, invocation: ScriptInvocation): void {
  const { rules } = parseAllowedTools(skill.frontmatter['allowed-tools']);
  const verdict = checkScriptAllowed(rules, invocation);
  if (verdict.allowed) return;
  throw new AppError(
    ErrorCode.SCRIPT_NOT_ALLOWED,
    `Skill '${skill.name}' may not run '${invocation.scriptPath}': ${verdict.reason} (either form will do: ` +
      `${verdict.needed}).`,
    { name: skill.name, path: invocation.scriptPath, needed: verdict.needed },
  );
}

const BUSY_MESSAGES: Readonly<Record<SlotScope, (limit: number) => string>> = {
  turn: (limit) =>
    `This turn is already running ${limit} ` +
    `${scripts(limit)} at once ([app.scripts] max_concurrent_per_turn), so this script did not run. Run scripts ` +
    `one at a time: call it again once the running ones have answered.`,
  user: (limit) =>
    `This user is already running ${limit} ` +
    `${scripts(limit)} at once, in this chat or others ([app.scripts] max_concurrent_per_user), so this script ` +
    `did not run. Call it again once one of them has finished.`,
  instance: (limit) =>
    `This server is already running ${limit} ` +
    `${scripts(limit)} at once, its limit ([app.scripts] max_concurrent), so this script did not run. Call it ` +
    `again in a moment, one script at a time.`,
};

export function scriptsBusyError(scope: SlotScope, limit: number): AppError {
  const setting = { turn: 'max_concurrent_per_turn', user: 'max_concurrent_per_user', instance: 'max_concurrent' }[
    scope
  ];
  return new AppError(ErrorCode.SCRIPTS_BUSY, BUSY_MESSAGES[scope](limit), { reason: setting, limit });
}

function scripts(count: number): string {
  return count === 1 ? 'script' : 'scripts';
}
