import type { CodeSkillInput, CodeSkillToolOutcome } from './code-skill.types.js';

/**
 * The messages between the server and `code-skill.worker.mjs`. The worker is plain JavaScript (it
 * runs outside any TypeScript loader); it checks itself against these types with `@ts-check`.
 */

/** `workerData`: what one worker does before it is terminated. */
export type WorkerTask =
  | { kind: 'execute'; modulePath: string; ctx: CodeSkillInput }
  | { kind: 'score'; modulePath: string; query: string };

/** Worker → server. */
export type WorkerMessage =
  | { type: 'llm'; id: number; prompt: string; system?: string }
  | { type: 'tool'; id: number; name: string; args: unknown }
  /** `execute` or `canHandle` returned (`value`) or threw (`error`); `value` is checked by the server. */
  | { type: 'done'; ok: true; value: unknown }
  | { type: 'done'; ok: false; error: string };

/** Server → worker: the answer to an `llm` or `tool` request. */
export type ServerReply =
  | { type: 'reply'; id: number; ok: true; value: string | CodeSkillToolOutcome }
  | { type: 'reply'; id: number; ok: false; error: string };
