import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error.js';
import { MetricsService } from '../ops/metrics.service.js';
import type { StoredToolCard } from '../persistence/entities/chat-message.entity.js';
import { SkillResourcesService } from '../skills/skill-resources.service.js';
import { checkToolArguments, type SkillToolName, toolByName } from './skill-tools.js';

export type ToolCard = StoredToolCard;

export interface ToolExecution {
  card: ToolCard;
  /** The skill this call activated, when it was a successful skills.activate. */
  activated?: string;
}

const LISTED_FILES = 50;

/**
 * Executes the skill tools for the model's loop and for the external-loop API alike. Failures
 * never throw: they become an error card whose output the model can read (naming alternatives).
 */
@Injectable()
export class SkillToolsService {
  private readonly logger = new Logger('SkillTools');

  constructor(
    private readonly resources: SkillResourcesService,
    private readonly metrics: MetricsService,
  ) {}

  async execute(tool: SkillToolName, args: unknown, id: string = randomUUID()): Promise<ToolExecution> {
    const execution = await this.run(tool, args, id);
    this.observe(execution.card);
    if (execution.activated !== undefined) this.metrics.observeActivation(execution.activated);
    return execution;
  }

  private async run(tool: SkillToolName, args: unknown, id: string): Promise<ToolExecution> {
    const started = performance.now();
    const checked = checkToolArguments(tool, args);
    const skill = typeof (args as { name?: unknown })?.name === 'string' ? ((args as { name: string }).name) : null;
    const path = typeof (args as { path?: unknown })?.path === 'string' ? ((args as { path: string }).path) : undefined;
    const card = (status: 'ok' | 'error', output: string, truncated = false, shownPath = path): ToolCard => ({
      id,
      tool,
      args: args ?? null,
      status,
      summary: { skill, ...(tool === 'skills.readResource' ? { path: shownPath } : {}), truncated },
      output,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
    });
    if (typeof checked === 'string') return { card: card('error', checked) };
    try {
      if (tool === 'skills.activate') {
        // Independent reads: overlap them in libuv's pool rather than waiting for one, then the other.
        const [activated, listing] = await Promise.all([this.resources.activate(checked.name), this.resources.listResources(checked.name)]);
        const files = listing.files.slice(0, LISTED_FILES).map((f) => f.path);
        const more = listing.files.length > LISTED_FILES || listing.truncated ? ', …' : '';
        const fileLine = files.length > 0 ? `\n\nFiles in this skill (read them with skills_readResource when the instructions call for them): ${files.join(', ')}${more}` : '';
        const output = `# Skill: ${activated.name}\n\n${activated.body}${fileLine}`;
        this.logger.log(`skills.activate ${activated.name}`);
        return { card: { ...card('ok', output, activated.truncated), summary: { skill: activated.name, truncated: activated.truncated } }, activated: activated.name };
      }
      const resource = await this.resources.readResource(checked.name, checked.path ?? '');
      this.logger.log(`skills.readResource ${resource.name} ${resource.path}`);
      return { card: { ...card('ok', resource.content, resource.truncated, resource.path), summary: { skill: resource.name, path: resource.path, truncated: resource.truncated } } };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      this.logger.log(`${tool} refused: ${error.code}`);
      return { card: card('error', `Error (${error.code}): ${error.message}`) };
    }
  }

  /** A call the SDK refused before execution: an unknown tool or arguments that were not JSON. */
  refusedCard(id: string, wireName: string, input: unknown, reason: string): ToolCard {
    const card: ToolCard = {
      id,
      tool: wireName,
      args: input ?? null,
      status: 'error',
      summary: { skill: null, truncated: false },
      output: `Error: ${reason}`,
      durationMs: 0,
    };
    this.observe(card);
    return card;
  }

  /** A made-up tool name is counted as `unknown`, so a model cannot add series at will. */
  private observe(card: ToolCard): void {
    this.metrics.observeToolCall(toolByName(card.tool) === undefined ? 'unknown' : card.tool, card.status, card.durationMs);
  }
}
