// `qs check`: a kept workspace re-checked with the task file read again, so an edited check counts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryIo } from '@quickloop/cli-kit';
import { removeLayout } from '@quickloop/sandbox';
import { cli } from './cli.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'node_modules', '.bin');
const env = { PATH: `${BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: process.env.HOME ?? '/root', NO_COLOR: '1' };

const task = (check: string) => `name: note-taker
goal: Write a note that says hello.
docs:
  entrypoint: https://docs.greeter.test/index.html
replay:
  - echo hello > note.txt
  - echo the note is written
success:
${check}
`;

let work: string;
let kept: string;
let stream: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'qs-check-cmd-'));
  writeFileSync(join(work, 'task.yaml'), task('  script: grep -q hello note.txt'));
  const r = spawnSync('qs', ['run', 'task.yaml', '--docs-map', `https://docs.greeter.test/=${join(ROOT, 'fixtures', 'docs-site')}`, '--keep', '-q'], { cwd: work, env, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  stream = join(work, 'run.ndjson');
  writeFileSync(stream, r.stdout);
  const done = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((e) => e.type === 'run.completed');
  kept = String(done?.workspace_kept);
});

afterAll(() => {
  if (kept) removeLayout({ root: kept });
  rmSync(work, { recursive: true, force: true });
});

async function qsCheck(...argv: string[]) {
  const io = memoryIo({ cwd: work, env });
  const code = await cli(['check', ...argv], io);
  return { code, out: io.out(), err: io.err() };
}

