/**
 * What the server's child processes (the embedded PostgreSQL's programs, the script sandbox) take
 * from its own environment: where programs are and the time zone, nothing else. Read here, at each
 * call, because only the configuration reads `process.env`; the rest of it holds secrets (a
 * bootstrap admin key, model providers' keys) that no child has any business seeing.
 */
export function inheritedEnvironment(): { PATH?: string; TZ?: string } {
  const { PATH, TZ } = process.env;
  return { ...(PATH === undefined ? {} : { PATH }), ...(TZ === undefined ? {} : { TZ }) };
}
