import { AppError, cutProblem, ErrorCode } from '@skillhost/core';
import type { ModelConfig } from '../../config/app-config.js';

/** The configured models, and the one a turn without `model` uses. */
export interface ModelSettings {
  models: Readonly<Record<string, ModelConfig>>;
  defaultModel: string | undefined;
}

export interface ConfiguredModels {
  defaultModel: string | null;
  models: { name: string; provider: string; model: string; tools: boolean }[];
}

/** The configured models a turn may name, in name order, and the one a turn without `model` uses. */
export function configuredModels(settings: ModelSettings): ConfiguredModels {
  const models = Object.values(settings.models)
    .map((model) => ({ name: model.name, provider: model.provider, model: model.model, tools: model.tools }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return { defaultModel: findModel(settings, undefined)?.name ?? null, models };
}

/** The named model (VALIDATION_FAILED when it is not configured), or the default one; undefined when there is none. */
export function findModel(settings: ModelSettings, name: string | undefined): ModelConfig | undefined {
  const models = settings.models;
  if (name === undefined) return settings.defaultModel ? ownModel(models, settings.defaultModel) : undefined;
  const model = ownModel(models, name);
  if (model === undefined) {
    const available = Object.keys(models);
    // The name as a listed problem shows it: a client may send a megabyte of it.
    const shown = cutProblem(name);
    throw new AppError(
      ErrorCode.VALIDATION_FAILED,
      `Model '${shown}' is not configured. Available: ${available.join(', ') || 'none'}`,
      { problems: [`model: '${shown}' is not configured`], available },
    );
  }
  return model;
}

/** The model a turn runs with, or MODEL_NOT_CONFIGURED. */
export function requireModel(settings: ModelSettings, name: string | undefined): ModelConfig {
  const model = findModel(settings, name);
  if (model === undefined) {
    throw new AppError(
      ErrorCode.MODEL_NOT_CONFIGURED,
      'No model is configured: add an [app.models.NAME] section (or set SKILLHOST_MODEL) to chat.',
    );
  }
  return model;
}

/** Only the configured models: `__proto__` or `constructor` must not find Object.prototype's members. */
function ownModel(models: Readonly<Record<string, ModelConfig>>, name: string): ModelConfig | undefined {
  return Object.hasOwn(models, name) ? models[name] : undefined;
}
