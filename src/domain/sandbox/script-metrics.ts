/**
 * Where the sandbox's use is counted (the server's MetricsModule provides it), so the sandbox does not load
 * prom-client.
 */
export interface ScriptMetrics {
  /** `running`: read at each scrape, the scripts running now. */
  observeScripts(running: () => number): void;
  /** A script refused because a concurrency cap (of the turn, the user or the instance) was full. */
  observeScriptsRefused(limit: 'turn' | 'user' | 'instance'): void;
}

export const SCRIPT_METRICS = Symbol('SKILLHOST_SCRIPT_METRICS');
