// Redaction: fnmatch globs on every suffix, the content scrub with attribution and blind spots, output modes.
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isRedacted } from './globs.js';
import { outputMode } from './model-output.js';
import { DEFAULT_GLOBS, Scrubber } from './scrub.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('redaction globs (fnmatch on every suffix)', () => {
  it('matches the normative defaults at any depth', () => {
    expect(isRedacted('.env', DEFAULT_GLOBS)).toBe(true);
    expect(isRedacted('config/.env', DEFAULT_GLOBS)).toBe(true);
    expect(isRedacted('config/.env.production', DEFAULT_GLOBS)).toBe(true);
    expect(isRedacted('secrets/a/b.txt', DEFAULT_GLOBS)).toBe(true);
    expect(isRedacted('deep/tls/server.key', DEFAULT_GLOBS)).toBe(true);
    expect(isRedacted('notes.md', DEFAULT_GLOBS)).toBe(false);
    expect(isRedacted('environment.md', DEFAULT_GLOBS)).toBe(false);
  });
  it('lets * cross / as Python fnmatch does, and supports classes', () => {
    expect(isRedacted('inputs/a/b/secret.txt', ['inputs/*.txt'])).toBe(true);
    expect(isRedacted('data/x1.csv', ['data/x[0-9].csv'])).toBe(true);
    expect(isRedacted('data/xa.csv', ['data/x[!a].csv'])).toBe(false);
  });
});

describe('Scrubber', () => {
  const loopDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'scrub-'));
    dirs.push(d);
    return d;
  };
  it('scrubs a flagged name that is a symlink to a file (a shared .env), and never loops on a directory link', () => {
    const d = loopDir();
    const shared = loopDir();
    writeFileSync(join(shared, 'team.env'), 'DB_PASSWORD=correct-horse-battery\n');
    symlinkSync(join(shared, 'team.env'), join(d, '.env'));
    symlinkSync(d, join(d, 'loop-back'));
    const r = new Scrubber(d, () => undefined).scrub('dump: DB_PASSWORD=correct-horse-battery', DEFAULT_GLOBS);
    expect(r).toEqual({ text: 'dump: [redacted:.env]', sources: ['.env'] });
  });

  it('scrubs the files of a flagged directory that is a symlink (secrets -> a shared folder)', () => {
    const d = loopDir();
    const shared = loopDir();
    writeFileSync(join(shared, 'api.txt'), 'SUPERSECRETVALUE123\n');
    symlinkSync(shared, join(d, 'secrets'));
    symlinkSync(join(d, 'secrets'), join(d, 'again')); // the same folder twice, and a link back up
    symlinkSync(d, join(shared, 'up'));
    const r = new Scrubber(d, () => undefined).scrub('exit=0\nstdout:\nSUPERSECRETVALUE123\n', DEFAULT_GLOBS);
    expect(r.text).not.toContain('SUPERSECRETVALUE123');
    expect(r.sources).toEqual(['secrets/api.txt']);
  });

  it('scrubs flagged content quoted inside JSON (a programmatic result the judge is shown)', () => {
    const d = loopDir();
    writeFileSync(join(d, '.env'), 'DB_PASSWORD="s3cr3t-value-xyz"\n\tINDENTED_TOKEN=tab\\slash-value\n');
    const result = JSON.stringify({ id: 'envcheck', stdout: 'DB_PASSWORD="s3cr3t-value-xyz"\n\tINDENTED_TOKEN=tab\\slash-value\n' });
    const whole = new Scrubber(d, () => undefined).scrub(`results: ${result}`, DEFAULT_GLOBS);
    expect(whole.text).not.toContain('s3cr3t-value-xyz');
    expect(whole.text).not.toContain('slash-value');
    expect(whole.sources).toEqual(['.env']);
    const oneLine = new Scrubber(d, () => undefined).scrub(JSON.stringify({ stdout: 'x DB_PASSWORD="s3cr3t-value-xyz" y' }), DEFAULT_GLOBS);
    expect(oneLine.text).not.toContain('s3cr3t-value-xyz');
  });

  it('splits a flagged file on bare CRs too, as Python does: one line of it alone is still caught', () => {
    const d = loopDir();
    writeFileSync(join(d, '.env'), 'A_TOKEN=abcdefgh1\rB_TOKEN=zyxwvut22\r');
    const r = new Scrubber(d, () => undefined).scrub('got B_TOKEN=zyxwvut22 from it', DEFAULT_GLOBS);
    expect(r).toEqual({ text: 'got [redacted:.env] from it', sources: ['.env'] });
  });

  it('replaces full content and long lines, naming every file that holds them', () => {
    const d = loopDir();
    writeFileSync(join(d, '.env'), 'API_KEY=sk-abcdef123456\nX=1\n');
    mkdirSync(join(d, 'config'));
    writeFileSync(join(d, 'config', '.env'), 'API_KEY=sk-abcdef123456\n');
    const s = new Scrubber(d, () => undefined);
    const r = s.scrub('use API_KEY=sk-abcdef123456 and X=1', DEFAULT_GLOBS);
    expect(r.sources).toEqual(['.env', 'config/.env']);
    expect(r.text).not.toContain('sk-abcdef123456');
    expect(r.text).toContain('X=1'); // under 8 characters: left alone
  });
  it('reports files it cannot scrub as blind spots, once each', () => {
    const d = loopDir();
    mkdirSync(join(d, 'secrets'));
    writeFileSync(join(d, 'secrets', 'big.txt'), 'x'.repeat(1_000_001));
    writeFileSync(join(d, 'secrets', 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    const spots: string[] = [];
    const s = new Scrubber(d, (rel, reason) => spots.push(`${rel}: ${reason}`));
    s.scrub('text', DEFAULT_GLOBS);
    s.scrub('text', DEFAULT_GLOBS);
    expect(spots).toEqual(['secrets/big.txt: larger than 1MB', 'secrets/latin1.txt: not valid UTF-8']);
  });
  it('sees flagged files created after its first use (Looper cached the walk)', () => {
    const d = loopDir();
    const s = new Scrubber(d, () => undefined);
    expect(s.scrub('token=abcdefgh12345', DEFAULT_GLOBS).sources).toEqual([]);
    writeFileSync(join(d, 'late.key'), 'token=abcdefgh12345\n');
    expect(s.scrub('token=abcdefgh12345', DEFAULT_GLOBS).sources).toEqual(['late.key']);
  });
});

