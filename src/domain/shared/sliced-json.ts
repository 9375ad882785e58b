/**
 * JSON text of an object one of whose members is a long array, written a few hundred items at a
 * time with a turn of the event loop between slices: serialising thousands of skills in one go
 * blocks every other request for tens of milliseconds. The text is what `JSON.stringify` gives.
 */
export async function stringifyInSlices<T>(
  object: Record<string, unknown>,
  arrayKey: string,
  sliceMs = 4,
  present: (item: T) => unknown = (item) => item,
): Promise<string> {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(object)) {
    if (value === undefined || typeof value === 'function') continue;
    const member =
      key === arrayKey && Array.isArray(value)
        ? await arrayInSlices(value as T[], sliceMs, present)
        : JSON.stringify(value);
    parts.push(`${JSON.stringify(key)}:${member}`);
  }
  return `{${parts.join(',')}}`;
}

const ITEMS_PER_CHECK = 100;

/**
 * `present` turns each item into what is written (so thousands of response objects are not all built in one go either).
 */
async function arrayInSlices<T>(items: readonly T[], sliceMs: number, present: (item: T) => unknown): Promise<string> {
  const written: string[] = [];
  let sliceStarted = performance.now();
  for (let start = 0; start < items.length; start += ITEMS_PER_CHECK) {
    for (const item of items.slice(start, start + ITEMS_PER_CHECK))
      written.push(JSON.stringify(present(item)) ?? 'null');
    if (performance.now() - sliceStarted >= sliceMs) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStarted = performance.now();
    }
  }
  return `[${written.join(',')}]`;
}
