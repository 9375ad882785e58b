/** @skillhost/sandbox: skill scripts in a bubblewrap sandbox, and code skills in worker threads. */
export * from './allowed-tools.js';
export * from './capped-output.js';
export * from './code/code-skill-runner.js';
export * from './code/in-process-runner.js';
export * from './command-line.js';
export * from './interpreter.js';
export * from './sandbox-slots.js';
export * from './script-file.js';
export * from './script-sandbox.js';
