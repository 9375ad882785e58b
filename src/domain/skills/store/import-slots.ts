/**
 * A counting semaphore for imports on one instance: a route's import takes a slot or is refused at once (a caller
 * retries; nothing queues without bound), a mirror's run waits for one (mirrors run one at a time per instance, so
 * at most a few wait).
 */
export class ImportSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly max: number) {}

  /** A slot's release, or undefined when all are taken. */
  tryAcquire(): (() => void) | undefined {
    if (this.running >= this.max) return undefined;
    this.running++;
    return this.releaser();
  }

  /** A slot's release, once one is free. */
  async acquire(): Promise<() => void> {
    const now = this.tryAcquire();
    if (now !== undefined) return now;
    await new Promise<void>((resolve) => this.waiting.push(resolve));
    // The slot was handed over by release: `running` already counts it.
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.running--;
    };
  }
}
