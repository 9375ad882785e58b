/**
 * Where chat turns and tool calls are counted (the server's MetricsModule provides it): a token and
 * a port of the chat's own, so chat code does not load prom-client.
 */
export const CHAT_METRICS = Symbol('SKILLHOST_CHAT_METRICS');

/**
 * Where a turn's time went: waiting for the model, and Skillhost's own overhead (everything else),
 * of which the database statements and the skill tools are broken out.
 */
export interface TurnTiming {
  totalMs: number;
  modelMs: number;
  overheadMs: number;
  dbMs: number;
  skillsMs: number;
}

export interface ChatMetrics {
  /** A turn that was answered and stored, by the model it asked for. */
  observeTurn(requestedModel: string | undefined, timing: TurnTiming): void;
  observeFailedTurn(requestedModel: string | undefined, error: unknown): void;
  observeToolCall(tool: string, status: 'ok' | 'error', durationMs: number): void;
  observeActivation(skill: string): void;
}
