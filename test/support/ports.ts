import { createServer } from 'node:net';

/**
 * A TCP port free on 127.0.0.1 right now, for servers a test starts that cannot bind port 0
 * themselves (an embedded PostgreSQL, a child process told its port in its config). Chosen at
 * random below Linux's ephemeral range (32768–60999), where any outgoing connection's source port
 * could take it, so two test runs on one machine do not pick the same one.
 *
 * Jest's parallel workers each take ports from a slice of their own (by JEST_WORKER_ID): a port is
 * handed out before the server it is for binds it, so two workers drawing from one range could both
 * find it free and hand it out; the set below keeps one worker from doing so twice.
 */
const FIRST = 20_000;
const RANGE = 12_000;
const SLICES = 8;
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  const { first, size } = slice();
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = first + Math.floor(Math.random() * size);
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`No free port found on 127.0.0.1 between ${first} and ${first + size} after 50 tries`);
}

/** This worker's ports: the whole range outside Jest, one of SLICES equal parts inside it. */
function slice(): { first: number; size: number } {
  const worker = Number.parseInt(process.env.JEST_WORKER_ID ?? '', 10);
  if (!Number.isInteger(worker) || worker < 1) return { first: FIRST, size: RANGE };
  const size = Math.floor(RANGE / SLICES);
  return { first: FIRST + ((worker - 1) % SLICES) * size, size };
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
