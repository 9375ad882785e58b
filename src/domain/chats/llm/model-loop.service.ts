import { Inject, Injectable } from '@nestjs/common';
import type { ModelConfig } from '../../../config/app-config.js';
import { LANGUAGE_MODELS, type LanguageModels } from './language-models.js';
import { completeOnce, type LoopTool, runToolLoop, type ToolLoopRequest, type ToolLoopResult } from './tool-loop.js';

/** A loop's request without the model, which the loop takes from the configured model. */
export type ModelLoopRequest<T extends LoopTool = LoopTool> = Omit<
  ToolLoopRequest<T>,
  'model' | 'modelName' | 'timeoutMs' | 'maxRetries'
>;

/**
 * The configured models, as a turn calls them: the tool loop, and one completion (a code skill's `ctx.llm.complete`).
 */
export interface ModelLoop {
  run<T extends LoopTool>(model: ModelConfig, request: ModelLoopRequest<T>): Promise<ToolLoopResult>;
  complete(model: ModelConfig, prompt: string, system: string | undefined): Promise<string>;
}

/** The AI SDK behind ModelLoop, with each model's timeout and retries. */
@Injectable()
export class ModelLoopService implements ModelLoop {
  constructor(@Inject(LANGUAGE_MODELS) private readonly models: LanguageModels) {}

  run<T extends LoopTool>(model: ModelConfig, request: ModelLoopRequest<T>): Promise<ToolLoopResult> {
    return runToolLoop({
      ...request,
      model: this.models.get(model),
      modelName: model.name,
      timeoutMs: model.timeoutMs,
      maxRetries: model.maxRetries,
    });
  }

  complete(model: ModelConfig, prompt: string, system: string | undefined): Promise<string> {
    return completeOnce({
      model: this.models.get(model),
      modelName: model.name,
      prompt,
      system,
      timeoutMs: model.timeoutMs,
      maxRetries: model.maxRetries,
    });
  }
}
