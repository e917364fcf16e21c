// Looper's own command lines typed against `loop` give Looper's files: compared with outputs that
// Looper 0.4 itself wrote (fixtures/loops/looper), never with goldens `loop` produced.
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { memoryIo } from '@quickloop/cli-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pyJsonLoads } from '@quickloop/loop-spec';
import { cli } from './cli.js';

const LOOPS = resolve(import.meta.dirname, '../../../fixtures/loops');
const LOOPER = join(LOOPS, 'looper');
const CASES = readdirSync(LOOPER, { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== 'windows-source')
  .map((d) => d.name);

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'loop-looper-'));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

async function loop(argv: string[], env: Record<string, string> = {}, cwd = tmp) {
  const io = memoryIo({ cwd, env: { NO_COLOR: '1', HOME: join(tmp, 'home'), ...env } });
  const code = await cli(argv, io);
  return { code, out: io.out(), err: io.err() };
}

const golden = (...parts: string[]): string => readFileSync(join(LOOPER, ...parts), 'utf8');
/** compiled_at and source change with the clock and the folder; everything else must be Looper's bytes. */
const blankVolatile = (json: string): string =>
  json.replace(/^ {2}"compiled_at": "[^"]*",$/m, '  "compiled_at": "X",').replace(/^ {2}"source": "[^"]*",$/m, '  "source": "X",');

describe('looper compile SPEC --out FILE.json --render FILE --session-prompt FILE', () => {
  it.each(CASES)('%s: the three files Looper writes, byte for byte, and nothing else', async (name) => {
    cpSync(join(LOOPS, 'valid', name, 'loop.yaml'), join(tmp, 'loop.yaml'));
    const r = await loop(['compile', 'loop.yaml', '--out', 'loop.resolved.json', '--render', 'LOOP.md', '--session-prompt', 'RUN_IN_SESSION.md']);
    expect(r.code).toBe(0);
    expect(r.out).toBe('');
    const json = readFileSync(join(tmp, 'loop.resolved.json'), 'utf8');
    expect(blankVolatile(json)).toBe(blankVolatile(golden(name, 'loop.resolved.json')));
    // Python's json (Infinity for a .inf); and a spec's own top-level `source` wins over the path, in Looper too.
    const looperSource = (pyJsonLoads(golden(name, 'loop.resolved.json')) as Record<string, unknown>).source as string;
    expect((pyJsonLoads(json) as Record<string, unknown>).source).toBe(looperSource.startsWith('/') ? join(tmp, 'loop.yaml') : looperSource);
    expect(readFileSync(join(tmp, 'LOOP.md'), 'utf8')).toBe(golden(name, 'LOOP.md'));
    expect(readFileSync(join(tmp, 'RUN_IN_SESSION.md'), 'utf8')).toBe(golden(name, 'RUN_IN_SESSION.md'));
    expect(readdirSync(tmp).sort()).toEqual(['LOOP.md', 'RUN_IN_SESSION.md', 'home', 'loop.resolved.json', 'loop.yaml'].filter((f) => f !== 'home' || existsSync(join(tmp, 'home'))));
  });

  it.each(CASES)('%s: session-prompt prints Looper\'s prompt, and --out writes it', async (name) => {
    writeFileSync(join(tmp, 'loop.resolved.json'), golden(name, 'loop.resolved.json'));
    const printed = await loop(['session-prompt', 'loop.resolved.json']);
    expect(printed.code).toBe(0);
    expect(printed.out).toBe(golden(name, 'session-prompt.stdout'));
    const written = await loop(['session-prompt', 'loop.resolved.json', '--out', 'sub/RUN.md']);
    expect(written.code).toBe(0);
    expect(written.out).toBe('');
    expect(readFileSync(join(tmp, 'sub/RUN.md'), 'utf8')).toBe(golden(name, 'RUN_IN_SESSION.md'));
  });

  it('session-prompt on Looper\'s committed example (a Windows source path, a BOM) matches Looper on POSIX', async () => {
    writeFileSync(join(tmp, 'r.json'), `\uFEFF${golden('windows-source', 'loop.resolved.json')}`);
    const r = await loop(['session-prompt', 'r.json']);
    expect(r.code).toBe(0);
    expect(r.out).toBe(golden('windows-source', 'session-prompt.stdout'));
  });
});

