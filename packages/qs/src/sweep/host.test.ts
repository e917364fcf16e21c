// The one-process attempt gives its stages what three processes had: pipes that end and close, each
// stage's own interrupt, and runBin's exit codes. Stand-in stages here; sweep.test.ts runs the real ones.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { exitCodeFor, memoryIo, UsageError } from '@quickloop/cli-kit';
import { EventWriter, readEvents } from '@quickloop/events';
import { attemptArgv, parseAttemptArgv } from '../attempt.js';
import { hostAttempt, type HostedStage, type StageCli } from './host.js';

const ev = (type: string, extra: object = {}): object => ({ v: 1, type, ts: '2026-01-01T00:00:00.000Z', run_id: 'r1', stage: 'test', ...extra });
const line = (type: string, extra: object = {}): string => `${JSON.stringify(ev(type, extra))}\n`;
const noArgs: Record<HostedStage, string[]> = { 'qs-sandbox': [], 'qs-agent': [], 'qs-check': [] };

/** A stage that forwards every event and adds its own, like the real ones. */
const forwarding =
  (own: string): StageCli =>
  async (argv, io) => {
    const out = new EventWriter(io.stdout);
    for await (const { raw } of readEvents(io.stdin, { source: own })) out.forward(raw);
    out.write(ev(own, { argv }));
    await out.flush();
    return 0;
  };

/** A reader that takes one line and goes, as `| head -1` does. */
const leavesEarly: StageCli = async (_argv, io) => {
  for await (const _ of readEvents(io.stdin, { source: 'x' })) break;
  return 0;
};

/** Resolves once `signal` aborts, with how it was told. */
const aborted = (signal: AbortSignal): Promise<string> =>
  new Promise((resolve) => (signal.aborted ? resolve('aborted') : signal.addEventListener('abort', () => resolve('aborted'), { once: true })));

