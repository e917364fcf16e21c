// `qs run --install-cache DIR` end to end in the enforced sandbox: what attempt 1 leaves in its npm
// cache reaches attempt 2 only as a blob that hashes to its name, and what its pip installed reaches
// attempt 2 only as the index's own file (real processes, real bwrap, real npm and pip).
import { createHash } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'node_modules', '.bin');
const SITE = join(ROOT, 'fixtures', 'docs-site');

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'qs-install-cache-'));
});
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

const rel = (digest: string) => `${digest.slice(0, 2)}/${digest.slice(2, 4)}/${digest.slice(4)}`;
const hex = (s: string) => createHash('sha512').update(s).digest('hex');

function files(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, r: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(join(d, e.name), `${r}${e.name}/`) : out.push(`${r}${e.name}`);
  };
  walk(dir, '');
  return out.sort();
}

function qs(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(join(BIN, 'qs'), args, { cwd: work, env: { PATH: `${BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`, NO_COLOR: '1', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function replayTask(file: string, name: string, lines: string[]): void {
  writeFileSync(
    join(work, file),
    [`name: ${name}`, 'goal: Look at the npm cache.', 'docs:', '  path:', '    - https://docs.greeter.test/install.html', 'replay:', '  - |', ...lines.map((l) => `    ${l}`), 'success:', '  script: |', '    true', ''].join('\n'),
  );
}

describe('qs run --install-cache', () => {
  it('a poisoned blob, index entry and symlink written by attempt 1 do not reach attempt 2; a good blob does', async () => {
    const good = rel(hex('good blob'));
    // A name that is a real digest (of other content), holding the poison.
    const bad = rel(hex('what a package really holds'));
    const linked = rel(hex('linked'));
    const probe = [
      'C=$HOME/.npm/_cacache',
      `[ -f "$C/content-v2/sha512/${good}" ] && echo GOOD-SEEN || echo GOOD-ABSENT`,
      `[ -e "$C/content-v2/sha512/${bad}" ] && echo POISON-SEEN || echo POISON-ABSENT`,
      `[ -e "$C/content-v2/sha512/${linked}" ] && echo LINK-SEEN || echo LINK-ABSENT`,
      '[ -e "$C/index-v5" ] && echo INDEX-SEEN || echo INDEX-ABSENT',
      `for p in ${good} ${bad} ${linked}; do mkdir -p "$C/content-v2/sha512/\${p%/*}"; done`,
      `printf 'good blob' > "$C/content-v2/sha512/${good}"`,
      `printf 'poison' > "$C/content-v2/sha512/${bad}"`,
      `printf linked > "$HOME/linked" && ln -s "$HOME/linked" "$C/content-v2/sha512/${linked}"`,
      'mkdir -p "$C/index-v5/aa/bb" && echo poisoned > "$C/index-v5/aa/bb/entry"',
    ];
    writeFileSync(
      join(work, 'probe.yaml'),
      ['name: cache-probe', 'goal: Look at the npm cache.', 'docs:', '  path:', '    - https://docs.greeter.test/install.html', 'replay:', '  - |', ...probe.map((l) => `    ${l}`), 'success:', '  script: |', '    true', ''].join('\n'),
    );
    const store = join(work, 'store');
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(join(BIN, 'qs'), ['run', 'probe.yaml', '--repeat', '2', '--install-cache', 'store', '--docs-map', `https://docs.greeter.test/=${SITE}`, '--out', 'out'], {
        cwd: work,
        env: { PATH: `${BIN}:${process.env.PATH ?? '/usr/bin:/bin'}`, NO_COLOR: '1' },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(r.code, r.stderr).toBe(0);
    const events = r.stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { type: string; run_id: string; output?: string; backend?: string });
    expect(events.find((e) => e.type === 'sandbox.ready')?.backend).toBe('bwrap');
    const outputs = events.filter((e) => e.type === 'tool.result').map((e) => (e.output ?? '').trim().split('\n'));
    expect(outputs).toEqual([
      ['GOOD-ABSENT', 'POISON-ABSENT', 'LINK-ABSENT', 'INDEX-ABSENT'],
      ['GOOD-SEEN', 'POISON-ABSENT', 'LINK-ABSENT', 'INDEX-ABSENT'],
    ]);
    // qs-check said what it refused, each time (both attempts left the same things).
    expect(r.stderr.match(/install cache: refused what the run left in its npm cache \(1 not_regular, 1 hash_mismatch\)|install cache: refused what the run left in its npm cache \(1 hash_mismatch, 1 not_regular\)/g)).toHaveLength(2);
    expect(files(join(store, 'npm')).filter((f) => !f.startsWith('tmp/'))).toEqual([`content-v2/sha512/${good}`]);
  });

  it('a packument and index entry forged by attempt 1 do not reach attempt 2: its npm reads the registry\'s packument from the cache, never asking for it', async () => {
    // Inside the sandbox: the registry npm uses there, the install, how npm got ms's packument, then the forgery.
    const forge = [
      'const c = require("crypto"), f = require("fs"), p = require("path");',
      'const reg = process.argv[1], C = process.env.HOME + "/.npm/_cacache";',
      'const body = JSON.stringify({ name: "ms", "dist-tags": { latest: "9.9.9" }, versions: { "9.9.9": { name: "ms", version: "9.9.9", dist: { tarball: reg + "ms/-/ms-9.9.9.tgz", integrity: "sha512-AAAA" } } } });',
      'const hex = c.createHash("sha512").update(body).digest("hex");',
      'const blob = p.join(C, "content-v2/sha512", hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));',
      'f.mkdirSync(p.dirname(blob), { recursive: true }); f.writeFileSync(blob, body);',
      'const key = "make-fetch-happen:request-cache:" + reg + "ms", kh = c.createHash("sha256").update(key).digest("hex");',
      'const bucket = p.join(C, "index-v5", kh.slice(0, 2), kh.slice(2, 4), kh.slice(4));',
      'f.mkdirSync(p.dirname(bucket), { recursive: true });',
      'for (const accept of ["application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*", "application/json"]) {',
      '  const e = JSON.stringify({ key, integrity: "sha512-" + c.createHash("sha512").update(body).digest("base64"), time: Date.now(), size: body.length, metadata: { time: Date.now(), url: reg + "ms", reqHeaders: { accept }, resHeaders: { "cache-control": "max-age=999999999" }, options: { compress: true } } });',
      '  f.appendFileSync(bucket, "\\n" + c.createHash("sha1").update(e).digest("hex") + "\\t" + e);',
      '}',
    ];
    replayTask('forge.yaml', 'packument-forge', [
      'REG=$(npm config get registry)',
      'mkdir -p app && cd app',
      `printf '%s' '{"name":"app","version":"0.0.0","private":true,"dependencies":{"ms":"*"}}' > package.json`,
      'npm install --no-audit --no-fund --no-update-notifier --loglevel=http > npm.log 2>&1 || { tail -5 npm.log; exit 1; }',
      'grep -F " ${REG}ms " npm.log | grep -o "(cache [a-z]*)" | sort -u | sed "s/^/PACKUMENT /"',
      `node -p '"MS " + require("ms/package.json").version'`,
      `node -e '${forge.join(' ')}' "$REG" && echo FORGED`,
    ]);
    const r = await qs(['run', 'forge.yaml', '--repeat', '2', '--install-cache', 'store2', '--docs-map', `https://docs.greeter.test/=${SITE}`, '--out', 'out2']);
    expect(r.code, r.stderr).toBe(0);
    const events = r.stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { type: string; output?: string; backend?: string });
    expect(events.find((e) => e.type === 'sandbox.ready')?.backend).toBe('bwrap');
    const outputs = events.filter((e) => e.type === 'tool.result').map((e) => (e.output ?? '').trim().split('\n'));
    expect(outputs).toHaveLength(2);
    const [first, second] = outputs as [string[], string[]];
    expect(first[0], first.join('\n')).toBe('PACKUMENT (cache miss)');
    expect(second[0], second.join('\n')).toBe('PACKUMENT (cache hit)');
    // The same real version both times (whatever the registry's latest is), never the forgery's.
    expect(first[1]).toMatch(/^MS \d+\.\d+\.\d+$/);
    expect(second[1]).toBe(first[1]);
    expect([first[2], second[2]]).toEqual(['FORGED', 'FORGED']);
  });

  it("what attempt 1's pip installed reaches attempt 2 as the index's own file in pip's cache: attempt 2's pip downloads nothing, and a forged entry or a made-up project changes nothing", async () => {
    // A real wheel, with a local version: pip asks for it as …1.0.0%2Bqs…, and the cache entry's key must be that URL.
    const filename = 'greeter_py-1.0.0+qs-py3-none-any.whl';
    const made = spawnSync('python3', ['-c', [
      'import sys, zipfile',
      'name, ver = "greeter_py", "1.0.0+qs"',
      'with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:',
      '    z.writestr("greeter_py/__init__.py", "def hello(who):\\n    return f\\"Hello, {who}!\\"\\n")',
      '    z.writestr(f"{name}-{ver}.dist-info/METADATA", f"Metadata-Version: 2.1\\nName: greeter-py\\nVersion: {ver}\\n")',
      '    z.writestr(f"{name}-{ver}.dist-info/WHEEL", "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")',
      '    z.writestr(f"{name}-{ver}.dist-info/RECORD", "")',
    ].join('\n'), join(work, filename)], { encoding: 'utf8' });
    expect(made.status, made.stderr).toBe(0);
    const wheel = readFileSync(join(work, filename));
    const digest = createHash('sha256').update(wheel).digest('hex');
    const seen: { path: string; agent: string }[] = [];
    const server: Server = createServer((req, res) => {
      seen.push({ path: req.url ?? '', agent: String(req.headers['user-agent'] ?? '') });
      if (req.url === '/simple/greeter-py/') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<!DOCTYPE html><html><body><a href="../../files/${filename.replace('+', '%2B')}#sha256=${digest}">${filename}</a></body></html>`);
      } else if (req.url === '/files/greeter_py-1.0.0%2Bqs-py3-none-any.whl') {
        // As PyPI says of a file: it never changes (the seeded entry keeps the index's own caching headers).
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(wheel.length), 'cache-control': 'max-age=365000000, immutable, public' });
        res.end(wheel);
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const index = `http://127.0.0.1:${port}/simple/`;
      const forge = [
        'import hashlib, os, sys',
        'url = sys.argv[1]',
        'h = hashlib.sha224(url.encode()).hexdigest()',
        'for base in ("http", "http-v2"):',
        '    d = os.path.join(os.environ["HOME"], ".cache", "pip", base, *h[:5])',
        '    os.makedirs(d, exist_ok=True)',
        '    open(os.path.join(d, h), "wb").write(b"cc=4,forged")',
        '    open(os.path.join(d, h + ".body"), "wb").write(b"poison")',
        'site = [p for p in sys.path if p.endswith("site-packages")][0]',
        'os.makedirs(os.path.join(site, "evil-6.6.6.dist-info"))',
        'open(os.path.join(site, "evil-6.6.6.dist-info", "INSTALLER"), "w").write("pip\\n")',
        'print("FORGED")',
      ];
      replayTask('pip.yaml', 'pip-cache', [
        'python3 -m venv .venv',
        `.venv/bin/pip install --index-url ${index} --trusted-host 127.0.0.1 greeter-py > pip.log 2>&1 || { tail -5 pip.log; exit 1; }`,
        'grep -o "Using cached\\|Downloading" pip.log | head -1 | sed "s/^/WHEEL /"',
        `.venv/bin/python -c "import greeter_py; print(greeter_py.hello('pip'))"`,
        `.venv/bin/python - "http://127.0.0.1:${port}/files/greeter_py-1.0.0%2Bqs-py3-none-any.whl" <<'PY'`,
        ...forge,
        'PY',
      ]);
      const r = await qs(['run', 'pip.yaml', '--repeat', '2', '--install-cache', 'store3', '--docs-map', `https://docs.greeter.test/=${SITE}`, '--out', 'out3', '-v'], { PIP_INDEX_URL: index });
      expect(r.code, r.stderr).toBe(0);
      const events = r.stdout.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { type: string; output?: string; backend?: string });
      expect(events.find((e) => e.type === 'sandbox.ready')?.backend).toBe('bwrap');
      const outputs = events.filter((e) => e.type === 'tool.result').map((e) => (e.output ?? '').trim().split('\n'));
      expect(outputs).toEqual([
        ['WHEEL Downloading', 'Hello, pip!', 'FORGED'],
        ['WHEEL Using cached', 'Hello, pip!', 'FORGED'],
      ]);
      const wheelGets = (agent: RegExp) => seen.filter((s) => s.path.startsWith('/files/') && agent.test(s.agent)).length;
      // pip downloaded the wheel once (attempt 1), the harness once; attempt 2 asked the index only for its page.
      expect(wheelGets(/^pip\//)).toBe(1);
      expect(wheelGets(/^quickloop-install-cache$/)).toBe(1);
      expect(seen.filter((s) => s.path === '/simple/greeter-py/' && /^pip\//.test(s.agent))).toHaveLength(2);
      // The made-up project was looked up on the index, found missing there, and nothing came of it.
      expect(seen.some((s) => s.path === '/simple/evil/' && s.agent === 'quickloop-install-cache')).toBe(true);
      expect(files(join(work, 'store3', 'pip')).filter((f) => !f.startsWith('tmp/'))).toEqual([`entries/${createHash('sha224').update(`http://127.0.0.1:${port}/files/greeter_py-1.0.0%2Bqs-py3-none-any.whl`).digest('hex')}.json`, `files/${digest}`, 'layouts']);
      // The layouts attempt 1 left (its pip's, and the forgery's other one): what is seeded for attempt 2. A hint only.
      expect(readFileSync(join(work, 'store3', 'pip', 'layouts'), 'utf8')).toBe('http\nhttp-v2\n');
      expect(r.stderr).toMatch(/pip-cache#1 +qs-check: install cache: pip files from the index: 1 fetched, 0 already there, \d+ not on the index/);
      expect(r.stderr).toMatch(/pip-cache#2 +qs-check: install cache: pip files from the index: 0 fetched, 1 already there, \d+ not on the index/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a store over its --install-cache-max is trimmed, oldest first, before the first attempt; the flag alone or a bad size is a usage error', async () => {
    // Two blobs of 1 MiB each in a store limited to 1 MiB: the older goes (the store then holds 80% or less).
    const put = (content: Buffer, day: number): string => {
      const path = join(work, 'store4', 'npm', 'content-v2', 'sha512', rel(createHash('sha512').update(content).digest('hex')));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, content);
      utimesSync(path, new Date(Date.UTC(2026, 0, day)), new Date(Date.UTC(2026, 0, day)));
      return path;
    };
    const older = put(Buffer.alloc(1024 * 1024, 'o'), 1);
    const newer = put(Buffer.alloc(512 * 1024, 'n'), 2);
    replayTask('trim.yaml', 'trim', ['true']);
    const r = await qs(['run', 'trim.yaml', '--install-cache', 'store4', '--install-cache-max', '1M', '--docs-map', `https://docs.greeter.test/=${SITE}`]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^qs run: --install-cache \S+store4: held 1\.5 MiB, over its 1\.0 MiB limit; removed 1 file, oldest first \(0\.5 MiB now\)$/m);
    expect(existsSync(older)).toBe(false);
    expect(existsSync(newer)).toBe(true);

    const alone = await qs(['run', 'trim.yaml', '--install-cache-max', '1G']);
    expect(alone.code).toBe(3);
    expect(alone.stderr.trim()).toBe('qs run: --install-cache-max bounds the --install-cache store; give --install-cache with it');
    const bad = await qs(['run', 'trim.yaml', '--install-cache', 'store4', '--install-cache-max', 'lots']);
    expect(bad.code).toBe(3);
    expect(bad.stderr.trim()).toBe('qs run: --install-cache-max lots: not a size of at least 1M (a number of bytes, or with K, M, G or T: 500M, 5G)');
  });
});
