import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  ExitError,
  InputError,
  InterruptedError,
  LoopExit,
  PipeClosedError,
  QsExit,
  UsageError,
  createLogger,
  exitCodeFor,
  parseArgs,
  reportError,
  wantsColour,
} from './index.js';

const capture = (): { stream: PassThrough; text: () => string } => {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString()));
  return { stream, text: () => text };
};

describe('exit codes', () => {
  it('maps error kinds per family, and a crash never leaks as the verdict code 1', () => {
    expect(exitCodeFor('qs', 'usage')).toBe(QsExit.usage);
    expect(exitCodeFor('qs', 'input')).toBe(3);
    expect(exitCodeFor('qs', 'interrupted')).toBe(130);
    expect(exitCodeFor('qs', 'internal')).toBe(QsExit.noEvidence);
    expect(exitCodeFor('loop', 'usage')).toBe(LoopExit.error);
    expect(exitCodeFor('loop', 'internal')).toBe(2);
    expect(exitCodeFor('loop', 'interrupted')).toBe(130);
  });
});

describe('reportError', () => {
  const io = () => {
    const err = capture();
    return { err, io: { stderr: err.stream, env: {} } };
  };
  it('prints one line for typed errors and returns the family code', () => {
    const { err, io: i } = io();
    expect(reportError(new InputError('t.yaml:3:1: bad'), { name: 'qs-validate', family: 'qs' }, i)).toBe(3);
    expect(err.text()).toBe('qs-validate: t.yaml:3:1: bad\n');
  });
  it("does not prefix a subcommand's message that already names the binary", () => {
    const { err, io: i } = io();
    reportError(new InputError('qs report: r.json: no such file or folder'), { name: 'qs', family: 'qs' }, i);
    reportError(new InputError('qs: odd but named'), { name: 'qs', family: 'qs' }, i);
    reportError(new InputError('qsx.yaml: bad'), { name: 'qs', family: 'qs' }, i);
    expect(err.text()).toBe('qs report: r.json: no such file or folder\nqs: odd but named\nqs: qsx.yaml: bad\n');
  });
  it('honours an explicit exit code and stays silent without a message', () => {
    const { err, io: i } = io();
    expect(reportError(new ExitError(1), { name: 'x', family: 'qs' }, i)).toBe(1);
    expect(err.text()).toBe('');
  });
  it('treats a closed pipe as success', () => {
    const { err, io: i } = io();
    expect(reportError(new PipeClosedError(), { name: 'x', family: 'qs' }, i)).toBe(0);
    expect(reportError(Object.assign(new Error('EPIPE'), { code: 'EPIPE' }), { name: 'x', family: 'loop' }, i)).toBe(0);
    expect(err.text()).toBe('');
  });
  it('reports a crash as an internal error, without a stack trace unless debugging', () => {
    const { err, io: i } = io();
    expect(reportError(new TypeError('boom'), { name: 'loop-run', family: 'loop' }, i)).toBe(2);
    expect(err.text()).toBe('loop-run: internal error: boom\n');
  });
});