describe('qs check', () => {
  it('passes the unchanged check against the kept workspace, given its root or its workspace folder', async () => {
    for (const dir of [kept, join(kept, 'workspace')]) {
      const r = await qsCheck('task.yaml', '--sandbox', dir);
      expect(r.code).toBe(0);
      expect(r.out).toMatch(/^\[PASS\] note-taker check exited 0 \(bwrap\)/m);
    }
  });

  it('reads the task file again: an edited check is the one that runs', async () => {
    writeFileSync(join(work, 'edited.yaml'), task("  script: grep -q goodbye note.txt || qs_fail 'the note does not say goodbye'"));
    const r = await qsCheck('edited.yaml', '--sandbox', kept);
    expect(r.code).toBe(1);
    expect(r.out).toContain('the note does not say goodbye');
    expect(r.out).toMatch(/^\[FAIL\] note-taker check exited 1 \(bwrap\)/m);
  });

  it('gives expect_output the saved run\'s transcript with --stream, and says when it has none', async () => {
    writeFileSync(join(work, 'printed.yaml'), task('  expect_output:\n    contains: the note is written'));
    expect((await qsCheck('printed.yaml', '--sandbox', kept, '--stream', stream)).code).toBe(0);
    const bare = await qsCheck('printed.yaml', '--sandbox', kept);
    expect(bare.code).toBe(1);
    expect(bare.err).toContain('no --stream was given, so it sees an empty transcript');
  });

  it("shows the check's output with its controls made visible: a file from the workspace cannot act on the terminal", async () => {
    // What a command run from the docs left in the workspace, printed by the check: clipboard, screen clear, a bidi override.
    writeFileSync(join(work, 'hostile.yaml'), task("  script: printf 'a\\033]52;c;ZXZpbA==\\007b\\033[2J\\342\\200\\256c\\rd\\nsecond line\\n'; exit 1"));
    const r = await qsCheck('hostile.yaml', '--sandbox', kept);
    expect(r.code).toBe(1);
    expect(r.out).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]/);
    expect(r.out).toContain('a\\x1b]52;c;ZXZpbA==\\x07b\\x1b[2J\\u202ec\\rd\nsecond line\n[FAIL] note-taker');
  });

  it('checks the kept sandbox itself, never a layout a command left in its workspace (whose home led to the host)', async () => {
    // The run's own commands make a sandbox layout in the workspace: a marker, a workspace and a tmp
    // folder, and a home linking up to the host's /tmp with as many `..` as the workspace is deep.
    const escaped = `qs-check-escape-${process.pid}-${Date.now().toString(36)}`;
    const planting = `name: planter
goal: Leave a workspace behind.
docs:
  entrypoint: https://docs.greeter.test/index.html
replay:
  - echo 'made by quickloop' > .quickloop-sandbox && mkdir workspace tmp && ln -s "$(pwd | sed 's|/[^/]*|../|g')tmp" home
success:
  script: echo escaped > "$HOME/${escaped}"; test -f .quickloop-sandbox || qs_fail 'not the kept workspace'
`;
    writeFileSync(join(work, 'planter.yaml'), planting);
    const r = spawnSync('qs', ['run', 'planter.yaml', '--docs-map', `https://docs.greeter.test/=${join(ROOT, 'fixtures', 'docs-site')}`, '--keep', '-q'], { cwd: work, env, encoding: 'utf8' });
    const root = String(r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((e) => e.type === 'run.completed')?.workspace_kept);
    try {
      expect(r.status, r.stderr).toBe(0);
      // What --keep's workspace line names: the kept sandbox's workspace folder.
      const c = await qsCheck('planter.yaml', '--sandbox', join(root, 'workspace'));
      expect(existsSync(join('/tmp', escaped))).toBe(false);
      expect(c.out).toMatch(/^\[PASS\] planter check exited 0 \(bwrap\)/m);
      // Named by a folder inside it, the command's layout is refused outright.
      // (As root, the sandbox's user made it, so it is another user's; otherwise it lies inside the real root.)
      await expect(qsCheck('planter.yaml', '--sandbox', join(root, 'workspace', 'workspace'))).rejects.toThrow(/is inside the quickloop sandbox|is not a quickloop sandbox of this user's \(another user owns it\)/);
      // Named by its root, the sandbox is that root, whatever its parent holds.
      expect((await qsCheck('planter.yaml', '--sandbox', root)).out).toMatch(/^\[PASS\] planter check exited 0 \(bwrap\)/m);
      expect(existsSync(join('/tmp', escaped))).toBe(false);
    } finally {
      rmSync(join('/tmp', escaped), { force: true });
      if (root !== 'undefined') removeLayout({ root });
    }
  });

  it.runIf(process.arch === 'x64')("a served program cannot turn the check's failing tools into a pass: it can neither feed their pipes nor kill them", async () => {
    // The quickstart's server, as a replay leaves it: once served, it finds the check's grep, writes
    // what it looks for into the pipe grep reads, or kills it (under `!` a killed grep passes).
    const server = `import os, signal, sys, time
mode = sys.argv[1]
for _ in range(300):
    for p in os.listdir('/proc'):
        try:
            if p.isdigit() and open('/proc/%s/comm' % p).read() == 'grep\\n':
                if mode == 'feed':
                    fd = os.open('/proc/%s/fd/0' % p, os.O_WRONLY); os.write(fd, b'READY\\n'); os.close(fd)
                else:
                    os.kill(int(p), signal.SIGKILL)
                print(mode, 'done', flush=True)
                time.sleep(600)
        except OSError as e:
            print(mode, 'refused:', e.strerror, flush=True)
            time.sleep(600)
    time.sleep(0.01)
`;
    const served = (mode: string, script: string) => `name: served-${mode}
goal: Start the server.
docs:
  entrypoint: https://docs.greeter.test/index.html
replay:
  - |
    cat > server.py <<'PY'
${server.replace(/^/gm, '    ')}
    PY
success:
  serve: python3 server.py ${mode}
  script: |
    ${script}
`;
    const cases = [
      ['feed', "{ sleep 3; echo 'not ready'; } | grep -q READY || qs_fail 'the server never said READY'", 'the server never said READY'],
      ['kill', "! { sleep 3; echo ERROR; } | grep -q ERROR || qs_fail 'the log has an ERROR'", 'the log has an ERROR'],
    ] as const;
    for (const [mode, script, reason] of cases) {
      writeFileSync(join(work, `served-${mode}.yaml`), served(mode, script));
      const r = spawnSync('qs', ['run', `served-${mode}.yaml`, '--docs-map', `https://docs.greeter.test/=${join(ROOT, 'fixtures', 'docs-site')}`, '-q'], { cwd: work, env, encoding: 'utf8' });
      const done = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((e) => e.type === 'run.completed');
      expect(done, mode).toMatchObject({ classification: 'docs_gap', detail: `check failed: ${reason}` });
      expect(r.status, mode).toBe(1);
    }
  });

  it('--show prints the compiled check without a sandbox', async () => {
    const r = await qsCheck('task.yaml', '--show');
    expect(r.code).toBe(0);
    expect(r.out).toContain('grep -q hello note.txt');
  });

  it('refuses what is not a kept sandbox or not a task, in one line', async () => {
    await expect(qsCheck('task.yaml', '--sandbox', work)).rejects.toThrow(`qs check: ${work} is not a kept quickloop sandbox`);
    await expect(qsCheck('task.yaml')).rejects.toThrow('--sandbox DIR is required');
    await expect(qsCheck('missing.yaml', '--sandbox', kept)).rejects.toThrow(/^qs check: missing\.yaml: /);
    await expect(qsCheck('task.yaml', '--sandbox', kept, '--stream', 'nope.ndjson')).rejects.toThrow('qs check: --stream');
    await expect(qsCheck('task.yaml', '--sandbox', kept, '--backend', 'local')).rejects.toThrow('--allow-unenforced');
  });
});
