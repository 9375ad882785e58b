import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AppError, ErrorCode } from '../common/app-error.js';
import { APP_CONFIG, type AppConfig, type ScriptsConfig } from '../config/app-config.js';
import type { SkillRecord } from '../skills/skill.types.js';
import { checkScriptAllowed, parseAllowedTools } from './allowed-tools.js';
import { chooseInterpreter } from './interpreter.js';
import { checkSandbox, runSandboxed, type SandboxResult } from './script-sandbox.js';
import { resolveScriptFile } from './script-file.js';

export interface ScriptRequest {
  skill: SkillRecord;
  /** Relative to the skill folder, e.g. `scripts/extract.py`. */
  path: string;
  args: readonly string[];
  stdin?: string;
}

export type ScriptRun = SandboxResult & { path: string };

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
    const script = resolveScriptFile(request.skill.path, request.path);
    const interpreter = chooseInterpreter(script.relativePath, script.head);
    if ('error' in interpreter) throw new AppError(ErrorCode.VALIDATION_FAILED, `Script '${script.relativePath}' of skill '${request.skill.name}' cannot be run: ${interpreter.error}`, { name: request.skill.name, path: script.relativePath });
    if (this.config.requireAllowedTools) {
      const { rules } = parseAllowedTools(request.skill.frontmatter['allowed-tools']);
      const verdict = checkScriptAllowed(rules, { interpreter: interpreter.name, scriptPath: script.relativePath, args: request.args });
      if (!verdict.allowed) {
        throw new AppError(
          ErrorCode.SCRIPT_NOT_ALLOWED,
          `Skill '${request.skill.name}' may not run '${script.relativePath}': ${verdict.reason} (either form will do: ${verdict.needed}).`,
          { name: request.skill.name, path: script.relativePath, needed: verdict.needed },
        );
      }
    }
    const result = await this.sandboxed({
      skillDir: script.skillDir,
      scriptPath: script.relativePath,
      args: [...request.args],
      stdin: request.stdin,
      timeoutMs: this.config.timeoutMs,
      maxOutputBytes: this.config.maxOutputBytes,
      memoryBytes: this.config.memoryMb * 1024 * 1024,
      maxProcesses: this.config.maxProcesses,
    });
    this.logger.log(`Script ${request.skill.name}/${script.relativePath}: exit ${result.exitCode ?? result.signal} in ${Math.round(result.durationMs)} ms${result.timedOut ? ' (timed out)' : ''}${result.truncated ? ' (output cut)' : ''}`);
    return { ...result, path: script.relativePath };
  }

  /** A sandbox that cannot start (bwrap gone since start-up, a folder uid 65534 cannot read) is the card's error, not the turn's. */
  private async sandboxed(request: Parameters<typeof runSandboxed>[0]): Promise<SandboxResult> {
    try {
      return await runSandboxed(request);
    } catch (error) {
      if (error instanceof AppError) throw error;
      this.logger.error(`Script sandbox failed to start: ${(error as Error).message}`);
      throw new AppError(ErrorCode.INTERNAL, (error as Error).message);
    }
  }
}

export function scriptsDisabledError(): AppError {
  return new AppError(ErrorCode.SCRIPTS_DISABLED, 'Running skill scripts is disabled on this server ([app.scripts] enabled = false).');
}
