// loop-run's argv: one spec path, and numeric flags that are numbers or a usage error.
import { memoryIo } from '@quickloop/cli-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { cli } from '../src/cli.js';
import { makeLoop, type Loop } from './helpers.js';

const loops: Loop[] = [];
afterEach(() => {
  for (const l of loops.splice(0)) l.cleanup();
});

describe('loop-run argv', () => {
  it.each([
    ['--retries', 'x'],
    ['--retries', '-1'],
    ['--retries', '1.5'],
    ['--retry-delay-ms', 'soon'],
  ])('%s %s is a usage error and nothing runs', async (flag, value) => {
    const loop = makeLoop();
    loops.push(loop);
    await expect(cli([loop.specPath, flag, value], memoryIo())).rejects.toThrow(`${flag} must be an integer ≥ 0`);
    expect(loop.calls('host')).toBe(0);
  });

  it('--consent naming no council member is a usage error: a typo must not wait for a refusal', async () => {
    const loop = makeLoop({ tweak: (s) => (s.privacy.egress = []) });
    loops.push(loop);
    await expect(cli([loop.specPath, '--consent', 'judge1'], memoryIo({ stdin: '' }))).rejects.toThrow('--consent judge1 names no council member (known: host, judge-1)');
    expect(loop.calls('host')).toBe(0);
  });

  it('takes --retries 0 and a spec path', async () => {
    const loop = makeLoop();
    loops.push(loop);
    const io = memoryIo({ stdin: '', env: { ...process.env, NO_COLOR: '1' } });
    expect(await cli([loop.specPath, '--retries', '0', '--retry-delay-ms', '0'], io)).toBe(0);
    expect(loop.state().status).toBe('passed');
  });
});
