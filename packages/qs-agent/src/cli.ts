// qs-agent's command line: flags to AgentOptions, then run() under runBin.
import { logLevel, parseArgs, runBin, type Io } from '@quickloop/cli-kit';
import { allowRegistry } from '@quickloop/sandbox';
import { parseDocsMap } from './docs/docs-map.js';
import { AGENTS, run } from './run.js';

export { VERSION } from './version.generated.js';
import { VERSION } from './version.generated.js';

export async function cli(argv: string[], io: Io): Promise<number> {
  const args = parseArgs(argv, { name: 'qs-agent', version: VERSION, usage: '$0 [--agent replay] [--docs-map URL_PREFIX=DIR]... < events', out: io.stdout }, (y) =>
    y
      .option('agent', { type: 'string', default: 'replay', choices: Object.keys(AGENTS), describe: 'Who works on the task' })
      .option('docs-map', { type: 'string', array: true, default: [] as string[], describe: 'Serve docs under URL_PREFIX from the folder DIR (repeatable)' })
      .option('backend', { type: 'string', default: 'auto', choices: ['auto', 'bwrap', 'local'], describe: 'Sandbox backend when the input has no sandbox.ready' })
      .option('allow-registry', { type: 'string', array: true, default: [] as string[], describe: 'Also allow this registry when the sandbox is made here: a URL, HOST:PORT, or HOST (port 443) (repeatable)' })
      .option('allow-unenforced', { type: 'boolean', default: false, describe: 'Allow the local backend, which enforces nothing' })
      .option('keep', { type: 'boolean', default: false, describe: 'Mark a sandbox made here to be kept by the last stage' }),
  );
  return run(
    {
      agent: args.agent,
      docsMaps: args['docs-map'].map((spec) => parseDocsMap(String(spec), io.cwd)),
      backend: args.backend as 'auto' | 'bwrap' | 'local',
      allowUnenforced: args['allow-unenforced'],
      keep: args.keep,
      allowRegistries: args['allow-registry'].map((h) => allowRegistry(String(h))),
      level: logLevel(args),
    },
    io,
  );
}

export async function main(): Promise<void> {
  await runBin(cli, { name: 'qs-agent', family: 'qs' });
}
