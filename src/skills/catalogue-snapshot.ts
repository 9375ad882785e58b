import type { CatalogueFormat, SkillsConfig, ValidationMode } from '../config/app-config.js';
import { renderCatalogue } from './catalogue-renderer.js';
import { compareByName } from './skill-order.js';
import type { DiscoveryResult } from './skill-discovery.js';
import type { DirectoryReport, InvalidSkill, SkillCollision, SkillRecord } from './skill.types.js';

/**
 * Everything one scan found, frozen. The registry swaps whole snapshots, so a request sees one
 * scan or the next, never half of one; catalogues are rendered here once, not per request.
 */
export interface CatalogueSnapshot {
  readonly scannedAt: string;
  readonly durationMs: number;
  readonly mode: ValidationMode;
  /** Loaded skills, by name, iterated in name order. */
  readonly skills: ReadonlyMap<string, SkillRecord>;
  readonly invalid: readonly InvalidSkill[];
  readonly collisions: readonly SkillCollision[];
  readonly excluded: readonly { readonly name: string; readonly path: string }[];
  readonly warnings: readonly string[];
  readonly directories: readonly DirectoryReport[];
  /** The catalogue in a format; the configured one is rendered with the snapshot, others on first use. */
  catalogue(format: CatalogueFormat): string;
}

export function buildSnapshot(
  result: DiscoveryResult,
  config: Pick<SkillsConfig, 'validation' | 'includeLocation' | 'catalogueFormat'>,
  timing: { scannedAt: Date; durationMs: number },
): CatalogueSnapshot {
  const sorted = [...result.skills].sort(compareByName);
  const entries = sorted.map((skill) => ({ name: skill.name, description: skill.description, location: skill.skillFile }));
  const rendered = new Map<CatalogueFormat, string>();
  const catalogue = (format: CatalogueFormat) => {
    let text = rendered.get(format);
    if (text === undefined) {
      text = renderCatalogue(entries, format, config.includeLocation);
      rendered.set(format, text);
    }
    return text;
  };
  catalogue(config.catalogueFormat);
  return Object.freeze({
    scannedAt: timing.scannedAt.toISOString(),
    durationMs: timing.durationMs,
    mode: config.validation,
    skills: new Map(sorted.map((skill) => [skill.name, skill])),
    invalid: Object.freeze(result.invalid),
    collisions: Object.freeze(result.collisions),
    excluded: Object.freeze(result.excluded),
    warnings: Object.freeze(result.warnings),
    directories: Object.freeze(result.directories),
    catalogue,
  });
}
