// The GitHub Action: every input reaches qs run through the environment (never spliced into a script),
// and its run step, executed here as the runner would, writes results, JUnit, the step summary and outputs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const action = parse(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as {
  inputs: Record<string, { default: string }>;
  runs: { using: string; steps: Array<{ run?: string; env?: Record<string, string>; with?: Record<string, string>; if?: string; 'working-directory'?: string }> };
};
const script = readFileSync(join(ROOT, 'scripts', 'action-run.sh'), 'utf8');
const work = mkdtempSync(join(tmpdir(), 'qs-action-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function step(env: Record<string, string>, ...args: string[]) {
  return spawnSync('bash', [join(ROOT, 'scripts', 'action-run.sh'), ...args], {
    cwd: work,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', NO_COLOR: '1', ...env },
    encoding: 'utf8',
  });
}

describe('action.yml', () => {
  it('is a composite action whose every input is used, and only through the environment', () => {
    expect(action.runs.using).toBe('composite');
    const text = JSON.stringify(action.runs.steps);
    for (const name of Object.keys(action.inputs)) expect(text, `input ${name}`).toContain(`inputs.${name}`);
    for (const s of action.runs.steps) {
      // ${{ }} inside a run script is pasted into bash before it runs: a task path could inject shell.
      if (s.run !== undefined) expect(s.run).not.toContain('${{');
    }
    const given = new Set(action.runs.steps.flatMap((s) => Object.keys(s.env ?? {})));
    const read = new Set([...script.matchAll(/\bQL_[A-Z_]+/g)].map((m) => m[0]).filter((v) => v !== 'QL_USERNS_KNOB'));
    expect([...read].sort()).toEqual([...given].sort());
  });

  it('runs the sweep as the runner would: results, JUnit, the step summary, annotations and its outputs', () => {
    const out = join(work, 'gh-output');
    const summary = join(work, 'summary.md');
    const r = step({
      QL_EXAMPLE: 'greeter-docs-gap',
      QL_AGENT: 'replay',
      QL_REPEAT: '2',
      QL_WORKERS: '2',
      QL_OUT: 'quickloop-results',
      QL_JUNIT: 'quickloop-results/junit.xml',
      QL_STRICT: 'false',
      QL_UNENFORCED: 'false',
      GITHUB_ACTIONS: 'true',
      GITHUB_OUTPUT: out,
      GITHUB_STEP_SUMMARY: summary,
    });
    expect(r.status, r.stderr).toBe(1);
    expect(readFileSync(out, 'utf8')).toBe('exit-code=1\nresults=quickloop-results/results.json\n');
    const results = JSON.parse(readFileSync(join(work, 'quickloop-results', 'results.json'), 'utf8')) as { tasks: Array<{ task?: string; name?: string }> };
    expect(JSON.stringify(results.tasks)).toContain('greeter-docs-gap');
    expect(readFileSync(join(work, 'quickloop-results', 'junit.xml'), 'utf8')).toContain('<testsuite');
    expect(readFileSync(summary, 'utf8')).toContain('greeter-docs-gap');
    expect(r.stderr).toMatch(/^::error /m);
  });

  it('passes a hostile input as one argument, never as shell', () => {
    const r = step({ QL_TASKS: '$(touch pwned) `touch pwned2`;touch pwned3', QL_OUT: '', QL_JUNIT: '', QL_MODEL: '$(touch pwned4)' });
    expect(r.status).toBe(3);
    for (const f of ['pwned', 'pwned2', 'pwned3', 'pwned4']) expect(existsSync(join(work, f))).toBe(false);
  });

  it('lifts the AppArmor user-namespace restriction where it is set, and says what it changed', () => {
    const bin = join(work, 'fake-bin');
    mkdirSync(bin, { recursive: true });
    // sudo is the runner's; here a stand-in records what it was asked.
    writeFileSync(join(bin, 'sudo'), `#!/bin/sh\nprintf '%s\\n' "$*" >> ${join(work, 'sudo.log')}\n`, { mode: 0o755 });
    const knob = join(work, 'knob');
    const summary = join(work, 'userns-summary.md');
    writeFileSync(knob, '1\n');
    const r = step({ QL_USERNS_KNOB: knob, GITHUB_STEP_SUMMARY: summary, PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` }, 'userns');
    expect(r.status).toBe(0);
    expect(readFileSync(join(work, 'sudo.log'), 'utf8')).toBe('-n sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0\n');
    expect(r.stdout).toContain('set kernel.apparmor_restrict_unprivileged_userns=0 for this job');
    expect(readFileSync(summary, 'utf8')).toContain('kernel.apparmor_restrict_unprivileged_userns=0');
    writeFileSync(knob, '0\n');
    const none = step({ QL_USERNS_KNOB: knob, PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` }, 'userns');
    expect(none.stdout).toContain('nothing changed');
    expect(readFileSync(join(work, 'sudo.log'), 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('runs one shard of a matrix (shard), and a later job merges the downloaded folders (merge, globs expanded)', () => {
    for (const i of [1, 2]) {
      const r = step({ QL_EXAMPLE: 'greeter', QL_REPEAT: '2', QL_SHARD: `${i}/2`, QL_OUT: `shards/quickloop-shard-${i}`, QL_JUNIT: '' });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toContain(`qs run: shard ${i}/2: 1 of 2 attempts`);
    }
    const output = join(work, 'merge-output');
    const r = step({ QL_MERGE: 'shards/quickloop-shard-*', QL_OUT: 'merged', QL_JUNIT: 'merged/junit.xml', QL_TASKS: 'ignored-when-merging', GITHUB_OUTPUT: output });
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(output, 'utf8')).toBe('exit-code=0\nresults=merged/results.json\n');
    const results = JSON.parse(readFileSync(join(work, 'merged', 'results.json'), 'utf8')) as { counts: Record<string, number> };
    expect(results.counts).toMatchObject({ passed: 2, not_run: 0 });
    expect(readFileSync(join(work, 'merged', 'junit.xml'), 'utf8')).toContain('tests="2" failures="0" errors="0"');
    const hostile = step({ QL_MERGE: '$(touch pwned5) ;touch pwned6', QL_OUT: 'merged-2', QL_JUNIT: '' });
    expect(hostile.status).toBe(3);
    for (const f of ['pwned5', 'pwned6']) expect(existsSync(join(work, f))).toBe(false);
  });

  it('runs qs doctor for its doctor step', () => {
    const r = step({ QL_TASKS: join(ROOT, 'fixtures', 'examples', 'greeter.yaml') }, 'doctor');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('ok  ');
    expect(r.stdout).toContain('backends');
  });
});