describe('one attempt in one process', () => {
  it('pipes stdin through the three stages in order, each with its own argv, and returns their codes in pipe order', async () => {
    const io = memoryIo({ stdin: line('test.input') });
    const argvOf = { 'qs-sandbox': ['--backend', 'bwrap'], 'qs-agent': ['--agent', 'replay'], 'qs-check': ['--keep'] };
    const codes = await hostAttempt({ 'qs-sandbox': forwarding('test.one'), 'qs-agent': forwarding('test.two'), 'qs-check': forwarding('test.three') }, argvOf, io);
    expect(codes).toEqual([0, 0, 0]);
    const types = io.out().trim().split('\n').map((l) => JSON.parse(l) as { type: string; argv?: string[] });
    expect(types.map((e) => e.type)).toEqual(['test.input', 'test.one', 'test.two', 'test.three']);
    expect(types.slice(1).map((e) => e.argv)).toEqual([argvOf['qs-sandbox'], argvOf['qs-agent'], argvOf['qs-check']]);
  });

  it('gives a writer whose reader has returned a closed pipe: it stops, and exits 0 as on EPIPE', async () => {
    const io = memoryIo({ stdin: line('test.input') });
    let wroteAfterClose: unknown;
    const chatty: StageCli = async (_argv, sio) => {
      const out = new EventWriter(sio.stdout);
      // Far more than a pipe holds, and slower than the reader, who leaves after the first line.
      for (let i = 0; i < 10_000; i++) {
        try {
          await out.write(ev('test.tick', { i, pad: 'x'.repeat(200) }));
          if (i % 100 === 0) await new Promise((r) => setImmediate(r));
        } catch (error) {
          wroteAfterClose = error;
          throw error;
        }
      }
      await out.flush();
      return 0;
    };
    const codes = await hostAttempt({ 'qs-sandbox': forwarding('test.one'), 'qs-agent': chatty, 'qs-check': leavesEarly }, noArgs, io);
    expect(codes).toEqual([0, 0, 0]);
    expect((wroteAfterClose as Error).name).toBe('PipeClosedError');
    expect(io.err()).toBe('');
  });

  it('ends a reader\'s stdin when the stage before it returns, whatever that stage wrote', async () => {
    const io = memoryIo({ stdin: '' });
    const silent: StageCli = async () => 0;
    let seen = -1;
    const counts: StageCli = async (_argv, sio) => {
      seen = 0;
      for await (const _ of readEvents(sio.stdin, { source: 'x' })) seen += 1;
      return 0;
    };
    expect(await hostAttempt({ 'qs-sandbox': silent, 'qs-agent': forwarding('test.two'), 'qs-check': counts }, noArgs, io)).toEqual([0, 0, 0]);
    expect(seen).toBe(1);
  });

  it('turns a throw into runBin\'s code and one line named for the stage: usage 3, a crash the internal code', async () => {
    const io = memoryIo({ stdin: line('test.input') });
    const usage: StageCli = async () => {
      throw new UsageError('--frobnicate is not an option');
    };
    const crash: StageCli = async (_argv, sio) => {
      for await (const _ of readEvents(sio.stdin, { source: 'x' })) void 0;
      throw new Error('boom');
    };
    const codes = await hostAttempt({ 'qs-sandbox': forwarding('test.one'), 'qs-agent': crash, 'qs-check': usage }, noArgs, io);
    expect(codes).toEqual([0, exitCodeFor('qs', 'internal'), 3]);
    expect(io.err()).toContain('qs-check: --frobnicate is not an option\n');
    expect(io.err()).toContain('qs-agent: internal error: boom\n');
  });

  it('on an interrupt stops qs-sandbox and qs-agent at once, and qs-check only once its check has started', async () => {
    const io = memoryIo({ stdin: new Readable({ read() {} }) });
    const told: Record<string, Promise<string>> = {};
    let checkSignal: AbortSignal | undefined;
    let startCheck: () => void = () => undefined;
    const waits =
      (name: string): StageCli =>
      async (_argv, sio) => {
        told[name] = aborted(sio.signal);
        await told[name];
        return 130;
      };
    const check: StageCli = async (_argv, sio) => {
      checkSignal = sio.signal;
      const out = new EventWriter(sio.stdout);
      await new Promise<void>((resolve) => (startCheck = resolve));
      expect(sio.signal.aborted).toBe(false);
      out.write(ev('check.started'));
      await out.flush();
      await aborted(sio.signal);
      return 130;
    };
    const done = hostAttempt({ 'qs-sandbox': waits('sandbox'), 'qs-agent': waits('agent'), 'qs-check': check }, noArgs, io);
    await new Promise((r) => setImmediate(r));
    io.abort();
    expect(await told.sandbox).toBe('aborted');
    expect(await told.agent).toBe('aborted');
    expect(checkSignal?.aborted).toBe(false);
    startCheck();
    expect(await done).toEqual([130, 130, 130]);
    expect(checkSignal?.aborted).toBe(true);
  });

  it('stops qs-check at once when its check was already running', async () => {
    const io = memoryIo({ stdin: '' });
    let running: () => void = () => undefined;
    const isRunning = new Promise<void>((resolve) => (running = resolve));
    const check: StageCli = async (_argv, sio) => {
      // A check.started split across two writes still counts.
      const text = line('check.started');
      sio.stdout.write(text.slice(0, 10));
      sio.stdout.write(text.slice(10));
      running();
      await aborted(sio.signal);
      return 130;
    };
    const quick: StageCli = async () => 0;
    const done = hostAttempt({ 'qs-sandbox': quick, 'qs-agent': quick, 'qs-check': check }, noArgs, io);
    await isRunning;
    io.abort();
    expect(await done).toEqual([0, 0, 130]);
  });

  it('is not fooled by check.started as text inside another event', async () => {
    const io = memoryIo({ stdin: '' });
    let signal: AbortSignal | undefined;
    let written: () => void = () => undefined;
    const isWritten = new Promise<void>((resolve) => (written = resolve));
    let release: () => void = () => undefined;
    const check: StageCli = async (_argv, sio) => {
      signal = sio.signal;
      sio.stdout.write(line('tool.output', { text: '"type":"check.started"' }), () => written());
      await new Promise<void>((resolve) => (release = resolve));
      return 0;
    };
    const quick: StageCli = async () => 0;
    const done = hostAttempt({ 'qs-sandbox': quick, 'qs-agent': quick, 'qs-check': check }, noArgs, io);
    await isWritten;
    io.abort();
    await new Promise((r) => setImmediate(r));
    expect(signal?.aborted).toBe(false);
    release();
    expect(await done).toEqual([0, 0, 0]);
  });
});

