// Acceptance: the real binaries in real shell pipelines, under the real (bwrap) sandbox.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'node_modules', '.bin');
const SITE = join(ROOT, 'fixtures', 'docs-site');
const EXAMPLE = join(ROOT, 'fixtures', 'examples', 'greeter.yaml');
const PIPELINE = join(ROOT, 'fixtures', 'pipeline');
const MAP = `--docs-map https://docs.greeter.test/=${SITE}`;

interface Result {
  /** Exit codes of every stage, first to last. */
  codes: number[];
  events: Array<Record<string, unknown> & { type: string }>;
  stdout: string;
  stderr: string;
}

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'qs-pipeline-'));
});
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

/** Runs a shell pipeline in its own process group; `onLine` sees stdout lines as they arrive. */
function sh(pipeline: string, onLine?: (line: string, pgid: number) => void): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `${pipeline}; echo "codes: \${PIPESTATUS[*]}" >&2`], {
      cwd: work,
      detached: true,
      env: { PATH: `${BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: process.env.HOME ?? '/root', NO_COLOR: '1', ANTHROPIC_API_KEY: 'sk-ant-never-in-a-sandbox' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let partial = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      partial += c.toString();
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) onLine?.(l, child.pid as number);
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', () => {
      const m = /codes: ([\d ]+)\s*$/.exec(stderr);
      const events = stdout
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown> & { type: string });
      resolve({ codes: m ? (m[1] as string).trim().split(' ').map(Number) : [], events, stdout, stderr });
    });
  });
}

const verdict = (r: Result) => r.events.find((e) => e.type === 'run.completed');

/** Pids whose command line contains `needle`, anywhere on the machine. */
function alive(needle: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ').includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('the replay pipeline, end to end', () => {
  it('passes the bundled example through qs-validate | qs-sandbox | qs-agent --agent replay | qs-check', async () => {
    const r = await sh(`qs-validate ${EXAMPLE} | qs-sandbox | qs-agent --agent replay ${MAP} | tee run.ndjson | qs-check`);
    expect(r.codes).toEqual([0, 0, 0, 0, 0]);
    expect(verdict(r)).toMatchObject({ classification: 'passed', label: 'PASS', backend: 'bwrap', enforced: true });
    expect(r.events.find((e) => e.type === 'sandbox.ready')).toMatchObject({ stage: 'qs-sandbox' });
    expect(r.stderr).toContain('PASS  greeter-quickstart: passed');
    expect(existsSync(String(r.events.find((e) => e.type === 'sandbox.ready')?.root))).toBe(false);
  });

  it('passes it through qs-validate | qs-agent | qs-check exactly as typed (qs-agent makes the sandbox)', async () => {
    const r = await sh(`qs-validate ${EXAMPLE} | qs-agent ${MAP} | qs-check`);
    expect(r.codes).toEqual([0, 0, 0]);
    expect(r.events.find((e) => e.type === 'sandbox.ready')).toMatchObject({ stage: 'qs-agent', backend: 'bwrap' });
    expect(verdict(r)).toMatchObject({ classification: 'passed' });
    expect(r.stdout).not.toContain('sk-ant-never-in-a-sandbox');
  });

  const fixtures = readdirSync(PIPELINE).filter((f) => f.endsWith('.yaml'));
  it.each(fixtures)('classifies fixtures/pipeline/%s as its first line says', async (file) => {
    const [, classification, code] = /^# expect: (\w+) (\d+)/.exec(readFileSync(join(PIPELINE, file), 'utf8')) ?? [];
    const r = await sh(`qs-validate ${join(PIPELINE, file)} | qs-sandbox | qs-agent --agent replay ${MAP} | qs-check`);
    expect(verdict(r), r.stderr).toMatchObject({ classification });
    expect(r.codes.at(-1)).toBe(Number(code));
    expect(existsSync(String(r.events.find((e) => e.type === 'sandbox.ready')?.root))).toBe(false);
  });

  it.each(['check-syntax.yaml', 'grep-bad-class.yaml', 'wait-no-serve.yaml', 'replay-nul.json', 'setup-nul.yaml'])(
    'refuses fixtures/tasks/invalid/%s in qs-validate (exit 3): nothing runs, qs-check says why',
    async (file) => {
      const r = await sh(`qs-validate ${join(ROOT, 'fixtures', 'tasks', 'invalid', file)} | qs-sandbox | qs-agent --agent replay ${MAP} | qs-check`);
      expect(r.codes).toEqual([3, 0, 0, 3]);
      expect(r.events.map((e) => e.type)).toEqual(['diagnostic', 'run.failed']);
      expect(r.stderr.split('\n').filter((l) => l.startsWith('INVALID'))).toHaveLength(1);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    },
  );

  it('reports the sandbox limit a documented command ran into as an event of that command, and names it in the verdict', async () => {
    const r = await sh(`qs-validate ${join(PIPELINE, 'limit-memory.yaml')} | qs-agent --agent replay ${MAP} | qs-check`);
    const call = r.events.find((e) => e.type === 'tool.call' && e.tool === 'bash');
    const hit = r.events.find((e) => e.type === 'sandbox.limit_hit');
    const memory = (r.events.find((e) => e.type === 'sandbox.ready')?.limits as Array<Record<string, unknown>>).find((l) => l.name === 'memory');
    expect(hit, r.stdout).toMatchObject({ stage: 'qs-agent', parent_id: call?.id, limit: 'memory', value: memory?.value, enforced_by: memory?.enforced_by, exit_code: 1, line: 'MemoryError' });
    // Before the command's result, like its denials and egress: the result closes the command.
    expect(r.events.indexOf(hit!)).toBeLessThan(r.events.findIndex((e) => e.type === 'tool.result' && e.parent_id === call?.id));
    expect(verdict(r)).toMatchObject({ classification: 'harness_error', evidential: false });
    expect(String(verdict(r)?.detail)).toMatch(/ran into the sandbox's memory limit \(4 GiB, enforced by \w+\): .*MemoryError.*says nothing about the docs/);
    expect(r.stderr).toContain("INCONCLUSIVE  greeter-limit-memory: harness_error — the command `python3 -c 'a = bytearray(64 * 1024 ** 3)'` ran into the sandbox's memory limit");
  });

  it('says of a route page the docs reader cannot give the agent (not text, too large) that it is the reader\'s limit, not a route that does not fit the site', async () => {
    const site = join(work, 'site-binary');
    mkdirSync(site);
    cpSync(SITE, site, { recursive: true });
    writeFileSync(join(site, 'binary.html'), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)));
    writeFileSync(join(work, 'binary-route.yaml'), ['name: greeter-binary-route', 'goal: Follow the quickstart.', 'docs:', '  path:', '    - https://docs.greeter.test/install.html', '    - https://docs.greeter.test/binary.html', 'replay:', '  - echo hi', 'success:', '  script: qs_fail "not built"', ''].join('\n'));
    const r = await sh(`qs-validate binary-route.yaml | qs-agent --agent replay --docs-map https://docs.greeter.test/=${site} | qs-check`);
    expect(r.codes).toEqual([0, 0, 2]);
    expect(r.events.find((e) => e.type === 'docs.error')).toMatchObject({ url: 'https://docs.greeter.test/binary.html', reason: 'not_text' });
    expect(verdict(r)).toMatchObject({ classification: 'harness_error', evidential: false });
    expect(String(verdict(r)?.detail)).toMatch(/^docs route page https:\/\/docs\.greeter\.test\/binary\.html could not be read \(not a text page .*\): the docs reader gives an agent no page that is not text or is too large, so the run says nothing about the docs$/);
  });

  it.each([
    ['a pattern grep cannot use', `qs_expect_output --matches '[z-a]'`, 'qs_expect_output: grep could not use the pattern /[z-a]/'],
    ['no URL', 'qs_wait_http', 'qs_wait_http needs a URL or a path'],
    ['an option it does not know', 'qs_wait_http / --within 3', 'qs_wait_http: unknown option --within'],
    ['no pattern', 'qs_expect_output', 'qs_expect_output needs --contains or --matches'],
    ['a pattern grep cannot use, for a body that answered', `qs_serve python3 -m http.server "$QS_PORT" --bind 127.0.0.1\nqs_wait_http / --matches '[z-a]' --timeout 5`, 'qs_wait_http: grep could not use the pattern /[z-a]/'],
  ])("classifies a check whose helper was given %s as harness_error: it checked nothing, so it is no verdict on the docs", async (_name, script, reason) => {
    writeFileSync(join(work, 'misused.yaml'), ['name: greeter-misused-helper', 'goal: Follow the quickstart.', 'docs:', '  path:', '    - https://docs.greeter.test/quickstart.html', 'replay:', '  - echo Hello, Ada!', 'success:', `  script: ${JSON.stringify(script)}`, ''].join('\n'));
    const r = await sh(`qs-validate misused.yaml | qs-agent --agent replay ${MAP} | qs-check`);
    expect(r.codes).toEqual([0, 0, 2]);
    expect(r.events.find((e) => e.type === 'check.completed')).toMatchObject({ passed: false, reason: `check failed: ${reason}` });
    expect(verdict(r)).toMatchObject({ classification: 'harness_error', evidential: false, detail: `the success check checked nothing: its helper failed (${reason}), so the run says nothing about the docs` });
  });

  it('classifies a check that does not parse (a hand-edited task.loaded) as harness_error, at the line of the success block', async () => {
    writeFileSync(join(work, 'syntax.yaml'), 'name: syntax-at-run-time\ngoal: Build it.\ndocs:\n  path:\n    - https://docs.greeter.test/install.html\nreplay:\n  - mkdir -p greeter\nsuccess:\n  script: test -d greeter\n');
    const edit = `node -e 'let s="";process.stdin.on("data",(c)=>(s+=c)).on("end",()=>{const e=JSON.parse(s);e.check.script+="if true; then\\n";e.check.body+="if true; then\\n";process.stdout.write(JSON.stringify(e)+"\\n")})'`;
    const r = await sh(`qs-validate syntax.yaml | ${edit} | qs-sandbox | qs-agent --agent replay ${MAP} | qs-check`);
    expect(r.codes).toEqual([0, 0, 0, 0, 2]);
    expect(verdict(r)).toMatchObject({ classification: 'harness_error', check_exit_code: 2, detail: 'the success check is not valid bash (line 3 of the success block: syntax error: unexpected end of file)' });
  });

  it.each([
    ['a setup command', 'e.task.setup=["echo a\\u0000b"]', ['run.failed']],
    ['a replay command', 'e.task.replay.push("echo a\\u0000b")', ['agent.completed', 'check.started', 'check.completed', 'run.completed']],
    ['the check', 'e.check.script+="echo \\u0000\\n"', ['agent.completed', 'run.failed']],
  ])('a NUL byte in %s of a hand-edited task.loaded is a recorded failure, never a crash, and leaves no sandbox behind', async (_what, change, tail) => {
    writeFileSync(join(work, 'nul.yaml'), 'name: nul-downstream\ngoal: Build it.\ndocs:\n  path:\n    - https://docs.greeter.test/install.html\nreplay:\n  - mkdir -p greeter\nsuccess:\n  script: test -d greeter\n');
    const edit = `node -e 'let s="";process.stdin.on("data",(c)=>(s+=c)).on("end",()=>{const e=JSON.parse(s);${change};process.stdout.write(JSON.stringify(e)+"\\n")})'`;
    for (const stages of [`qs-sandbox | qs-agent --agent replay ${MAP}`, `qs-agent --agent replay ${MAP}`]) {
      const r = await sh(`qs-validate nul.yaml | ${edit} | ${stages} | qs-check`);
      expect(r.stderr).not.toMatch(/\n\s+at |TypeError/);
      expect(r.stderr).toContain('NUL byte');
      // sandbox.usage of an earlier stage may be forwarded anywhere after its sandbox.ready.
      const types = r.events.map((e) => e.type).filter((t) => t !== 'sandbox.usage');
      expect(types.slice(-tail.length), types.join(' ')).toEqual(tail);
      if (types.includes('agent.started')) expect(types).toContain('agent.completed');
      const ready = r.events.find((e) => e.type === 'sandbox.ready');
      if (ready) expect(existsSync(String(ready.root))).toBe(false);
      expect([0, 2, 3]).toContain(r.codes.at(-1));
    }
  });

  it('runs setup in qs-sandbox and the agent after it, in the same workspace', async () => {
    const r = await sh(`qs-validate ${join(PIPELINE, 'with-setup.yaml')} | qs-sandbox | qs-agent ${MAP} | qs-check`);
    expect(r.codes).toEqual([0, 0, 0, 0]);
    const types = r.events.map((e) => e.type);
    expect(types.indexOf('setup.completed')).toBeLessThan(types.indexOf('agent.started'));
    expect(r.events.filter((e) => e.type === 'sandbox.ready')).toHaveLength(1);
    expect(verdict(r)).toMatchObject({ classification: 'passed' });
  });

  it('runs a success.file saved by a Windows editor (a byte-order mark, CRLF line ends) as the author wrote it', async () => {
    // Each line would otherwise end in a CR that bash keeps: `test -d greeter\r` asks for a folder that
    // is not there, and the mark makes the first word an unknown command, so a working run read as a docs gap.
    writeFileSync(join(work, 'windows.sh'), '\uFEFFtest -d greeter || qs_fail "no greeter folder"\r\ntest -f greeter/greet.js\r\n[ "$(cat greeter/greet.js)" = ok ] || qs_fail "greet.js is not ok"\r\n');
    writeFileSync(
      join(work, 'windows.yaml'),
      'name: windows-check\ngoal: Make the greeter folder.\ndocs: {path: [https://docs.greeter.test/install.html]}\nreplay: ["mkdir -p greeter && printf ok > greeter/greet.js"]\nsuccess: {file: windows.sh}\n',
    );
    const r = await sh(`qs-validate windows.yaml | qs-agent ${MAP} | qs-check`);
    expect(verdict(r), r.stderr).toMatchObject({ classification: 'passed' });
    expect(r.codes).toEqual([0, 0, 0]);
  });

  it('qs show points at a page to look at first for a docs gap only: an inconclusive run says nothing about the docs', async () => {
    const shown = async (file: string) => (await sh(`qs-validate ${join(PIPELINE, file)} | qs-agent ${MAP} | qs-check 2>/dev/null | qs show - > shown.txt`), readFileSync(join(work, 'shown.txt'), 'utf8'));
    const inconclusive = await shown('route-missing.yaml');
    expect(inconclusive).toMatch(/INCONCLUSIVE greeter-route-missing: harness_error\n/);
    expect(inconclusive).not.toContain('where to look first');
    expect(await shown('docs-gap.yaml')).toMatch(/FAIL greeter-docs-gap: docs_gap\n.*where to look first: https:\/\/docs\.greeter\.test\/quickstart\.html\n/);
  });

  it('keeps the workspace with --keep, re-checks it from the saved stream, and shows the run', async () => {
    const first = await sh(`qs-validate ${EXAMPLE} | qs-sandbox --keep | qs-agent ${MAP} | tee kept.ndjson | qs-check > checked.ndjson`);
    expect(first.codes).toEqual([0, 0, 0, 0, 0]);
    const checked = readFileSync(join(work, 'checked.ndjson'), 'utf8');
    const root = /"workspace_kept":"([^"]+)"/.exec(checked)?.[1] as string;
    expect(existsSync(join(root, 'workspace', 'greeter', 'server.js'))).toBe(true);
    try {
      const again = await sh('qs-check < kept.ndjson');
      expect(again.codes).toEqual([0]);
      expect(verdict(again)).toMatchObject({ classification: 'passed', workspace_kept: root });
      const show = await sh('qs show checked.ndjson > shown.txt');
      expect(show.codes).toEqual([0]);
      const text = readFileSync(join(work, 'shown.txt'), 'utf8');
      expect(text).toMatch(/^\[ +0\.0s\] task greeter-quickstart \(replay\+agent\)/);
      expect(text).toContain('$ node greeter/greet.js Ada');
      expect(text).toContain('PASS greeter-quickstart: passed');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('ends quietly with 0 when the reader goes away (| head), and still removes the workspace', async () => {
    const r = await sh(`qs-validate ${EXAMPLE} | qs-sandbox | qs-agent ${MAP} | qs-check | head -1`);
    expect(r.codes).toEqual([0, 0, 0, 0, 0]);
    expect(r.events.map((e) => e.type)).toEqual(['task.loaded']);
    const root = /ready \(bwrap\) (\S+)\/workspace/.exec(r.stderr)?.[1] as string;
    expect(root).toMatch(/quickloop-/);
    expect(existsSync(root)).toBe(false);
  });

  it('stops on a bad line with its number and exit 3, and refuses unknown flags with 3', async () => {
    const bad = await sh(`printf '%s\\n' '{"v":1,"type":"x.y","ts":"2026-01-01T00:00:00.000Z","run_id":"r","stage":"s"}' 'not json' | qs-agent`);
    expect(bad.codes).toEqual([0, 3]);
    expect(bad.stderr).toContain('qs-agent: stdin:2: not JSON');
    expect(bad.events.map((e) => e.type)).toEqual(['x.y']);
    const flag = await sh('qs-check --bogus < /dev/null');
    expect(flag.codes).toEqual([3]);
    expect(flag.stderr).toContain('bogus');
    const newer = await sh(`echo '{"v":99,"type":"x.y","ts":"2026-01-01T00:00:00.000Z","run_id":"r","stage":"s"}' | qs-check`);
    expect(newer.codes).toEqual([0, 3]);
    expect(newer.stderr).toMatch(/stdin:1: .*v99 is newer/);
  });

  it('runs as `pnpm example` (scripts/example.sh): a real sweep of the bundled examples, offline, its summary printed, only its results left behind', async () => {
    const tmp = mkdtempSync(join(work, 'example-tmp-'));
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      // Its stdout is the sweep's Markdown summary, not events: read as it is.
      const child = spawn('bash', [join(ROOT, 'scripts', 'example.sh')], { cwd: work, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', NO_COLOR: '1', TMPDIR: tmp }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^# quickloop results\n\n6 runs of 2 tasks · 3 passed · 3 docs gap · 0 inconclusive · 0 skipped · backend bwrap/);
    expect(r.stdout).toContain('look first at https://docs.greeter.test/quickstart.html');
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('example: as expected — greeter-quickstart passed 3/3, greeter-docs-gap failed 3/3 (a docs gap)');
    // Every sandbox the sweep made (and its proxy socket folders, and the examples' copies) is gone;
    // what stays is the folder of results it names.
    const left = readdirSync(tmp);
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(/^quickloop-example-/);
    expect(readdirSync(join(tmp, left[0] as string)).sort()).toEqual(['summary.md', 'sweep']);
    expect(r.stdout).toContain(join(tmp, left[0] as string));
  });

  it('qs run exits 3 on an invalid task file', async () => {
    const r = await sh(`qs run ${join(ROOT, 'fixtures', 'tasks', 'invalid', 'blank-name.yaml')} ${MAP}`);
    expect(r.codes).toEqual([3]);
    expect(r.events.map((e) => e.type)).not.toContain('task.loaded');
    expect(r.events.find((e) => e.type === 'diagnostic')).toMatchObject({ severity: 'error' });
  });

  it('qs run composes the same pipeline, and hands the docs reader its flags', async () => {
    const out = join(work, 'affordances-out');
    const r = await sh(`qs run ${EXAMPLE} ${MAP} --offline --affordances none --probe-affordances --rate-limit 0 --out ${out}`);
    expect(r.codes).toEqual([0]);
    expect(verdict(r)).toMatchObject({ classification: 'passed' });
    expect(r.events.find((e) => e.type === 'agent.started')).toMatchObject({ affordances: 'none' });
    expect(r.events.find((e) => e.type === 'docs.affordances')).toMatchObject({ affordances: 'none', probes: [{ kind: 'llms.txt', present: true }, {}, {}] });
    // results.json and the quickstarted trace carry the policy and the probe.
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { tasks: Array<{ runs: Array<{ affordances: { policy: string; found: Record<string, { present: boolean }> } }> }> };
    const run = results.tasks[0]?.runs[0];
    expect(run?.affordances).toMatchObject({ policy: 'none', found: { 'llms.txt': { present: true }, 'llms-full.txt': {}, md: {} }, withheld: [] });
    const slug = readdirSync(out).find((f) => f !== 'results.json' && f !== 'plan.ndjson') as string;
    const trace = readFileSync(join(out, slug, '1', 'trace.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(trace[0]).toMatchObject({ type: 'run_start', affordance_policy: 'none' });
    expect(trace.find((e) => e.type === 'affordances')).toMatchObject({ found: { 'llms.txt': { present: true } } });
    const refused = await sh(`qs run ${EXAMPLE} --offline`);
    expect(refused.codes).toEqual([3]);
    expect(refused.stderr).toContain('--offline needs a --cache-dir (or a --docs-map) to read from');
  });

  it.each([
    ['qs-validate | qs-sandbox | qs-agent | qs-check', (task: string) => `qs-validate ${task} | qs-sandbox | qs-agent ${MAP} | qs-check`],
    ['qs-validate | qs-agent | qs-check', (task: string) => `qs-validate ${task} | qs-agent ${MAP} | qs-check`],
    ['qs run', (task: string) => `qs run ${task} ${MAP}`],
  ])('Ctrl-C on a running %s reports interrupted, exits 130 and leaves no process behind', async (_name, command) => {
    const marker = `${40 + Math.floor(Math.random() * 50)}.${Math.floor(Math.random() * 900) + 100}`;
    const task = join(work, 'slow.yaml');
    writeFileSync(task, `name: slow\ngoal: Wait a while.\ndocs:\n  path:\n    - https://docs.greeter.test/install.html\nreplay:\n  - sleep ${marker}\nsuccess:\n  script: 'true'\n`);
    let sent = false;
    const r = await sh(command(task), (line, pgid) => {
      if (!sent && line.includes('"tool.call"') && line.includes(`sleep ${marker}`)) {
        sent = true;
        // What a terminal does on Ctrl-C: SIGINT to every process of the foreground group.
        setTimeout(() => process.kill(-pgid, 'SIGINT'), 300);
      }
    });
    expect(sent).toBe(true);
    expect(r.codes.at(-1)).toBe(130);
    // qs-agent too (qs run reports its stages as one code).
    if (!command('t').startsWith('qs run')) expect(r.codes.at(-2)).toBe(130);
    if (command('t').startsWith('qs run')) {
      // qs run signals the stages upstream of qs-check, which records the agent's own end and then
      // the run as interrupted upstream.
      expect(r.events.find((e) => e.type === 'agent.completed')).toMatchObject({ stop_reason: 'interrupted' });
      expect(r.events.at(-1)).toMatchObject({ type: 'run.interrupted', signal: 'upstream' });
    } else expect(r.events.at(-1)).toMatchObject({ type: 'run.interrupted', signal: 'SIGINT' });
    expect(alive(`sleep ${marker}`)).toEqual([]);
    const root = String(r.events.find((e) => e.type === 'sandbox.ready')?.root);
    expect(existsSync(root)).toBe(false);
  });
});

describe('text from inside the sandbox on a terminal', () => {
  // Anything a terminal acts on (NO_COLOR is set, so not even SGR is legitimate).
  const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
  // What printf in the sandbox writes: a title, a screen clear, a CR overwrite, a bidi override, a C1 CSI.
  const EVIL = String.raw`\033]0;owned\007\033[2J\rok\342\200\256x\302\2331A`;

  it('reaches every stage\'s stderr and qs show made visible, and stays raw in the events', async () => {
    const task = join(work, 'hostile.yaml');
    const q = (s: string): string => JSON.stringify(s);
    writeFileSync(
      task,
      [
        'name: hostile',
        'goal: Print what the docs say.',
        'docs:\n  path:\n    - https://docs.greeter.test/install.html',
        // A process left running by setup is named on qs-sandbox's stderr (once it has exec'd under its name).
        `setup:\n  - ${q(`printf '${EVIL}\\n'; (exec -a "$(printf '${EVIL}')" sleep 300) >/dev/null 2>&1 & until IFS= read -r -d '' a0 </proc/$!/cmdline; [ -n "$a0" ] && [ "$a0" != bash ]; do kill -0 $! || exit 9; done`)}`,
        `replay:\n  - ${q(`printf '${EVIL}\\n'; exit 1`)}`,
        `success:\n  script: ${q(`printf 'check failed: ${EVIL}\\n'; exit 1`)}`,
        '',
      ].join('\n'),
    );
    const saved = join(work, 'hostile.ndjson');
    const shown = join(work, 'hostile.txt');
    const r = await sh(`qs-validate ${task} | qs-sandbox | qs-agent ${MAP} | qs-check | tee ${saved}`);
    expect(r.codes.slice(0, 4)).toEqual([0, 0, 0, 1]);
    const show = await sh(`qs show --verbose ${saved} > ${shown}`);
    expect(show.codes).toEqual([0]);
    expect(show.stderr).not.toMatch(RAW);
    const raw = '\x1b]0;owned\x07\x1b[2J\rok\u202ex\u009b1A';
    // The events keep the raw bytes: the stream is evidence, not display.
    const result = r.events.find((e) => e.type === 'tool.result');
    expect(result?.output).toBe(`${raw}\n`);
    expect(r.events.find((e) => e.type === 'setup.completed')?.output).toBe(`${raw}\n`);
    expect(verdict(r)?.classification).not.toBe('passed');
    // Every stage's stderr and qs show: none of it acts on the terminal, all of it is visible.
    const visible = '\\x1b]0;owned\\x07\\x1b[2J\\rok\\u202ex\\x9b1A';
    expect(r.stderr).not.toMatch(RAW);
    expect(r.stderr).toContain(`${visible} 300`);
    expect(r.stderr).toContain('qs-sandbox: hostile: setup left 1 process running');
    const text = readFileSync(shown, 'utf8');
    expect(text).not.toMatch(RAW);
    expect(text).toContain(`    | ${visible}`);
    expect(text).toContain(`reason: check failed: ${visible}`);
  });
});
