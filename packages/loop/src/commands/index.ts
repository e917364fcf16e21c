// Every `loop` subcommand, in the order `loop --help` lists them; each module is imported on demand.
import type { CommandEntry } from '../command.js';

export const COMMANDS: readonly CommandEntry[] = [
  {
    name: 'compile',
    summary: 'Compile loop.yaml to loop.resolved.json (and LOOP.md, RUN_IN_SESSION.md on request)',
    load: async () => (await import('./compile.js')).compileCommand,
  },
  {
    name: 'lint',
    summary: 'Check a loop.yaml for specs that will not behave the way they read',
    load: async () => (await import('./lint.js')).lintCommand,
  },
  {
    name: 'session-prompt',
    summary: "Render RUN_IN_SESSION.md from a loop.resolved.json (Looper's text)",
    load: async () => (await import('./session-prompt.js')).sessionPromptCommand,
  },
  {
    name: 'run',
    summary: 'Run a loop (loop.resolved.json or loop.yaml) under the runner contract; same as loop-run',
    load: async () => (await import('./run.js')).runCommand,
  },
  {
    name: 'gate',
    summary: 'One gate round (plan|delivery) on an artifact, or on artifact.written events from stdin; same as loop-gate',
    load: async () => (await import('./gate.js')).gateCommand,
  },
  {
    name: 'detect-models',
    summary: 'Probe the model CLIs on PATH; print registry JSON, or merge it into the registry with --write',
    load: async () => (await import('./detect-models.js')).detectModelsCommand,
  },
  {
    name: 'register-model',
    summary: 'Record how to invoke a model CLI in the model registry (never credentials)',
    load: async () => (await import('./register-model.js')).registerModelCommand,
  },
];
