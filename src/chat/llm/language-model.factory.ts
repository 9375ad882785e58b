import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import type { ModelConfig } from '../../config/app-config.js';
import { nodeFetch } from './node-fetch.js';

/** One AI SDK model object per configured model, built on first use. */
export class LanguageModelFactory {
  private readonly cache = new Map<string, LanguageModel>();

  get(config: ModelConfig): LanguageModel {
    let model = this.cache.get(config.name);
    if (model === undefined) {
      model = build(config);
      this.cache.set(config.name, model);
    }
    return model;
  }
}

function build(config: ModelConfig): LanguageModel {
  switch (config.provider) {
    case 'openai-compatible':
      return createOpenAICompatible({ name: config.name, baseURL: config.baseUrl, apiKey: config.apiKey, fetch: nodeFetch }).chatModel(config.model);
    case 'anthropic':
      return createAnthropic({ baseURL: config.baseUrl, apiKey: config.apiKey ?? '', fetch: nodeFetch })(config.model);
  }
}
