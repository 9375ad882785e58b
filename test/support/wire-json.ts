/**
 * A parsed response body as the tests read it: JSON whose shape each assertion states. Typing every
 * body would restate the API's types in each test, so this alias is the one place the suite opts out
 * of `noExplicitAny`.
 */
// biome-ignore lint/suspicious/noExplicitAny: parsed wire JSON, asserted on field by field
export type WireJson = any;
