// `loop detect-models [--write] [--registry PATH]`: Looper's probe of the model CLIs on PATH.
import type { Io } from '@quickloop/cli-kit/io';
import type { PyDict } from '@quickloop/loop-spec';
import type { LoopCommand } from '../command.js';
import { defaultRegistryPath, readRegistry, registryJson, which, writeRegistry } from '../registry.js';

interface Probe {
  invoke: string[];
  local: boolean;
  install: string;
}

// Looper's fixed allow-list, in its order: only these are probed, and only with `--version`.
const PROBES: ReadonlyArray<[string, Probe]> = [
  ['claude', { invoke: ['claude', '-p'], local: false, install: 'Install and authenticate the Claude CLI.' }],
  ['codex', { invoke: ['codex', 'exec'], local: false, install: 'Install and authenticate the Codex CLI.' }],
  ['gemini', { invoke: ['gemini', '-p'], local: false, install: 'Install and authenticate the Gemini CLI.' }],
  ['llm', { invoke: ['llm'], local: false, install: 'Install llm and configure a model/provider.' }],
  ['ollama', { invoke: ['ollama', 'run'], local: true, install: 'Install Ollama and pull a local model.' }],
];

const PROBE_TIMEOUT_SEC = 5;

/** Python's str.splitlines() boundaries. */
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

/**
 * `<cli> --version` with no input and a 5 s limit. `authed` is Looper's heuristic: the probe exited 0.
 * `version` is the first line of stdout, or of stderr when stdout is empty.
 */
async function probe(argv: string[], io: Io): Promise<{ authed: boolean; version: string }> {
  const { runArgv } = await import('@quickloop/loop-engine');
  const result = await runArgv(argv, { cwd: io.cwd, env: io.env as NodeJS.ProcessEnv, input: '', timeoutMs: PROBE_TIMEOUT_SEC * 1000, killGraceMs: 0 });
  if (result.timedOut) {
    return { authed: false, version: `Command '[${argv.map((a) => `'${a}'`).join(', ')}]' timed out after ${PROBE_TIMEOUT_SEC} seconds` };
  }
  if (result.spawnError !== undefined) return { authed: false, version: result.spawnError };
  // Python reads text with universal newlines.
  const universal = (s: string): string => s.replace(/\r\n?/g, '\n');
  const output = (universal(result.stdout) || universal(result.stderr)).trim();
  return { authed: result.exitCode === 0, version: output === '' ? '' : (output.split(LINE_BREAK)[0] as string) };
}

export async function detectModels(io: Io): Promise<PyDict> {
  const registry = Object.create(null) as PyDict;
  for (const [id, meta] of PROBES) {
    const cli = meta.invoke[0] as string;
    const path = which(cli, io.env, io.cwd);
    const found = path === null ? { authed: false, version: '' } : await probe([cli, '--version'], io);
    registry[id] = {
      cli,
      path,
      invoke: meta.invoke,
      available: path !== null,
      authed: found.authed,
      local: meta.local,
      probe: [cli, '--version'],
      version: found.version,
      install: meta.install,
    };
  }
  return registry;
}

export const detectModelsCommand: LoopCommand = {
  name: 'detect-models',
  summary: 'Probe the model CLIs on PATH and print registry JSON (Looper format); --write merges it into the registry',
  synopsis: 'loop detect-models [--write] [--registry PATH]',
  positionals: { min: 0, max: 0, names: '' },
  fastFlags: { write: { type: 'boolean' }, registry: { type: 'string' } },
  configure: (y) =>
    y
      .option('write', { type: 'boolean', describe: 'Merge the results into the registry' })
      .option('registry', { type: 'string', describe: 'The registry file (default: ~/.looper/models.json)' }),
  run: async (args, io) => {
    const registry = await detectModels(io);
    if (args.write === true) {
      const path = typeof args.registry === 'string' ? args.registry : defaultRegistryPath(io.env);
      const target = path.startsWith('/') ? path : `${io.cwd}/${path}`;
      writeRegistry(target, Object.assign(readRegistry(target), registry));
    }
    io.stdout.write(`${registryJson(registry)}\n`);
    return 0;
  },
};
