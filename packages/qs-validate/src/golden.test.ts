// Golden runs: each folder of fixtures/golden/qs-validate holds args, out.ndjson, err.txt and exit; a new folder is a new test.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { memoryIo } from '@quickloop/cli-kit';
import { afterAll, describe, expect, it } from 'vitest';
import { parseOptions } from './cli.js';
import { run } from './run.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const GOLDEN = join(ROOT, 'fixtures/golden/qs-validate');
const UPDATE = process.env.QUICKLOOP_UPDATE_GOLDEN === '1';

// A machine with no npm, pip or apt of its own: the registries come from the environment only, so
// the output is the same on every machine.
const machine = mkdtempSync(join(tmpdir(), 'qs-golden-machine-'));
afterAll(() => rmSync(machine, { recursive: true, force: true }));
const env = { NO_COLOR: '1', HOME: machine, npm_config_registry: 'https://npm.golden.test/', PIP_INDEX_URL: 'https://pip.golden.test/simple' };

/** Runs one case in-process with the pinned clock and sequential ids. */
export async function runCase(args: string[]): Promise<{ out: string; err: string; exit: number }> {
  const io = memoryIo({ env, cwd: ROOT });
  const exit = await run({ ...(await parseOptions(args, io)), registryPaths: { root: machine, execPath: join(machine, 'bin', 'node') } }, io);
  return { out: io.out(), err: io.err(), exit };
}

const cases = readdirSync(GOLDEN).filter((d) => existsSync(join(GOLDEN, d, 'args'))).sort();

describe('golden qs-validate runs', () => {
  it('has cases', () => expect(cases.length).toBeGreaterThan(3));

  it.each(cases)('%s', async (name) => {
    const dir = join(GOLDEN, name);
    const args = readFileSync(join(dir, 'args'), 'utf8').split('\n').filter((a) => a !== '');
    const got = await runCase(args);
    if (UPDATE) {
      writeFileSync(join(dir, 'out.ndjson'), got.out);
      writeFileSync(join(dir, 'err.txt'), got.err);
      writeFileSync(join(dir, 'exit'), `${got.exit}\n`);
    }
    expect(got.out).toBe(readFileSync(join(dir, 'out.ndjson'), 'utf8'));
    expect(got.err).toBe(readFileSync(join(dir, 'err.txt'), 'utf8'));
    expect(got.exit).toBe(Number(readFileSync(join(dir, 'exit'), 'utf8')));
  });
});