describe("the attempt's argv", () => {
  it('is each stage\'s argv after its length, in pipe order, with --report-codes first when asked', () => {
    const argvOf = { 'qs-sandbox': [], 'qs-agent': ['--agent', 'replay', '3', '--report-codes'], 'qs-check': ['--keep'] };
    const argv = attemptArgv(argvOf, true);
    expect(argv).toEqual(['--report-codes', '0', '4', '--agent', 'replay', '3', '--report-codes', '1', '--keep']);
    expect(parseAttemptArgv(argv)).toEqual({ argvOf, reportCodes: true });
    expect(parseAttemptArgv(attemptArgv(argvOf, false))).toEqual({ argvOf, reportCodes: false });
  });
  it('refuses anything else as a usage error', () => {
    for (const bad of [[], ['x'], ['1'], ['0', '0'], ['0', '0', '0', 'extra'], ['0', '-1', '0'], ['0', '0', '2', 'a']]) expect(() => parseAttemptArgv(bad)).toThrow(UsageError);
  });
});

describe('a stage\'s last lines', () => {
  // A process lives on after main() returns or throws until its event loop is empty: an EventWriter's
  // scheduled flush (setImmediate) still reaches the pipe. So must it here, or the next stage misses them.
  it('reach the next stage when the stage throws right after writing them, without a flush', async () => {
    const io = memoryIo({ stdin: line('test.input') });
    const writesThenThrows: StageCli = async (_argv, sio) => {
      const out = new EventWriter(sio.stdout);
      for await (const { raw } of readEvents(sio.stdin, { source: 'x' })) out.forward(raw);
      out.write(ev('test.before'));
      throw new UsageError('bad input after the lines');
    };
    const codes = await hostAttempt({ 'qs-sandbox': writesThenThrows, 'qs-agent': forwarding('test.two'), 'qs-check': forwarding('test.three') }, noArgs, io);
    expect(codes).toEqual([3, 0, 0]);
    expect(io.out().trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type)).toEqual(['test.input', 'test.before', 'test.two', 'test.three']);
  });

  it('reach stdout when the last stage returns right after writing them, without a flush', async () => {
    const io = memoryIo({ stdin: line('test.input') });
    const writesThenReturns: StageCli = async (_argv, sio) => {
      const out = new EventWriter(sio.stdout);
      for await (const { raw } of readEvents(sio.stdin, { source: 'x' })) out.forward(raw);
      out.write(ev('test.last'));
      return 0;
    };
    expect(await hostAttempt({ 'qs-sandbox': forwarding('test.one'), 'qs-agent': forwarding('test.two'), 'qs-check': writesThenReturns }, noArgs, io)).toEqual([0, 0, 0]);
    expect(io.out()).toContain('test.last');
  });
});

describe('a throw after the reader has gone', () => {
  // runBin returns 0 for any throw once stdout has had EPIPE: the stage ended because its reader did.
  it('is a normal ending (0, nothing said), as runBin made it once stdout had failed with EPIPE', async () => {
    const io = memoryIo({ stdin: line('test.input') });
    const cleansUpThenFails: StageCli = async (_argv, sio) => {
      const out = new EventWriter(sio.stdout);
      try {
        for (let i = 0; i < 10_000; i++) {
          await out.write(ev('test.tick', { i, pad: 'x'.repeat(200) }));
          if (i % 100 === 0) await new Promise((r) => setImmediate(r));
        }
      } catch {
        // what a stage's clean-up may meet once its reader has gone (qs-agent removes its workspaces here)
        throw new Error('could not remove the workspace');
      }
      return 0;
    };
    const codes = await hostAttempt({ 'qs-sandbox': forwarding('test.one'), 'qs-agent': cleansUpThenFails, 'qs-check': leavesEarly }, noArgs, io);
    expect(codes).toEqual([0, 0, 0]);
    expect(io.err()).toBe('');
  });
});
