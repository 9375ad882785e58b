import type { Response } from 'superagent';

/** Parses a server-sent-events body into `{event, data}` pairs, data JSON-decoded. */
export function parseSse(body: string): { event: string; data: unknown }[] {
  return body
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message';
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { event, data: JSON.parse(data) };
    });
}

/** A supertest body parser that keeps a streamed response as one string (for `.parse(...)`). */
export function collectText(response: Response, callback: (error: Error | null, body: string) => void): void {
  // At run time superagent hands the raw Node response stream to a custom parser.
  const stream = response as unknown as NodeJS.ReadableStream;
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  stream.on('end', () => callback(null, text));
}
