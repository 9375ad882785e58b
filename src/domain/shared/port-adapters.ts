import type { ModuleMetadata } from '@nestjs/common';

/**
 * What the app gives a domain module: the modules that provide its ports (the database's stores, metrics), so the
 * domain never imports the adapters themselves.
 */
export interface PortAdapters {
  imports: NonNullable<ModuleMetadata['imports']>;
}
