// `loop compile` and `loop lint` in-process: files written, stdout/stderr split, exit codes, usage errors.
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { memoryIo } from '@quickloop/cli-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cli } from './cli.js';

const LOOPS = resolve(import.meta.dirname, '../../../fixtures/loops');
let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'loop-test-'));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

async function loop(argv: string[], env: Record<string, string> = {}) {
  const io = memoryIo({ cwd: tmp, env: { NO_COLOR: '1', ...env } });
  const code = await cli(argv, io);
  return { code, out: io.out(), err: io.err() };
}

/** The golden with the two machine-dependent fields blanked, for comparing against a real compile. */
function comparable(json: string): unknown {
  const value = JSON.parse(json) as Record<string, unknown>;
  value.compiled_at = 'X';
  value.source = 'X';
  return value;
}

describe('loop compile', () => {
  it('writes loop.resolved.json, LOOP.md and RUN_IN_SESSION.md into --out, matching the goldens', async () => {
    const spec = join(LOOPS, 'valid/typical/loop.yaml');
    const r = await loop(['compile', spec, '--out', 'out'], { SOURCE_DATE_EPOCH: '1767225600' });
    expect(r.code).toBe(0);
    expect(r.out).toBe('');
    expect(r.err).toContain(`Wrote ${join(tmp, 'out', 'loop.resolved.json')}`);
    expect(readdirSync(join(tmp, 'out')).sort()).toEqual(['LOOP.md', 'RUN_IN_SESSION.md', 'loop.resolved.json']);
    const json = readFileSync(join(tmp, 'out/loop.resolved.json'), 'utf8');
    expect(comparable(json)).toEqual(comparable(readFileSync(join(LOOPS, 'valid/typical/loop.resolved.json'), 'utf8')));
    // SOURCE_DATE_EPOCH pins compiled_at; source is the absolute spec path, as Looper writes it.
    expect(JSON.parse(json)).toMatchObject({ compiled_at: '2026-01-01T00:00:00+00:00', source: spec });
    for (const doc of ['LOOP.md', 'RUN_IN_SESSION.md']) {
      expect(readFileSync(join(tmp, 'out', doc), 'utf8')).toBe(readFileSync(join(LOOPS, 'valid/typical', doc), 'utf8'));
    }
  });

  it('writes only loop.resolved.json next to the spec by default, as Looper does', async () => {
    cpSync(join(LOOPS, 'valid/minimal/loop.yaml'), join(tmp, 'loop.yaml'));
    const r = await loop(['compile', 'loop.yaml', '-q']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(readdirSync(tmp).sort()).toEqual(['loop.resolved.json', 'loop.yaml']);
  });

  it('a plain command line and one only yargs understands give the same result', async () => {
    cpSync(join(LOOPS, 'valid/minimal/loop.yaml'), join(tmp, 'loop.yaml'));
    const plain = await loop(['compile', 'loop.yaml', '-o', 'a', '-q']);
    // --no-print is yargs' negation syntax: the fast parser refuses it, so yargs parses this one.
    const viaYargs = await loop(['compile', '--no-print', 'loop.yaml', '--out=b', '--quiet']);
    expect([plain.code, viaYargs.code]).toEqual([0, 0]);
    for (const file of ['loop.resolved.json', 'LOOP.md', 'RUN_IN_SESSION.md']) {
      expect(readFileSync(join(tmp, 'b', file), 'utf8').replace(/"compiled_at": "[^"]+"/, '')).toBe(
        readFileSync(join(tmp, 'a', file), 'utf8').replace(/"compiled_at": "[^"]+"/, ''),
      );
    }
  });

  it('--print puts the resolved JSON on stdout and writes nothing', async () => {
    cpSync(join(LOOPS, 'valid/minimal/loop.yaml'), join(tmp, 'loop.yaml'));
    const r = await loop(['compile', 'loop.yaml', '--print']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).host.invoke).toEqual(['claude', '-p']);
    expect(r.out.endsWith('}\n')).toBe(true);
    expect(readdirSync(tmp)).toEqual(['loop.yaml']);
  });

  it('warns on stderr about placeholders but still compiles', async () => {
    const r = await loop(['compile', join(LOOPS, 'valid/bug-hunt/loop.yaml'), '--print']);
    expect(r.code).toBe(0);
    expect(r.err).toBe(
      'loop: warning: unresolved template placeholders remain ({{REPO_DIR}}, {{REPRO_CMD}}, {{TEST_CMD}}); fill them in before running this loop\n',
    );
  });

  it('an invalid spec: one line with Looper\'s text and the location, exit 2, nothing written', async () => {
    cpSync(join(LOOPS, 'invalid/workspace-escape.yaml'), join(tmp, 'loop.yaml'));
    const text = readFileSync(join(tmp, 'loop.yaml'), 'utf8');
    const line = text.split('\n').findIndex((l) => l.includes('dir: ../escape')) + 1;
    const r = await loop(['compile', 'loop.yaml']);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`loop: error: workspace.dir must be a relative path inside the loop directory (got '../escape') (loop.yaml:${line})\n`);
    expect(readdirSync(tmp)).toEqual(['loop.yaml']);
  });

  it('a missing file reads like Looper: Could not read <abs path>: [Errno 2] …', async () => {
    const r = await loop(['compile', 'nope.yaml']);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`loop: error: Could not read ${join(tmp, 'nope.yaml')}: [Errno 2] No such file or directory: '${join(tmp, 'nope.yaml')}'\n`);
  });
});

