/**
 * Strings PostgreSQL cannot store. A `text` or `jsonb` value may not hold U+0000, and an unpaired
 * UTF-16 surrogate has no UTF-8 form (in `jsonb` it is an error; in `text` the driver silently
 * writes U+FFFD). A client's string with either is refused (see `validation.pipe.ts`); text the
 * model produced has already been paid for, so it is stored with each such character replaced by
 * U+FFFD (REPLACEMENT CHARACTER) instead.
 */
export const REPLACEMENT_CHARACTER = '\uFFFD';

export type UnstorableCharacter = 'NUL' | 'unpaired surrogate';

/** The ES2024 string methods (Node 20 has them; the project's `lib` is ES2023). */
interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

const NUL = '\0';

/** What in `text` cannot be stored, NUL first; undefined when it can be stored as it is. */
export function unstorableCharacter(
  text: string,
  options: { allowNul?: boolean } = {},
): UnstorableCharacter | undefined {
  if (!options.allowNul && text.includes(NUL)) return 'NUL';
  if (!(text as unknown as WellFormedString).isWellFormed()) return 'unpaired surrogate';
  return undefined;
}

/** `text` with NUL and unpaired surrogates replaced by U+FFFD (the same string when there are none). */
export function toStorableText(text: string): string {
  const wellFormed = (text as unknown as WellFormedString).toWellFormed();
  return wellFormed.includes(NUL) ? wellFormed.replaceAll(NUL, REPLACEMENT_CHARACTER) : wellFormed;
}

/** The same for `text | null`, for optional columns. */
export function toStorableTextOrNull(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : toStorableText(text);
}

/**
 * A JSON value (a tool card's arguments or output: anything a model may send) with every string,
 * keys included, made storable. Values that need no change are returned as they are.
 */
export function toStorableJson<T>(value: T): T {
  return storable(value) as T;
}

function storable(value: unknown): unknown {
  if (typeof value === 'string') return toStorableText(value);
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, index) => {
      const clean = storable(item);
      if (clean !== item) (copy ??= [...value])[index] = clean;
    });
    return copy ?? value;
  }
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    let changed = false;
    const entries = Object.entries(value).map(([key, item]) => {
      const cleanKey = toStorableText(key);
      const clean = storable(item);
      if (cleanKey !== key || clean !== item) changed = true;
      return [cleanKey, clean] as const;
    });
    return changed ? Object.fromEntries(entries) : value;
  }
  return value;
}
