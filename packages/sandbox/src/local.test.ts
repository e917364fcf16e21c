import { afterEach, describe, expect, it } from 'vitest';
import { UsageError } from '@quickloop/cli-kit';
import { INSTALL_HOSTS } from './install-hosts.js';
import { removeLayout } from './layout.js';
import { openSandbox } from './open.js';
import { omissionMarker } from './output.js';
import { marker, pidsWith, policy } from './test-helpers.js';
import type { Sandbox } from './types.js';

const open: Sandbox[] = [];
afterEach(async () => {
  for (const sb of open.splice(0)) {
    await sb.close();
    removeLayout(sb.describe());
  }
});
const local = async (env: Record<string, string | undefined> = process.env): Promise<Sandbox> => {
  const sb = await openSandbox({ policy: policy(), backend: 'local', allowUnenforced: true, env });
  open.push(sb);
  return sb;
};

describe('local backend', () => {
  it('is refused unless unenforced runs are allowed', async () => {
    await expect(openSandbox({ policy: policy(), backend: 'local' })).rejects.toThrow(UsageError);
    await expect(openSandbox({ policy: policy(), backend: 'local' })).rejects.toThrow(/--allow-unenforced/);
  });

  it('says it enforces nothing', async () => {
    const d = (await local()).describe();
    expect(d).toMatchObject({ backend: 'local', enforced: false });
    expect(d.reason).toMatch(/nothing is enforced/);
  });

  it('adds the install hosts to a fresh sandbox\'s policy, and re-opens with the policy it is given', async () => {
    const first = await openSandbox({ policy: policy({ registries: ['registry.example.org:443'] }), backend: 'local', allowUnenforced: true });
    open.push(first);
    const d = first.describe();
    expect(d.policy.registries).toEqual(['registry.example.org:443']);
    expect(d.policy.install_hosts).toEqual(INSTALL_HOSTS.map((h) => h.host));
    const bare = await openSandbox({ policy: policy(), backend: 'local', allowUnenforced: true, installHosts: false });
    open.push(bare);
    expect(bare.describe().policy.install_hosts).toEqual([]);
    const again = await openSandbox({ policy: policy(), backend: 'local', allowUnenforced: true, workspace: d });
    expect(again.describe().policy.install_hosts).toBeUndefined();
    await again.close();
  });

  it('runs bash -c in the workspace with merged output and the exit code', async () => {
    const sb = await local();
    const r = await sb.exec('pwd; echo out; echo err >&2; exit 3');
    expect(r).toMatchObject({ exitCode: 3, timedOut: false, truncated: false });
    expect(r.output).toBe(`${sb.describe().workspace}\nout\nerr\n`);
  });

  it('gives a command real pipes: /dev/stdout and /dev/stderr open, as under any shell, and no denial is recorded', async () => {
    const sb = await local();
    const r = await sb.exec('echo one > /dev/stdout; echo two > /dev/stderr; echo three | tee /dev/stderr > /dev/null; [ -p /dev/stdout ] && echo pipe');
    expect(r).toMatchObject({ exitCode: 0, denials: [] });
    // Two pipes: each keeps its own order, but which one is read first when both have data is the scheduler's.
    const lines = r.output.split('\n').filter(Boolean);
    expect([...lines].sort()).toEqual(['one', 'pipe', 'three', 'two']);
    expect(lines.filter((l) => l === 'one' || l === 'pipe')).toEqual(['one', 'pipe']);
    expect(lines.filter((l) => l === 'two' || l === 'three')).toEqual(['two', 'three']);
  });

  it('records no filesystem denial: local refuses nothing', async () => {
    const sb = await local();
    const r = await sb.exec("cat /root/qs-none; echo 'bash: line 1: /etc/x: Read-only file system' >&2");
    expect(r.denials).toEqual([]);
  });

  it('gives a scrubbed environment: sibling HOME and TMPDIR, no keys', async () => {
    const sb = await local({ ...process.env, ANTHROPIC_API_KEY: 'sk-ant-test-secret', GITHUB_TOKEN: 'ghp-test-secret' });
    const r = await sb.exec('env');
    expect(r.output).not.toContain('test-secret');
    const d = sb.describe();
    expect(r.output).toContain(`HOME=${d.home}\n`);
    expect(r.output).toContain(`TMPDIR=${d.tmp}\n`);
    expect(d.home.startsWith(`${d.workspace}/`)).toBe(false);
  });

  it('truncates long output head and tail', async () => {
    const r = await (await local()).exec('printf "%s" "$(seq -s, 1 2000)"', { maxOutputChars: 20 });
    expect(r.truncated).toBe(true);
    expect(r.output.startsWith('1,2,3,4,5,')).toBe(true);
    expect(r.output.endsWith('1998,1999,2000'.slice(-10))).toBe(true);
    expect(r.output).toContain(omissionMarker(r.originalChars - 20));
  });

  it('kills a command and its children on timeout, with exit code 124', async () => {
    const sb = await local();
    const m = marker('timeout');
    const r = await sb.exec(`bash -c 'exec -a ${m} sleep 300' & wait`, { timeoutMs: 300 });
    expect(r).toMatchObject({ exitCode: 124, timedOut: true });
    expect(pidsWith(m)).toEqual([]);
  });

  it('stops a command when its signal aborts, without calling it a timeout', async () => {
    const sb = await local();
    const ac = new AbortController();
    const run = sb.exec('sleep 300', { signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    const r = await run;
    expect(r.timedOut).toBe(false);
    expect(r.exitCode).toBe(137);
  });

  it('kills background jobs of its commands at close', async () => {
    const sb = await local();
    const m = marker('bg-local');
    // The job's pipes close at its redirection, before it has exec'd twice (bash, then sleep under
    // the marker name): the command returns while the job is still `bash -c …` or mid-exec (an empty
    // cmdline, named `[sleep]`), and a close right then names it so. So the command waits until the
    // job's argv[0] is the marker, which is when the report's name is settled.
    const r = await sb.exec(
      `bash -c 'exec -a ${m} sleep 300' >/dev/null 2>&1 & until IFS= read -r -d '' a0 </proc/$!/cmdline; [ "$a0" = ${m} ]; do kill -0 $! || exit 9; done; echo started`,
    );
    expect(r.output).toBe('started\n');
    expect(pidsWith(m)).toHaveLength(1);
    // Named in the close report: killing it is on the record.
    expect((await sb.close()).leftRunning).toEqual([`${m} 300`]);
    expect(pidsWith(m)).toEqual([]);
  });

  it('refuses commands after close', async () => {
    const sb = await local();
    await sb.close();
    await expect(sb.exec('true')).rejects.toThrow(/closed/);
  });

  it('reports a missing shell as exit 127 rather than throwing', async () => {
    const sb = await local({ PATH: '/nonexistent' });
    const r = await sb.exec('true');
    expect(r.exitCode).toBe(127);
  });
});
