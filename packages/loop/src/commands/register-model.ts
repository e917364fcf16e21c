// `loop register-model ID --invoke TOKEN... [--model M] [--local] [--authed] [--notes TEXT] [--registry PATH]`.
import { UsageError } from '@quickloop/cli-kit/errors';
import { shlexSplit, ShlexError, SpecError, type PyDict } from '@quickloop/loop-spec';
import type { LoopCommand } from '../command.js';
import { defaultRegistryPath, readRegistry, rejectSecretMaterial, which, writeRegistry } from '../registry.js';

function strings(value: unknown): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}

export const registerModelCommand: LoopCommand = {
  name: 'register-model',
  summary: 'Record how to invoke a model CLI in the registry (Looper format); never credentials',
  synopsis: 'loop register-model ID --invoke TOKEN... [--model M] [--local] [--authed] [--notes TEXT] [--registry PATH]',
  positionals: { min: 1, max: 1, names: 'ID' },
  configure: (y) =>
    y
      .option('invoke', { type: 'array', string: true, describe: 'The argv, as tokens or one quoted string ("claude -p")' })
      .option('model', { type: 'string', default: '', describe: 'The model name, for display' })
      .option('local', { type: 'boolean', describe: 'The CLI runs on this machine (no egress)' })
      .option('authed', { type: 'boolean', describe: 'The CLI is already authenticated' })
      .option('notes', { type: 'string', default: '', describe: 'Free text (refused if it looks like a credential)' })
      .option('registry', { type: 'string', describe: 'The registry file (default: ~/.looper/models.json)' }),
  run: async (args, io) => {
    if (args.invoke === undefined) throw new UsageError('--invoke is required (see loop register-model --help)');
    let invoke = strings(args.invoke);
    if (invoke.length === 0) throw new SpecError('--invoke needs at least one command token');
    // A flag-like token cannot follow --invoke as its own word, so one quoted string is split shell-style.
    if (invoke.length === 1) {
      try {
        invoke = shlexSplit(invoke[0] as string);
      } catch (error) {
        if (error instanceof ShlexError) throw new SpecError(`--invoke is not a valid shell-style string: ${error.message}`);
        throw error;
      }
      if (invoke.length === 0 || (invoke[0] as string).trim() === '') throw new SpecError('--invoke must not be empty');
    }
    rejectSecretMaterial(invoke, '--invoke');
    const notes = typeof args.notes === 'string' ? args.notes : '';
    if (notes !== '') rejectSecretMaterial([notes], '--notes');
    const given = typeof args.registry === 'string' ? args.registry : defaultRegistryPath(io.env);
    const target = given.startsWith('/') ? given : `${io.cwd}/${given}`;
    const registry = readRegistry(target);
    const id = args.positionals[0] as string;
    const entry: PyDict = {
      cli: invoke[0] as string,
      invoke,
      available: which(invoke[0] as string, io.env, io.cwd) !== null,
      authed: args.authed === true,
      local: args.local === true,
      model: typeof args.model === 'string' ? args.model : '',
      notes,
    };
    registry[id] = entry;
    writeRegistry(target, registry);
    if (args.quiet !== true) io.stderr.write(`Registered ${id} in ${given}\n`);
    return 0;
  },
};
