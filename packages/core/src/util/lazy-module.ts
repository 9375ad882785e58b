import { createRequire } from 'node:module';

/**
 * A module loaded by the first call that needs it instead of by every import of core: a dependency
 * or a data file only some functions use (what each costs an import: bench/results/core-import.md).
 * `from` is the importing file's `import.meta.url`, which relative specifiers resolve from.
 */
export function lazyModule<T>(specifier: string, from: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= createRequire(from)(specifier) as T;
    return loaded;
  };
}
