import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { AppError, type CatalogueSnapshot, ErrorCode, type ToolStyleSet } from '@skillhost/core';
import { APP_CONFIG, type AppConfig, type ModelConfig } from '../../config/app-config.js';
import { type CaseResult, caseResult, type EvalScore, scoreOf } from '../skills/evals/catalogue-eval.js';
import { TriggerEvalService } from '../skills/evals/trigger-eval.service.js';
import type { TriggerCase } from '../skills/evals/trigger-evals.js';
import { requireModel } from './chat-models.js';
import { ModelLoopService } from './llm/model-loop.service.js';
import { TurnPlanner } from './turn-planner.js';

/** The answer an activation gets in an eval: the model's choice is what is measured, not what it does next. */
const NOT_RUN = 'This is an evaluation: the skill was not run.';

/** One skill's model-level run: which cases ran within the call budget, and how. */
export interface ModelEvalResult {
  skill: string;
  digest: string | null;
  model: string;
  /** Model calls made (one per case run). */
  calls: number;
  /** Cases left out when the budget (`[app.skills.evals] model_max_calls`) ran out. */
  notRun: number;
  score: EvalScore;
  cases: CaseResult[];
}

/**
 * The model level of trigger evals: each case as the first step of a turn in a new chat (the real system prompt with
 * its catalogue, the real tools of the configured style), asking whether the model activates the skill. The
 * activation is answered, not run, and the turn goes no further: one model call per case, at most `model_max_calls`.
 */
@Injectable()
export class ModelEvalService implements OnModuleInit {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly evals: TriggerEvalService,
    private readonly planner: TurnPlanner,
    private readonly loop: ModelLoopService,
  ) {}

  onModuleInit(): void {
    this.evals.useModelLevel((snapshot, skill, cases, model) => this.run(snapshot, skill, cases, model));
  }

  async run(
    snapshot: CatalogueSnapshot,
    skill: { name: string; digest: string | null },
    cases: readonly TriggerCase[],
    modelName: string | undefined,
  ): Promise<ModelEvalResult> {
    const model = requireModel(this.config.app, modelName);
    const budget = this.config.app.skills.evals.modelMaxCalls;
    const results: CaseResult[] = [];
    for (const entry of cases.slice(0, budget)) {
      const activated = await this.activations(snapshot, model, entry.query);
      results.push({
        ...caseResult(
          entry,
          activated.includes(skill.name),
          entry.expectSkill === undefined ? undefined : activated.includes(entry.expectSkill),
        ),
        activated,
      });
    }
    return {
      skill: skill.name,
      digest: skill.digest,
      model: model.name,
      calls: results.length,
      notRun: cases.length - results.length,
      score: scoreOf(results),
      cases: results,
    };
  }

  /** The skills the model activates in the first step of a turn with this message. */
  private async activations(snapshot: CatalogueSnapshot, model: ModelConfig, query: string): Promise<string[]> {
    const plan = this.planner.plan({ content: query, view: snapshot, model, activated: [], history: [] });
    if (plan.style === undefined)
      throw new AppError(
        ErrorCode.VALIDATION_FAILED,
        `Model '${model.name}' is offered no tools (tools are off, or the model's tools = false), so it cannot ` +
          'activate a skill; run the model level with a model that takes tools.',
        { problems: [`model: '${model.name}' takes no tools`] },
      );
    const { system } = this.planner.systemPrompt(plan);
    const activation = activationOf(plan.style);
    const activated: string[] = [];
    await this.loop.run(model, {
      system,
      messages: [{ role: 'user', content: plan.prompt }],
      tools: plan.style.definitions,
      execute: async (call, definition) => {
        const name = activation(definition.wireName, call.input);
        if (name !== undefined && !activated.includes(name)) activated.push(name);
        return NOT_RUN;
      },
      refused: () => undefined,
      maxSteps: 1,
      maxAnswerBytes: 4096,
    });
    return activated;
  }
}

/** Reads a call of the style's activation tool: the skill it names, or undefined for another tool. */
function activationOf(style: ToolStyleSet): (wireName: string, input: unknown) => string | undefined {
  const probe = '\u0000probe';
  const { tool, args } = style.activation(probe);
  const key = Object.keys(args).find((name) => args[name] === probe);
  const wireName = style.definitions.find((definition) => style.byWireName(definition.wireName) === tool)?.wireName;
  return (called, input) => {
    if (called !== wireName || key === undefined || typeof input !== 'object' || input === null) return undefined;
    const value = (input as Record<string, unknown>)[key];
    return typeof value === 'string' ? value : undefined;
  };
}