describe('loop lint', () => {
  it('prints one line per finding and a summary on stdout; warnings alone exit 0', async () => {
    const r = await loop(['lint', join(LOOPS, 'lint/missing-max-revisions.yaml')]);
    expect(r.code).toBe(0);
    const name = join(LOOPS, 'lint/missing-max-revisions.yaml');
    expect(r.out).toBe(
      [
        `${name}: warning[missing-max-revisions]: plan_gate does not set max_revisions; make the revision cap explicit (control rubric requires one per gate)`,
        `${name}: warning[missing-max-revisions]: delivery_gate does not set max_revisions; make the revision cap explicit (control rubric requires one per gate)`,
        'loop lint: 0 error(s), 2 warning(s)',
        '',
      ].join('\n'),
    );
    expect(r.err).toBe('');
  });

  it('echoes the spec path the way Python prints a Path (./ and // collapsed)', async () => {
    cpSync(join(LOOPS, 'lint/no-stop-conditions.yaml'), join(tmp, 'spec.yaml'));
    const r = await loop(['lint', './/spec.yaml']);
    expect(r.out.split('\n')[0]).toMatch(/^spec\.yaml: warning\[no-stop-conditions\]: /);
  });

  it('a clean spec says no findings', async () => {
    const r = await loop(['lint', join(LOOPS, 'lint/clean.yaml'), '--strict']);
    expect(r).toMatchObject({ code: 0, out: 'loop lint: no findings\n' });
  });

  it('--strict turns a warning into exit 1', async () => {
    expect((await loop(['lint', join(LOOPS, 'lint/all-vibe.yaml')])).code).toBe(0);
    expect((await loop(['lint', join(LOOPS, 'lint/all-vibe.yaml'), '--strict'])).code).toBe(1);
  });

  it('an error finding exits 1', async () => {
    const r = await loop(['lint', join(LOOPS, 'lint/unscoped-egress.yaml')]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("error[unscoped-egress]: council member 'judge-1' is non-local and cross-vendor (claude)");
    expect(r.out.endsWith('loop lint: 1 error(s), 0 warning(s)\n')).toBe(true);
  });

  it('--json: sorted keys, counts that add up, the findings in order', async () => {
    const r = await loop(['lint', join(LOOPS, 'lint/errors-and-warnings.yaml'), '--json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out) as { errors: number; warnings: number; findings: { check: string; severity: string; message: string }[] };
    expect(Object.keys(report)).toEqual(['errors', 'findings', 'warnings']);
    expect(report.errors).toBe(2);
    expect(report.errors + report.warnings).toBe(report.findings.length);
    expect(report.findings.map((f) => f.check)).toEqual(['judge-criterion-unreachable', 'missing-max-revisions', 'unscoped-egress', 'no-stop-conditions']);
    for (const f of report.findings) expect(Object.keys(f)).toEqual(['check', 'message', 'severity']);
    expect(r.out).toMatch(/^\{\n {2}"errors": 2,\n {2}"findings": \[\n {4}\{\n {6}"check": /);
  });

  it('--compat keeps only Looper\'s rules', async () => {
    const spec = join(LOOPS, 'lint/hardcoded-delivery-path.yaml');
    expect((await loop(['lint', spec])).out).toContain('hardcoded-delivery-path');
    expect(await loop(['lint', spec, '--compat'])).toMatchObject({ code: 0, out: 'loop lint: no findings\n' });
  });

  it('an egress entry for the host is quickloop\'s, so only --compat calls it unknown', async () => {
    const spec = join(LOOPS, 'lint/egress-to-host.yaml');
    expect(await loop(['lint', spec])).toMatchObject({ code: 0, out: 'loop lint: no findings\n' });
    const compat = await loop(['lint', spec, '--compat']);
    expect(compat.code).toBe(1);
    expect(compat.out).toContain("error[egress-unknown-member]: privacy.egress entry targets unknown council member 'host'");
  });

  it('a spec that does not compile: exit 2, the error on stderr, nothing on stdout even with --json', async () => {
    const r = await loop(['lint', join(LOOPS, 'invalid/duplicate-council-id.yaml'), '--json']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^loop: error: Duplicate council member id: judge-1 \(.*duplicate-council-id\.yaml:\d+\)\n$/);
  });
});

describe('usage', () => {
  it.each([
    [[], /^Usage: loop <command>/],
    [['frobnicate'], /^loop: error: unknown command 'frobnicate' \(try: compile, lint/],
    [['compile'], /^loop: error: loop compile SPEC .*expected SPEC, got 0 argument\(s\)/],
    [['compile', 'a.yaml', 'b.yaml'], /^loop: error: unexpected argument 'b.yaml'/],
    [['lint', 'a.yaml', '--bogus'], /^loop: error: Unknown argument: bogus/],
    [['compile', 'a.yaml', '--print', '--out', 'x'], /^loop: error: --print and --out cannot be used together/],
  ])('%j is a usage error (exit 2)', async (argv, message) => {
    const r = await loop(argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.out).toBe('');
  });

  it('--help lists the subcommands on stdout; a subcommand --help shows its flags', async () => {
    expect(await loop(['--help'])).toMatchObject({ code: 0, out: expect.stringMatching(/\n {2}compile +Compile loop.yaml[^]*\n {2}detect-models +[^]*\n {2}register-model +/) });
    const r = await loop(['lint', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('--strict');
  });
});
