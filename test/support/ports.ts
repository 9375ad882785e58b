import { createServer } from 'node:net';

/**
 * A TCP port free on 127.0.0.1 right now, for servers a test starts that cannot bind port 0
 * themselves (an embedded PostgreSQL, a child process told its port in its config). Chosen at
 * random below Linux's ephemeral range (32768–60999), where any outgoing connection's source port
 * could take it, so two test runs on one machine do not pick the same one.
 */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    // Two servers a test starts together are each handed a port before either binds it.
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('No free port found on 127.0.0.1 between 20000 and 32000 after 50 tries');
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
