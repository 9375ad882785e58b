import type { MetricsService } from '../ops/metrics.service.js';

/**
 * Where the registry reports each snapshot (the server's MetricsModule provides it). A token, not
 * the MetricsService class, so that an app embedding Skillhost does not load prom-client and the
 * server's error filter just to leave it out.
 */
export const SKILLS_METRICS = Symbol('SKILLHOST_SKILLS_METRICS');

export type SkillsMetrics = Pick<MetricsService, 'observeSkillsReload'>;
