/**
 * Where the registry reports each snapshot (the server's MetricsModule provides it). A token and a
 * port of the skills' own, not the MetricsService class, so that an app embedding Skillhost does not
 * load prom-client and the server's error filter just to leave it out.
 */
export const SKILLS_METRICS = Symbol('SKILLHOST_SKILLS_METRICS');

/** What a reload produced, as far as metrics care (a `CatalogueSnapshot`). */
export interface SnapshotFacts {
  durationMs: number;
  skills: { size: number };
  invalid: readonly unknown[];
  collisions: readonly unknown[];
}

export interface SkillsMetrics {
  /** After each reload: the snapshot's facts, and how to measure its catalogue when metrics are read. */
  observeSkillsReload(snapshot: SnapshotFacts, catalogueBytes: () => number): void;
}
