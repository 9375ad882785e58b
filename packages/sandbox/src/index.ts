/** @skillhost/sandbox: skill scripts in a bubblewrap sandbox. */
export * from './allowed-tools.js';
export * from './capped-output.js';
export * from './command-line.js';
export * from './interpreter.js';
export * from './script-file.js';