describe('outputMode', () => {
  it('reads the JSON output mode from the invoke argv', () => {
    expect(outputMode(['claude', '-p', '--output-format', 'json'])).toBe('claude-json');
    expect(outputMode(['claude', '-p', '--output-format=stream-json'])).toBe('claude-json');
    expect(outputMode(['codex', 'exec', '--json', '-'])).toBe('codex-json');
    expect(outputMode(['gemini', '-m', 'x', '-o', 'json'])).toBe('gemini-json');
    expect(outputMode(['ollama', 'run', 'llama3'])).toBe('text');
  });

describe('Scrubber across calls (one walk, then only what changed)', () => {
  it('catches a flagged file created, renamed into place or rewritten after the first scrub, deep or shallow', () => {
    const d = mkdtempSync(join(tmpdir(), 'scrub-'));
    dirs.push(d);
    mkdirSync(join(d, 'a', 'b', 'c'), { recursive: true });
    for (let i = 0; i < 50; i += 1) writeFileSync(join(d, 'a', 'b', `f${i}.md`), `file ${i}\n`);
    const s = new Scrubber(d, () => undefined);
    const text = 'token=first-secret-value other=second-secret-value third=third-secret-value';
    expect(s.scrub(text, DEFAULT_GLOBS).sources).toEqual([]);
    writeFileSync(join(d, 'a', 'b', 'c', '.env'), 'token=first-secret-value\n');
    expect(s.scrub(text, DEFAULT_GLOBS).sources).toEqual(['a/b/c/.env']);
    writeFileSync(join(d, 'a', 'b', 'staged.txt'), 'other=second-secret-value\n');
    renameSync(join(d, 'a', 'b', 'staged.txt'), join(d, 'a', 'b', 'id.key'));
    expect(s.scrub(text, DEFAULT_GLOBS).sources).toEqual(['a/b/c/.env', 'a/b/id.key']);
    writeFileSync(join(d, 'a', 'b', 'c', '.env'), 'third=third-secret-value\n'); // the same size, within the same tick
    const r = s.scrub(text, DEFAULT_GLOBS);
    expect(r.text).toBe('token=first-secret-value [redacted:a/b/id.key] [redacted:a/b/c/.env]');
    rmSync(join(d, 'a', 'b', 'c'), { recursive: true });
    expect(s.scrub(text, DEFAULT_GLOBS).sources).toEqual(['a/b/id.key']);
  });
});
});
