import type { LanguageModel } from 'ai';
import type { ModelConfig } from '../../../config/app-config.js';

/** The configured models as AI SDK model objects (infra/llm builds them with the providers' SDKs). */
export interface LanguageModels {
  get(config: ModelConfig): LanguageModel;
}

export const LANGUAGE_MODELS = Symbol('LANGUAGE_MODELS');
