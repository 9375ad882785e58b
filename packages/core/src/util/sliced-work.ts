/**
 * Work written as a generator that yields between steps: run straight through (start-up, the
 * CLI), or in slices that give the event loop a turn whenever they have run for `sliceMs` (a
 * reload while requests are served). Either way the result is the same.
 */
export function runThrough<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

export async function runInSlices<T>(steps: Generator<void, T>, sliceMs = 4): Promise<T> {
  let sliceStarted = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStarted >= sliceMs) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStarted = performance.now();
    }
  }
}
