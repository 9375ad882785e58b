/** The part of Fastify's reply a route that answers a text body itself (`@Res()`) uses. */
export interface TextReply {
  header(name: string, value: string): TextReply;
  headers(values: Record<string, string>): TextReply;
  send(payload: string | Buffer): unknown;
}
