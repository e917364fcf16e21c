// The rules that ask bash and grep -E themselves (QS034, QS038), and those about strings bash cannot take (QS037) and servers nobody starts (QS039).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadTaskStdin, located } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'qs-task-shell-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = { name: 'shell-rules', goal: 'Build it.', docs: { path: ['https://docs.example.com/start'] }, replay: ['make'] };
const load = async (task: Record<string, unknown>) => {
  const r = await loadTaskStdin(Buffer.from(JSON.stringify({ ...base, ...task })), dir, { registries: [] });
  return { ok: r.ok, errors: r.errors.map((e) => `${e.code} ${e.field ?? ''}: ${e.message}`), lines: r.errors.map((e) => located('t', e)) };
};

describe('patterns are what grep -E accepts', () => {
  it('accepts a lone ) and a POSIX class, as grep does (JavaScript would refuse the first)', async () => {
    expect((await load({ success: { expect_output: { matches: ['done)', '^[[:digit:]]+ files$'] } } })).errors).toEqual([]);
  });
  it('refuses an unknown class and an open group, naming the pattern of a list by index', async () => {
    const r = await load({ success: { serve: 'app', wait_http: { path: '/', matches: ['ok', '[[:nope:]]', '(open'] } } });
    expect(r.errors).toEqual([
      'QS034 success.wait_http.matches[1]: success.wait_http.matches[1] is not a pattern grep -E accepts: /[[:nope:]]/: Invalid character class name',
      'QS034 success.wait_http.matches[2]: success.wait_http.matches[2] is not a pattern grep -E accepts: /(open/: Unmatched ( or \\(',
    ]);
  });
});

describe('the check is parsed by bash -n', () => {
  it('reports a syntax error at the line of success.file, not of the helpers', async () => {
    writeFileSync(join(dir, 'check.sh'), 'test -f a\nif true; then\n  echo b\n');
    const r = await load({ success: { file: 'check.sh' } });
    expect(r.errors).toEqual(["QS038 success.file: success.file 'check.sh' line 3 is not valid bash: syntax error: unexpected end of file"]);
  });
  it('accepts a check that parses, and a declarative one', async () => {
    expect((await load({ success: { script: 'for f in a b; do test -f "$f"; done' } })).errors).toEqual([]);
    expect((await load({ success: { expect_output: { contains: "it's done" } } })).errors).toEqual([]);
  });
});

describe('strings bash cannot take', () => {
  it('names the step of a NUL, a lone surrogate and an over-long command', async () => {
    const r = await load({ setup: ['ok', 'a\ud800b'], replay: ['make', 'x'.repeat(140_000), 'a\0b'], success: { script: 'true' } });
    expect(r.errors.map((e) => e.split(':')[0])).toEqual(['QS037 setup[1]', 'QS037 replay[1]', 'QS037 replay[2]']);
    expect(r.errors[1]).toContain('140000 bytes long, over the 131071 bytes');
  });
  it('refuses a NUL anywhere in the check (a pattern, a json key) and a check too long as a whole', async () => {
    const nul = await load({ success: { serve: 'app', wait_http: { path: '/', json: { 'a\0': 1 }, contains: 'x\0' } } });
    expect(nul.errors.map((e) => e.split(':')[0]).sort()).toEqual(['QS037 success.wait_http.contains', 'QS037 success.wait_http.json']);
    writeFileSync(join(dir, 'big.sh'), `${'echo x\n'.repeat(20_000)}`);
    const big = await load({ success: { file: 'big.sh' } });
    expect(big.errors).toHaveLength(1);
    expect(big.errors[0]).toMatch(/^QS037 success\.file: the compiled check .* bytes long/);
  });
});

describe('wait_http needs serve to poll a local server', () => {
  it('refuses a path or a loopback url with no serve, saying to add serve', async () => {
    for (const w of [{ path: '/health' }, { url: 'http://127.0.0.1:8000/' }, { url: 'http://localhost:3000/' }]) {
      const r = await load({ success: { wait_http: w } });
      expect(r.errors).toHaveLength(1);
      expect(r.errors[0]).toMatch(/^QS039 success\.wait_http: .*add success\.serve/);
    }
  });
  it('keeps a remote url valid (it can answer without a local server; QS111 warns it tests nothing here)', async () => {
    expect((await load({ success: { wait_http: { url: 'https://www.example.org/' } } })).ok).toBe(true);
  });
});
