import { durationMs } from '../../../config/config-schema.js';

/** The shortest and longest interval a mirror may have: as `[app.skills.mirrors.NAME] interval` allows. */
export const MIN_MIRROR_SECONDS = 60;
export const MAX_MIRROR_SECONDS = 7 * 86_400;

/** Seconds of an interval written `15m`, within the mirror limits; undefined when it is not one. */
export function mirrorIntervalSeconds(text: string): number | undefined {
  const ms = durationMs(text);
  if (ms === undefined) return undefined;
  const seconds = ms / 1000;
  return seconds >= MIN_MIRROR_SECONDS && seconds <= MAX_MIRROR_SECONDS ? seconds : undefined;
}

/** An interval in its largest whole unit, as the configuration writes it: 900 → `15m`, 90 → `90s`. */
export function formatMirrorInterval(seconds: number): string {
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
  ] as const)
    if (seconds % size === 0) return `${seconds / size}${unit}`;
  return `${seconds}s`;
}
