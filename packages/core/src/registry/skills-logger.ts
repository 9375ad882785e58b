/** Where the registry and resources report what they did (Nest's Logger fits; without one, nothing is written). */
export interface SkillsLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug(message: string): void;
}

export const SILENT_LOGGER: SkillsLogger = {
  log: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
};
