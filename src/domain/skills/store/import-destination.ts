import { type LookupAddress, lookup } from 'node:dns';
import { lookup as lookupAll } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { AppError, ErrorCode } from '@skillhost/core';

/**
 * Where a member's import may make this server connect. A member names the URL, and the server
 * fetches it from inside the network: without a check, `http://169.254.169.254/` (cloud metadata),
 * `http://localhost:5432/` or a host on the office network would be read on their behalf (server-side
 * request forgery, https://owasp.org/www-community/attacks/Server_Side_Request_Forgery). So a member's
 * destination must resolve to public addresses only, unless an operator lists its host in
 * `[app.skills.import] member_hosts`. The check is made on the address the connection really uses
 * (the index reader's connect-time lookup, git's pinned address), so a name that resolves to a public
 * address when checked and a private one when connecting (DNS rebinding) gets nowhere.
 */

/** How a member's destinations are checked; an admin's or the CLI's imports have none. */
export interface DestinationPolicy {
  /** `[app.skills.import] member_hosts`: hosts let through whatever they resolve to. */
  allowedHosts: readonly string[];
}

/** A checked destination: the addresses to connect to (git is pinned to the first). */
export interface CheckedDestination {
  host: string;
  port: number;
  addresses: string[];
}

/** The address ranges a member may not reach, by why (IPv4-mapped IPv6 addresses fall in their IPv4 range). */
const FORBIDDEN_RANGES: readonly (readonly [reason: string, network: string, prefix: number])[] = [
  ['loopback', '127.0.0.0', 8],
  ['loopback', '::1', 128],
  ['private', '10.0.0.0', 8],
  ['private', '172.16.0.0', 12],
  ['private', '192.168.0.0', 16],
  ['private', 'fc00::', 7],
  ['link-local', '169.254.0.0', 16],
  ['link-local', 'fe80::', 10],
  ['unspecified', '0.0.0.0', 8],
  ['unspecified', '::', 128],
  ['multicast', '224.0.0.0', 4],
  ['multicast', 'ff00::', 8],
];
const RANGES = FORBIDDEN_RANGES.map(([reason, network, prefix]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, isIP(network) === 6 ? 'ipv6' : 'ipv4');
  return { reason, list };
});

/** Why a member may not connect to `address` (`loopback`, `private`, …), or undefined when it is public. */
export function forbiddenReason(address: string): string | undefined {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  return RANGES.find((range) => range.list.check(address, family))?.reason;
}

/**
 * Whether `member_hosts` lets `host` (a URL's hostname, IPv6 in brackets) on `port` through: `name` on any port,
 * `name:port` on that one, `*.domain` for the domain's subdomains (not the domain itself).
 */
export function isAllowedHost(host: string, port: number, allowedHosts: readonly string[]): boolean {
  const wanted = host.toLowerCase();
  return allowedHosts.some((entry) => {
    const { name, port: entryPort } = splitHostPort(entry.toLowerCase());
    if (entryPort !== undefined && entryPort !== port) return false;
    return name.startsWith('*.') ? wanted.endsWith(name.slice(1)) : wanted === name;
  });
}

function splitHostPort(entry: string): { name: string; port: number | undefined } {
  const colon = entry.lastIndexOf(':');
  // `[::1]` and `[::1]:443`: the port follows the bracket.
  if (colon === -1 || (entry.startsWith('[') && colon < entry.indexOf(']'))) return { name: entry, port: undefined };
  return { name: entry.slice(0, colon), port: Number.parseInt(entry.slice(colon + 1), 10) };
}

/** The port a URL's connection goes to. */
export function portOf(url: URL): number {
  if (url.port !== '') return Number.parseInt(url.port, 10);
  return url.protocol === 'https:' ? 443 : 80;
}

/**
 * Checks a member's destination before any connection: undefined when it needs no check (no policy, a listed host);
 * else its addresses, all public. IMPORT_SOURCE_FORBIDDEN for one that is not; IMPORT_SOURCE_UNREACHABLE for a name
 * that does not resolve.
 */
export async function checkDestination(
  url: URL,
  policy: DestinationPolicy | undefined,
): Promise<CheckedDestination | undefined> {
  const port = portOf(url);
  if (policy === undefined || isAllowedHost(url.hostname, port, policy.allowedHosts)) return undefined;
  const host = bare(url.hostname);
  let addresses: string[];
  if (isIP(host) !== 0) addresses = [host];
  else {
    try {
      addresses = (await lookupAll(host, { all: true, verbatim: true })).map((found) => found.address);
    } catch (error) {
      throw new AppError(
        ErrorCode.IMPORT_SOURCE_UNREACHABLE,
        `Cannot import from ${url.origin}: the name '${host}' does not resolve ` +
          `(${(error as { code?: string }).code ?? 'no address'}).`,
        { source: url.href },
      );
    }
  }
  for (const address of addresses) assertPublic(host, address, url.hostname);
  return { host, port, addresses };
}

/** IMPORT_SOURCE_FORBIDDEN unless `address` is public. */
export function assertPublic(host: string, address: string, listedAs = host): void {
  const reason = forbiddenReason(address);
  if (reason !== undefined) throw forbiddenDestination(listedAs, reason, address);
}

/**
 * A `lookup` for `net.connect` (undici's `connect.lookup`) that refuses a name resolving to any non-public address,
 * so the address checked is the address connected to. Its error is IMPORT_SOURCE_FORBIDDEN, as the fetch's cause.
 */
export function publicOnlyLookup(
  hostname: string,
  options: { all?: boolean; family?: number | string },
  callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
): void {
  lookup(hostname, { ...options, all: true, verbatim: true } as { all: true }, (error, addresses) => {
    if (error !== null) return callback(error, []);
    const refused = addresses.find((found) => forbiddenReason(found.address) !== undefined);
    if (refused !== undefined)
      return callback(forbiddenDestination(hostname, forbiddenReason(refused.address)!, refused.address), []);
    if (options.all === true) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}

/** A hostname without an IPv6 literal's brackets. */
function bare(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

export function forbiddenDestination(host: string, reason: string, address: string): AppError {
  return new AppError(
    ErrorCode.IMPORT_SOURCE_FORBIDDEN,
    `Cannot import from '${host}': it resolves to a ${reason} address, which a member's import may not reach. Import ` +
      `from a public host, ask an admin to import it, or ask them to add '${host}' to [app.skills.import] ` +
      'member_hosts.',
    { host, reason },
    // The address is the network's own business: an admin sees it, a member sees why.
    { address },
  );
}
