import { isIP } from 'node:net';

export interface HostCheckOptions {
  /** The address the server listens on (`app.host`). */
  listenHost: string;
  /** `[app.http] allowed_hosts`: more names (or addresses) that may appear in `Host`. */
  allowedHosts: readonly string[];
}

/**
 * Which `Host` headers a server without authentication answers, against DNS rebinding: a web page
 * on `evil.example` that re-points its own name at 127.0.0.1 reaches the server with
 * `Host: evil.example`. Accepted: the listening address, `localhost`, the configured names, and
 * loopback addresses; on a wildcard address (0.0.0.0, ::) any IP address, since a rebinding
 * attack needs a name of the attacker's. The port is not compared (the attacker's page uses the
 * same one).
 */
export function createHostCheck(options: HostCheckOptions): (hostHeader: string | undefined) => boolean {
  const names = new Set(['localhost', hostnameOf(options.listenHost), ...options.allowedHosts.map(hostnameOf)]);
  const wildcard = isWildcardAddress(hostnameOf(options.listenHost));
  names.delete('');
  return (hostHeader) => {
    if (hostHeader === undefined) return false;
    const name = hostnameOf(hostHeader);
    if (names.has(name)) return true;
    const family = isIP(name);
    if (family === 0) return false;
    return wildcard || isLoopbackAddress(name, family);
  };
}

/**
 * The host part of a `Host` header or configured name, lower-case, without port, brackets or a
 * trailing dot: `[::1]:3000` → `::1`, `LocalHost.:80` → `localhost`.
 */
export function hostnameOf(host: string): string {
  let name = host.trim().toLowerCase();
  if (name.startsWith('[')) {
    const end = name.indexOf(']');
    name = end < 0 ? name.slice(1) : name.slice(1, end);
  } else if (name.indexOf(':') === name.lastIndexOf(':')) {
    // One colon at most: `name:port`. More is a bare IPv6 address (as configured, e.g. `::1`).
    const colon = name.indexOf(':');
    if (colon >= 0) name = name.slice(0, colon);
  }
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

function isWildcardAddress(name: string): boolean {
  return name === '0.0.0.0' || (isIP(name) === 6 && /^[0:]+$/.test(name));
}

function isLoopbackAddress(address: string, family: number): boolean {
  if (family === 4) return address.startsWith('127.');
  const mapped = address.startsWith('::ffff:') ? address.slice(7) : undefined;
  if (mapped !== undefined && isIP(mapped) === 4) return mapped.startsWith('127.');
  return /^(0{0,4}:){2,7}0{0,3}1$|^::1$/.test(address);
}
