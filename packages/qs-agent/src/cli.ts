// qs-agent's command line: flags to AgentOptions, then run() under runBin.
import { resolve } from 'node:path';
import { type Io, logLevel, parseArgs, runBin, UsageError } from '@quickloop/cli-kit';
import { allowRegistry } from '@quickloop/sandbox';
import { docsSettings, readFromFile, readPricesFile } from './config.js';
import { checkLedgerAgent } from './spend.js';
import { AGENT_NAMES, run } from './run.js';

export { VERSION } from './version.generated.js';
import { VERSION } from './version.generated.js';

export async function cli(argv: string[], io: Io): Promise<number> {
  const args = parseArgs(argv, { name: 'qs-agent', version: VERSION, usage: '$0 [--agent replay|recorded|anthropic|openai|openai-chat|gemini|claude-code|codex] [--from FILE [--from-run ID]] [--model M] [--base-url URL] [--prices FILE] [--spend-ledger SOCKET] [--docs-map URL_PREFIX=DIR]... [--cache-dir DIR [--refresh|--offline]] [--rate-limit SECONDS] [--ignore-robots] [--affordances all|none] [--probe-affordances] < events', out: io.stdout }, (y) =>
    y
      .option('agent', { type: 'string', default: 'replay', choices: [...AGENT_NAMES], describe: 'Who works on the task' })
      .option('model', { type: 'string', describe: 'Model agents: the model to ask for (defaults: anthropic claude-sonnet-4-6, openai gpt-5, gemini gemini-2.5-flash; openai-chat needs one)' })
      .option('base-url', { type: 'string', describe: 'Model agents: the API endpoint (a gateway, a proxy, a local OpenAI-compatible server)' })
      .option('prices', { type: 'string', describe: 'Model agents: a price book JSON file to use instead of the built-in one' })
      .option('stream', { type: 'boolean', default: true, describe: 'Model agents: stream responses (--no-stream asks for whole ones)' })
      .option('spend-ledger', { type: 'string', describe: 'Model agents: the Unix socket of a sweep\'s spend ledger (qs run --max-spend); each call is reserved there first' })
      .option('from', { type: 'string', describe: '--agent recorded: the saved stream whose model turns are re-driven' })
      .option('from-run', { type: 'string', describe: '--agent recorded: the run_id to re-drive, when the stream holds several runs of the task' })
      .option('docs-map', { type: 'string', array: true, default: [] as string[], describe: 'Serve docs under URL_PREFIX from the folder DIR (repeatable)' })
      .option('cache-dir', { type: 'string', describe: 'Keep docs pages in this folder, keyed by URL, with their content hashes' })
      .option('refresh', { type: 'boolean', default: false, describe: 'Re-fetch cached pages (docs.changed when one changed)' })
      .option('offline', { type: 'boolean', default: false, describe: 'Read docs from --cache-dir (and --docs-map) only, never the network' })
      .option('ignore-robots', { type: 'boolean', default: false, describe: 'Do not consult robots.txt (recorded on each docs.read)' })
      .option('rate-limit', { type: 'string', default: '1', describe: 'Minimum SECONDS between requests to one docs host' })
      .option('affordances', { type: 'string', default: 'all', choices: ['all', 'none'], describe: 'none: withhold llms.txt, llms-full.txt and .md variants (never a page on the route)' })
      .option('probe-affordances', { type: 'boolean', default: false, describe: 'Record whether the site offers llms.txt, llms-full.txt and a .md entrypoint' })
      .option('backend', { type: 'string', default: 'auto', choices: ['auto', 'bwrap', 'local'], describe: 'Sandbox backend when the input has no sandbox.ready' })
      .option('allow-registry', { type: 'string', array: true, default: [] as string[], describe: 'Also allow this registry when the sandbox is made here: a URL, HOST:PORT, or HOST (port 443) (repeatable)' })
      .option('allow-unenforced', { type: 'boolean', default: false, describe: 'Allow the local backend, which enforces nothing' })
      .option('keep', { type: 'boolean', default: false, describe: 'Mark a sandbox made here to be kept by the last stage' }),
  );
  if (args['spend-ledger'] !== undefined) checkLedgerAgent(args.agent);
  const prices = args.prices !== undefined ? readPricesFile(String(args.prices), io.cwd) : undefined;
  const from = args.from !== undefined ? readFromFile(String(args.from), io.cwd) : undefined;
  return run(
    {
      agent: args.agent,
      modelFlags: {
        ...(args.model !== undefined ? { model: String(args.model) } : {}),
        ...(args['base-url'] !== undefined ? { baseUrl: String(args['base-url']) } : {}),
        ...(prices !== undefined ? { prices } : {}),
        stream: args.stream,
        ...(from !== undefined ? { from } : {}),
        ...(args['from-run'] !== undefined ? { fromRun: String(args['from-run']) } : {}),
        ...(args['spend-ledger'] !== undefined ? { spendLedger: resolve(io.cwd, String(args['spend-ledger'])) } : {}),
      },
      docs: docsSettings(args, io.cwd),
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