describe('parseArgs', () => {
  const meta = (out = capture(), positionals = 1) => ({ name: 'qs-x', version: '1.2.3', usage: '$0 [FILE..]', out: out.stream, positionals });
  it('parses known flags and shared ones', () => {
    const opts = parseArgs(['a.yaml', '--strict', '-q'], meta(), (y) => y.option('strict', { type: 'boolean', default: false }));
    expect(opts.strict).toBe(true);
    expect(opts.quiet).toBe(true);
    expect(opts._).toEqual(['a.yaml']);
  });
  it('does not turn numeric-looking arguments into numbers', () => {
    const opts = parseArgs(['007'], meta(), (y) => y);
    expect(opts._).toEqual(['007']);
  });
  it('rejects an unknown flag as a usage error', () => {
    expect(() => parseArgs(['--nope'], meta(), (y) => y)).toThrow(UsageError);
    expect(() => parseArgs(['--nope'], meta(), (y) => y)).toThrow(/Unknown argument: nope \(see qs-x --help\)/);
  });
  it('rejects more positional arguments than the binary takes', () => {
    expect(() => parseArgs(['a', 'b'], meta(capture(), 1), (y) => y)).toThrow("unexpected argument 'b' (see qs-x --help)");
    expect(() => parseArgs(['a'], meta(capture(), 0), (y) => y)).toThrow(UsageError);
  });
  it('rejects a switch given a value other than true or false', () => {
    const parse = (argv: string[]) => parseArgs(argv, meta(), (y) => y.option('strict', { type: 'boolean', default: false }));
    expect(() => parse(['--strict=yes'])).toThrow("--strict is a switch: give it alone (or =true/=false), not 'yes'");
    expect(() => parse(['--quiet=maybe'])).toThrow(UsageError);
    expect(parse(['--strict=false']).strict).toBe(false);
    expect(parse(['--strict=true']).strict).toBe(true);
    expect(() => parse(['--strict=TRUE'])).toThrow(UsageError);
    expect(parse(['--', '--strict=yes'])._).toEqual(['--strict=yes']);
  });

  it('rejects a flag with a default given no value, which yargs would quietly read as the default', () => {
    // `qs run --agent $AGENT --out x` with AGENT unset must not run the replay agent instead.
    const parse = (argv: string[]) => parseArgs(argv, meta(), (y) => y.option('agent', { type: 'string', default: 'replay' }).option('out', { type: 'string' }));
    expect(() => parse(['--agent', '--out', 'x'])).toThrow('--agent needs a value (see qs-x --help)');
    expect(() => parse(['a', '--agent'])).toThrow('--agent needs a value');
    expect(parse(['--agent', 'gemini']).agent).toBe('gemini');
    expect(parse(['--agent=', '--out', 'x']).agent).toBe('');
    expect(parse(['--agent', '-1']).agent).toBe('-1');
    // yargs takes a lone - for a positional, not the value
    expect(() => parse(['--agent', '-'])).toThrow('--agent needs a value');
    expect(parse(['--', '--agent'])._).toEqual(['--agent']);
  });

  it('rejects --quiet with --verbose', () => {
    expect(() => parseArgs(['-q', '-v'], meta(), (y) => y)).toThrow(UsageError);
  });
  it('answers --help and --version with text and ExitError(0)', () => {
    const out = capture();
    expect(() => parseArgs(['--help'], meta(out), (y) => y.option('strict', { type: 'boolean', describe: 'Warnings fail' }))).toThrow(ExitError);
    expect(out.text()).toMatch(/qs-x \[FILE\.\.\]/);
    expect(out.text()).toMatch(/--strict\s+Warnings fail/);
    const v = capture();
    let thrown: unknown;
    try {
      parseArgs(['--version'], meta(v), (y) => y);
    } catch (error) {
      thrown = error;
    }
    // A --version that returned a parse result would let the binary run on after printing it.
    expect(thrown).toBeInstanceOf(ExitError);
    expect((thrown as ExitError).exitCode).toBe(0);
    expect(v.text()).toBe('1.2.3\n');
  });
});

describe('logger', () => {
  it('uses colour only on a TTY and never with NO_COLOR or TERM=dumb', () => {
    expect(wantsColour({ isTTY: true }, {})).toBe(true);
    expect(wantsColour({ isTTY: false }, {})).toBe(false);
    expect(wantsColour({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(wantsColour({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(wantsColour({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
  });
  it('honours --quiet and --verbose', () => {
    const out = capture();
    const quiet = createLogger({ stream: out.stream, level: 'quiet' });
    quiet.info('i');
    quiet.warn('w');
    quiet.verbose('v');
    quiet.error('e');
    expect(out.text()).toBe('e\n');
    const out2 = capture();
    const loud = createLogger({ stream: out2.stream, level: 'verbose', colour: false });
    loud.info('i');
    loud.verbose('v');
    expect(out2.text()).toBe('i\nv\n');
  });
  it('writes ANSI colour only when colour is on', () => {
    const on = capture();
    const l = createLogger({ stream: on.stream, colour: true });
    l.info(l.color.red('x'));
    expect(on.text()).toContain('\u001b[31m');
    const off = capture();
    const m = createLogger({ stream: off.stream, colour: false });
    m.info(m.color.red('x'));
    expect(off.text()).toBe('x\n');
  });
});

describe('runBin signals (real process)', () => {
  const SLEEPER = fileURLToPath(new URL('../test-fixtures/sleeper.mjs', import.meta.url));
  const interrupt = async (signal: NodeJS.Signals, family: string, then = ''): Promise<{ code: number | null; stderr: string }> => {
    const child = spawn('node', [SLEEPER], { env: { ...process.env, FAMILY: family, THEN: then }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    await new Promise<void>((resolve) => {
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
        if (stderr.includes('ready')) resolve();
      });
    });
    child.kill(signal);
    const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    return { code, stderr };
  };
  it('turns SIGINT into an interrupted error and exit 130', async () => {
    const { code, stderr } = await interrupt('SIGINT', 'qs');
    expect(code).toBe(130);
    expect(stderr).toContain('sleeper: interrupted by SIGINT');
  });
  it('does the same for SIGTERM in the loop family', async () => {
    const { code } = await interrupt('SIGTERM', 'loop');
    expect(code).toBe(130);
  });
  it('stays 130 when the reader went away while the interrupted stage was stopping', async () => {
    const { code } = await interrupt('SIGINT', 'qs', 'pipe-closed');
    expect(code).toBe(130);
  });
  it('InterruptedError carries the interrupted kind', () => {
    expect(new InterruptedError().kind).toBe('interrupted');
  });
});
