// `qs show` over the recorded streams of fixtures/streams/qs-check: show.txt beside each out.ndjson is the golden.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InputError, memoryIo } from '@quickloop/cli-kit';
import { cli } from './cli.js';

const DIR = fileURLToPath(new URL('../../../fixtures/streams/qs-check', import.meta.url));
const cases = readdirSync(DIR).filter((d) => existsSync(join(DIR, d, 'out.ndjson')));

describe('qs show', () => {
  it.each(cases)('renders %s', async (name) => {
    const io = memoryIo({ cwd: DIR });
    expect(await cli(['show', join(name, 'out.ndjson')], io)).toBe(0);
    if (process.env.QUICKLOOP_UPDATE_GOLDEN === '1') writeFileSync(join(DIR, name, 'show.txt'), io.out());
    expect(io.out()).toBe(readFileSync(join(DIR, name, 'show.txt'), 'utf8'));
  });

  it('reads stdin with -, and says when a stream has no terminal event', async () => {
    const input = readFileSync(join(DIR, 'incomplete', 'in.ndjson'), 'utf8');
    const io = memoryIo({ stdin: input });
    expect(await cli(['show', '-'], io)).toBe(0);
    expect(io.out()).toContain('(incomplete stream: no run.completed, run.failed or run.interrupted for run run-1)');
  });

  it('names the file and line of a bad line (exit 3 through runBin)', async () => {
    const io = memoryIo({ stdin: '{"v":1}\n' });
    await expect(cli(['show', '-'], io)).rejects.toThrow(/^stdin:1: not a quickloop event/);
    await expect(cli(['show', 'no-such.ndjson'], memoryIo())).rejects.toThrow('qs show: no-such.ndjson: no such file');
    await expect(cli(['show', DIR], memoryIo())).rejects.toThrow(new InputError(`qs show: ${DIR}: is a folder, not a stream file`));
  });

  it('refuses an unknown subcommand and lists the known ones', async () => {
    await expect(cli(['frobnicate'], memoryIo())).rejects.toThrow("unknown command 'frobnicate' (known: run, show)");
  });
});
