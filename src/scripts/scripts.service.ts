import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AppError, ErrorCode } from '../common/app-error.js';
import { APP_CONFIG, type AppConfig, type ScriptsConfig } from '../config/app-config.js';
import { skillGoneError } from '../skills/skill-resources.service.js';
import type { SkillRecord } from '../skills/skill.types.js';
import { checkScriptAllowed, parseAllowedTools } from './allowed-tools.js';
import type { ScriptInvocation } from './command-line.js';
import { checkSandbox, runSandboxed, type SandboxResult } from './script-sandbox.js';

export interface ScriptRequest {
  skill: SkillRecord;
  /** Relative to the skill folder, e.g. `scripts/extract.py`. */
  path: string;
  args: readonly string[];
  stdin?: string;
}

export type ScriptRun = SandboxResult;

/**
 * Runs a skill's scripts, only ever in the bubblewrap sandbox and only as its `allowed-tools`
 * permits (unless the operator turned that off). With scripts enabled and no working sandbox, the
 * server does not start: a script never runs unsandboxed.
 */
@Injectable()
export class ScriptsService implements OnModuleInit {
  private readonly logger = new Logger(ScriptsService.name);
  private readonly config: ScriptsConfig;

  constructor(@Inject(APP_CONFIG) appConfig: AppConfig) {
    this.config = appConfig.app.scripts;
  }

  async onModuleInit(): Promise<void> {
    if (!this.config.enabled) return;
    try {
      await checkSandbox();
    } catch (error) {
      const reason = (error as Error).message.replace(/\.$/, '');
      throw new Error(`[app.scripts] enabled = true, but the sandbox cannot run: ${reason}. Scripts are never run unsandboxed: fix this or set enabled = false.`);
    }
    this.logger.log(`Scripts enabled: bubblewrap sandbox, ${this.config.timeoutMs} ms, ${this.config.maxOutputBytes} bytes of output, ${this.config.memoryMb} MB, ${this.config.maxProcesses} processes`);
  }

  get enabled(): boolean {
    return this.config.enabled;
  }

  /** SCRIPTS_DISABLED, SCRIPT_NOT_ALLOWED or a path/interpreter problem as an AppError; a script that runs and fails is a result. */
  async run(request: ScriptRequest): Promise<ScriptRun> {
    if (!this.config.enabled) throw scriptsDisabledError();
    if (request.skill.origin === 'programmatic') {
      throw new AppError(ErrorCode.VALIDATION_FAILED, `Skill '${request.skill.name}' was registered by the application and has no folder: it has no scripts to run.`, { name: request.skill.name });
    }
    const skill = request.skill;
    if (skill.store?.scope === 'personal' && !this.config.personalSkills) {
      throw new AppError(
        ErrorCode.SCRIPT_NOT_ALLOWED,
        `Skill '${skill.name}' is a personal skill (installed by ${skill.store.owner ?? 'a user'}); scripts of personal skills do not run on this server ([app.scripts] personal_skills = false). An admin can install it as a shared skill.`,
        { name: skill.name },
      );
    }
    const result = await this.sandboxed(skill, {
      skillDir: skill.path,
      scriptPath: request.path,
      args: [...request.args],
      stdin: request.stdin,
      timeoutMs: this.config.timeoutMs,
      maxOutputBytes: this.config.maxOutputBytes,
      memoryBytes: this.config.memoryMb * 1024 * 1024,
      maxProcesses: this.config.maxProcesses,
      authorize: this.config.requireAllowedTools ? (invocation) => assertAllowed(skill, invocation) : undefined,
    });
    this.logger.log(`Script ${skill.name}/${result.path}: exit ${result.exitCode ?? result.signal} in ${Math.round(result.durationMs)} ms${result.timedOut ? ' (timed out)' : ''}${result.truncated ? ' (output cut)' : ''}`);
    return result;
  }

  /** A sandbox that cannot start (bwrap gone since start-up, a folder uid 65534 cannot read) is the card's error, not the turn's. */
  private async sandboxed(skill: SkillRecord, request: Parameters<typeof runSandboxed>[0]): Promise<SandboxResult> {
    try {
      return await runSandboxed(request);
    } catch (error) {
      if (error instanceof AppError && error.code === ErrorCode.SKILL_NOT_FOUND) throw skillGoneError(skill);
      if (error instanceof AppError) throw error;
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
    `Skill '${skill.name}' may not run '${invocation.scriptPath}': ${verdict.reason} (either form will do: ${verdict.needed}).`,
    { name: skill.name, path: invocation.scriptPath, needed: verdict.needed },
  );
}

export function scriptsDisabledError(): AppError {
  return new AppError(ErrorCode.SCRIPTS_DISABLED, 'Running skill scripts is disabled on this server ([app.scripts] enabled = false).');
}
