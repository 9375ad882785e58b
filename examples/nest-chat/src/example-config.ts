/** What this example app is started with (its own configuration: Skillhost reads none). */
export interface ExampleConfig {
  /** Skill folders, in precedence order. */
  skillDirectories: string[];
  /** An OpenAI-compatible endpoint (`…/v1`) and the model to ask. */
  model: { baseUrl: string; name: string; apiKey?: string };
  /** PostgreSQL for the chats' activated skills; without it they are not remembered between turns. */
  databaseUrl?: string;
}

export const EXAMPLE_CONFIG = Symbol('EXAMPLE_CONFIG');