describe('which files loop compile writes', () => {
  it('plain `loop compile SPEC` writes loop.resolved.json only, as Looper does: LOOP.md and RUN_IN_SESSION.md beside it are left alone', async () => {
    cpSync(join(LOOPS, 'valid/minimal/loop.yaml'), join(tmp, 'loop.yaml'));
    writeFileSync(join(tmp, 'LOOP.md'), 'mine\n');
    writeFileSync(join(tmp, 'RUN_IN_SESSION.md'), 'edited by hand\n');
    const r = await loop(['compile', 'loop.yaml']);
    expect(r.code).toBe(0);
    expect(r.err).toBe(`Wrote ${join(tmp, 'loop.resolved.json')}\n`);
    expect(readFileSync(join(tmp, 'LOOP.md'), 'utf8')).toBe('mine\n');
    expect(readFileSync(join(tmp, 'RUN_IN_SESSION.md'), 'utf8')).toBe('edited by hand\n');
    expect(blankVolatile(readFileSync(join(tmp, 'loop.resolved.json'), 'utf8'))).toBe(blankVolatile(golden('minimal', 'loop.resolved.json')));
  });

  it('--out FILE.json into a folder that does not exist yet creates it and writes only that file', async () => {
    cpSync(join(LOOPS, 'valid/minimal/loop.yaml'), join(tmp, 'loop.yaml'));
    const r = await loop(['compile', 'loop.yaml', '--out', 'a/b/x.json', '-q']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(readdirSync(join(tmp, 'a/b'))).toEqual(['x.json']);
    expect(readdirSync(tmp).sort()).toEqual(['a', 'loop.yaml']);
    // The extension in any case, as Looper writes whatever file it is given.
    const upper = await loop(['compile', 'loop.yaml', '--out', 'X.JSON', '-q']);
    expect(upper.code, upper.err).toBe(0);
    expect(statSync(join(tmp, 'X.JSON')).isFile()).toBe(true);
    expect(readFileSync(join(tmp, 'X.JSON'), 'utf8')).toBe(readFileSync(join(tmp, 'a/b/x.json'), 'utf8'));
  });

  it('--out DIR stays the directory form (all three, quickloop\'s prose); --render replaces its LOOP.md with Looper\'s', async () => {
    cpSync(join(LOOPS, 'valid/typical/loop.yaml'), join(tmp, 'loop.yaml'));
    mkdirSync(join(tmp, 'out.json'));
    const r = await loop(['compile', 'loop.yaml', '--out', 'out.json', '--render', 'elsewhere/LOOP.md']);
    expect(r.code).toBe(0);
    // An existing directory is the directory form, whatever its name ends in.
    expect(readdirSync(join(tmp, 'out.json')).sort()).toEqual(['RUN_IN_SESSION.md', 'loop.resolved.json']);
    expect(readFileSync(join(tmp, 'out.json/RUN_IN_SESSION.md'), 'utf8')).toBe(readFileSync(join(LOOPS, 'valid/typical/RUN_IN_SESSION.md'), 'utf8'));
    expect(readFileSync(join(tmp, 'elsewhere/LOOP.md'), 'utf8')).toBe(golden('typical', 'LOOP.md'));
  });

  it.each([
    [['--out', 'taken'], /^loop: error: --out taken is a file; --out names the resolved JSON file/],
    [['--render', 'adir'], /^loop: error: .*adir is a directory; name the file to write\n$/],
    [['--print', '--render', 'x.md'], /^loop: error: --print and --render cannot be used together/],
    [['--print', '--session-prompt', 'x.md'], /^loop: error: --print and --session-prompt cannot be used together/],
  ])('%j is a one-line usage error (exit 2) and writes nothing', async (flags, message) => {
    cpSync(join(LOOPS, 'valid/minimal/loop.yaml'), join(tmp, 'loop.yaml'));
    writeFileSync(join(tmp, 'taken'), 'x');
    mkdirSync(join(tmp, 'adir'));
    const r = await loop(['compile', 'loop.yaml', ...flags]);
    expect(r.code).toBe(2);
    expect(r.err.trimEnd().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(message);
    expect(readdirSync(tmp).sort()).toEqual(['adir', 'loop.yaml', 'taken']);
    expect(readFileSync(join(tmp, 'taken'), 'utf8')).toBe('x');
  });
});

describe('session-prompt on bad input', () => {
  it.each([
    ['not json', 'nope', /^loop: error: Could not parse JSON in .*r\.json: Expecting value: line 1 column 1 \(char 0\)\n$/],
    ['a list', '[1]', /^loop: error: .*r\.json must contain a JSON object\n$/],
    ['trailing garbage', '{} x', /^loop: error: Could not parse JSON in .*: Extra data: line 1 column 4/],
    ['an unterminated string', '{"a": "b', /^loop: error: Could not parse JSON in .*: Unterminated string/],
  ])('%s: one line naming the file, exit 2', async (_label, text, message) => {
    writeFileSync(join(tmp, 'r.json'), text);
    const r = await loop(['session-prompt', 'r.json']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.trimEnd().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(message);
  });

  it('a missing file: one line, exit 2', async () => {
    const r = await loop(['session-prompt', 'gone.json']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^loop: error: Could not read .*gone\.json: \[Errno 2\] No such file or directory/);
  });
});

describe('detect-models and register-model', () => {
  /** The fake CLIs the Looper golden was recorded with (see fixtures/loops/looper/README.md). */
  function fakeClis(): string {
    const bin = join(tmp, 'bin');
    mkdirSync(bin);
    const scripts: Record<string, string> = {
      claude: 'echo "claude 1.2.3 (Code)"\necho second',
      codex: 'echo "oops" >&2; exit 3',
      llm: 'printf "  \\r\\n"',
    };
    for (const [name, body] of Object.entries(scripts)) {
      writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    }
    // Not executable: which() must pass it by, as shutil.which does.
    writeFileSync(join(bin, 'gemini'), '#!/bin/sh\necho never\n');
    return bin;
  }
  const withBin = (text: string, bin: string): string => text.replaceAll('BIN', bin);

  it('detect-models prints what Looper prints for the same CLIs on PATH, and writes nothing without --write', async () => {
    const bin = fakeClis();
    const r = await loop(['detect-models'], { PATH: `${bin}:/usr/bin:/bin` });
    expect(r.code).toBe(0);
    expect(r.out).toBe(withBin(golden('detect-models.json'), bin));
    expect(existsSync(join(tmp, 'home'))).toBe(false);
  });

  it('--write merges into the registry (other entries kept), then register-model adds entries: Looper\'s file, byte for byte', async () => {
    const bin = fakeClis();
    const env = { PATH: `${bin}:/usr/bin:/bin` };
    expect((await loop(['detect-models', '--write', '--registry', 'r.json'], env)).code).toBe(0);
    const one = await loop(['register-model', 'mine', '--invoke', 'claude -p --model x', '--notes', 'hi', '--local', '--registry', 'r.json'], env);
    expect(one).toMatchObject({ code: 0, out: '', err: 'Registered mine in r.json\n' });
    expect((await loop(['register-model', 'two', '--invoke', 'nope', 'run', '--authed', '--model', 'm', '--registry', 'r.json'], env)).code).toBe(0);
    expect(readFileSync(join(tmp, 'r.json'), 'utf8')).toBe(withBin(golden('registry-after-register.json'), bin));
    // A second --write refreshes the probed entries and keeps the registered ones.
    expect((await loop(['detect-models', '--write', '--registry', 'r.json'], env)).code).toBe(0);
    expect(readFileSync(join(tmp, 'r.json'), 'utf8')).toBe(withBin(golden('registry-after-register.json'), bin));
  });

  it('the registry defaults to ~/.looper/models.json', async () => {
    const r = await loop(['register-model', 'x', '--invoke', 'sh -c true']);
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(tmp, 'home/.looper/models.json'), 'utf8')).x.invoke).toEqual(['sh', '-c', 'true']);
  });

  it.each([
    ['an API key in --invoke', ['--invoke', 'x --key sk-abcdefghijklmnopqrstu'], /^loop: error: --invoke looks like it contains a credential; the model registry must never store secrets/],
    ['a token in --notes', ['--invoke', 'x', '--notes', 'token=abcdefghij'], /^loop: error: --notes looks like it contains a credential/],
    ['an unclosed quote', ['--invoke', 'claude "-p'], /^loop: error: --invoke is not a valid shell-style string/],
    ['a blank --invoke', ['--invoke', '  '], /^loop: error: --invoke must not be empty\n$/],
    ['no --invoke', [], /^loop: error: --invoke is required/],
    // As with Looper's argparse: a flag-like token after --invoke is a flag, so it must be quoted.
    ['an unquoted flag-like token', ['--invoke', 'sh', '-c', 'true'], /^loop: error: Unknown argument: c /],
  ])('%s: one line, exit 2, the registry untouched', async (_label, flags, message) => {
    writeFileSync(join(tmp, 'r.json'), '{"keep": {"cli": "k"}}\n');
    const r = await loop(['register-model', 'bad', ...flags, '--registry', 'r.json']);
    expect(r.code).toBe(2);
    expect(r.err.trimEnd().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(message);
    expect(readFileSync(join(tmp, 'r.json'), 'utf8')).toBe('{"keep": {"cli": "k"}}\n');
  });

  it.each([
    ['not JSON', '{', /^loop: error: Could not parse JSON in .*r\.json: /],
    ['not an object', '[]', /^loop: error: Registry .*r\.json must contain a JSON object\n$/],
  ])('a registry that is %s: one line, exit 2, left as it was', async (_label, text, message) => {
    writeFileSync(join(tmp, 'r.json'), text);
    for (const argv of [['detect-models', '--write'], ['register-model', 'a', '--invoke', 'x']]) {
      const r = await loop([...argv, '--registry', 'r.json'], { PATH: '/nonexistent' });
      expect(r.code).toBe(2);
      expect(r.err).toMatch(message);
      expect(readFileSync(join(tmp, 'r.json'), 'utf8')).toBe(text);
    }
  });
});
