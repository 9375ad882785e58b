import { isIP } from 'node:net';
import type { AuthMode } from '../../config/app-config.js';

/** The mode in force: `auto` is `none` on a loopback-only address and `api_key` on any other. */
export function effectiveAuthMode(mode: AuthMode, host: string): 'api_key' | 'none' {
  if (mode === 'auto') return isLoopbackHost(host) ? 'none' : 'api_key';
  return mode;
}

/** 127.0.0.0/8, ::1 (also IPv4-mapped) and `localhost`; `0.0.0.0`, `::` and names are not. */
export function isLoopbackHost(host: string): boolean {
  const bare = host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  if (bare === 'localhost') return true;
  const mapped = bare.startsWith('::ffff:') ? bare.slice(7) : bare;
  if (isIP(mapped) === 4) return mapped.startsWith('127.');
  return isIP(bare) === 6 && /^(0{0,4}:){2,7}0{0,3}1$|^::1$/.test(bare);
}
