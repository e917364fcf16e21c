// `qs show` over the recorded streams of fixtures/streams/qs-check: show.txt beside each out.ndjson is the golden.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InputError, memoryIo } from '@quickloop/cli-kit';
import { cli } from './cli.js';
import { COMMANDS } from './commands/index.js';

const DIR = fileURLToPath(new URL('../../../fixtures/streams/qs-check', import.meta.url));
const cases = readdirSync(DIR).filter((d) => existsSync(join(DIR, d, 'out.ndjson')));

describe('qs show', () => {
  it.each(cases)('renders %s', async (name) => {
    const io = memoryIo({ cwd: DIR });
    expect(await cli(['show', join(name, 'out.ndjson')], io)).toBe(0);
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(join(DIR, name, 'show.txt'), io.out());
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
    // Every command, whichever were added since: the list is the table's, not a copy of it.
    await expect(cli(['frobnicate'], memoryIo())).rejects.toThrow(`unknown command 'frobnicate' (known: ${COMMANDS.map((c) => c.name).join(', ')})`);
    expect(COMMANDS.map((c) => c.name)).toEqual(expect.arrayContaining(['run', 'results', 'diff', 'show', 'merge']));
  });
});

describe('qs show over several runs', () => {
  it('ends with each task\'s pass rate from the results fold, and calls a task that passed and failed flaky', async () => {
    const passed = readFileSync(join(DIR, 'passed', 'out.ndjson'), 'utf8');
    const again = passed.replaceAll('"run-1"', '"run-2"');
    // The docs-gap run under the passed run's task name: one task that both passed and failed.
    const gap = readFileSync(join(DIR, 'docs-gap', 'out.ndjson'), 'utf8').replaceAll('"run-1"', '"run-3"').replaceAll('greeter-missing-step', 'greeter-hello');
    const io = memoryIo({ stdin: passed + again + gap });
    expect(await cli(['show', '-'], io)).toBe(0);
    expect(io.out().trim().split('\n').at(-1)).toBe('greeter-hello: 67% [2/3 evidential of 3 runs] (95% CI 21%–94%) FLAKY');
    const one = memoryIo({ stdin: passed });
    await cli(['show', '-'], one);
    expect(one.out()).not.toContain('evidential');
  });
});
