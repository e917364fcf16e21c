// qs-agent's command line: each bad value of the docs reader's flags, and a spend ledger the agent cannot keep, is a usage error naming the flag, before any input is read.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryIo, UsageError } from '@quickloop/cli-kit';
import { cli } from './cli.js';

const dir = mkdtempSync(join(tmpdir(), 'qs-agent-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('qs-agent docs flags', () => {
  const file = join(dir, 'a-file');
  writeFileSync(file, 'x');
  it.each([
    [['--rate-limit', '-1'], '--rate-limit -1: expected SECONDS between 0 and 3600'],
    [['--rate-limit', 'soon'], '--rate-limit soon: expected SECONDS between 0 and 3600'],
    [['--rate-limit', '1e9'], '--rate-limit 1e9: expected SECONDS between 0 and 3600'],
    [['--offline'], '--offline needs a --cache-dir (or a --docs-map) to read from'],
    [['--offline', '--refresh', '--cache-dir', dir], '--offline and --refresh contradict each other'],
    [['--cache-dir', file], `--cache-dir ${file}: not a folder that can be written`],
    [['--affordances', 'some'], 'affordances'],
    // A cap the agent cannot keep is not taken silently.
    [['--agent', 'claude-code', '--spend-ledger', join(dir, 'ledger.sock')], '--spend-ledger cannot be kept with --agent claude-code'],
    [['--agent', 'codex', '--spend-ledger', join(dir, 'ledger.sock')], '--spend-ledger cannot be kept with --agent codex'],
  ])('%j is refused', async (argv, message) => {
    const io = memoryIo({ stdin: '' });
    const run = cli(argv, io);
    await expect(run).rejects.toThrow(UsageError);
    await expect(cli(argv, memoryIo({ stdin: '' }))).rejects.toThrow(message);
  });

  it('good flags read an empty stream and exit 0', async () => {
    const io = memoryIo({ stdin: '' });
    expect(await cli(['--cache-dir', join(dir, 'cache'), '--refresh', '--rate-limit', '0.5', '--ignore-robots', '--affordances', 'none', '--probe-affordances', '-q'], io)).toBe(0);
    expect(io.out()).toBe('');
  });

  it('a free agent takes --spend-ledger and costs nothing: it never connects', async () => {
    const io = memoryIo({ stdin: '' });
    expect(await cli(['--agent', 'replay', '--spend-ledger', join(dir, 'absent.sock'), '-q'], io)).toBe(0);
  });
});
