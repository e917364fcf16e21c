// What a killed harness leaves in the temp folder is removed by the next one, and nothing else is.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { markSupportOwner, removeStaleSupport, SUPPORT_PREFIX } from './stale-support.js';
import { tempFolders } from './test-helpers.js';

const { temp, cleanup } = tempFolders('qs-stale-support-');
afterEach(cleanup);

/** This process's pid namespace and boot, as an owner file names them. */
const scope = `${readlinkSync('/proc/self/ns/pid').replace(/\D/g, '')} ${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()}`;

const startOf = (pid: number): string => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[19] as string;

/** A support folder under `parent` whose owner file says `owner` (or none). */
function folder(parent: string, name: string, owner?: string): string {
  const dir = join(parent, `${SUPPORT_PREFIX}${name}`);
  mkdirSync(join(dir, 'etc'), { recursive: true });
  writeFileSync(join(dir, 'etc', 'passwd'), 'x');
  if (owner !== undefined) writeFileSync(join(dir, 'owner'), owner);
  return dir;
}

describe('stale support folders', () => {
  it('removes the folders of ended harnesses and keeps those of live ones', async () => {
    const parent = temp();
    // A harness that ran and ended: its pid and start time name nothing alive now.
    const ended = spawnSync('sh', ['-c', 'cut -d" " -f22 /proc/$$/stat; echo $$'], { encoding: 'utf8' }).stdout.trim().split('\n');
    const dead = folder(parent, 'dead', `${ended[1]} ${ended[0]} ${scope}\n`);
    // A live harness (a child of this test) and this process itself.
    const child = spawn('sleep', ['30']);
    try {
      const live = folder(parent, 'live', `${child.pid} ${startOf(child.pid as number)} ${scope}\n`);
      // The live pid with another start time is a reused pid: its folder's owner is gone.
      const reused = folder(parent, 'reused', `${child.pid} 1 ${scope}\n`);
      const mine = folder(parent, 'mine');
      markSupportOwner(mine);
      expect(removeStaleSupport(parent)).toBe(2);
      expect([existsSync(dead), existsSync(reused)]).toEqual([false, false]);
      expect([existsSync(live), existsSync(mine)]).toEqual([true, true]);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('leaves alone what it cannot judge: no owner, a bad owner file, a link, another prefix or another user', () => {
    const parent = temp();
    const elsewhere = temp();
    const keep = [
      folder(parent, 'unnamed'),
      folder(parent, 'garbage', 'not a pid\n'),
      folder(parent, 'huge', `1 ${'9'.repeat(30)} ${scope}\n`),
      folder(parent, 'long', `999999 1 ${scope}\n${'x'.repeat(1 << 20)}`),
      // A dead pid of this namespace, but from another boot (another kernel sharing the folder): not judged.
      folder(parent, 'other-boot', `999999 1 ${scope.split(' ')[0]} 00000000-0000-4000-8000-000000000000\n`),
      // Nor one of the pre-scope format.
      folder(parent, 'unscoped', '999999 1\n'),
    ];
    // A FIFO for an owner file: never opened for a blocking read.
    const fifo = folder(parent, 'fifo');
    spawnSync('mkfifo', [join(fifo, 'owner')]);
    keep.push(fifo);
    // An owner file that is a link to a dead owner's file is not read.
    const linked = folder(parent, 'linked');
    writeFileSync(join(elsewhere, 'owner'), `999999 1 ${scope}\n`);
    symlinkSync(join(elsewhere, 'owner'), join(linked, 'owner'));
    keep.push(linked);
    // A link with the prefix, to a folder that looks stale: neither it nor its target goes.
    const target = folder(elsewhere, 'target', `999999 1 ${scope}\n`);
    symlinkSync(target, join(parent, `${SUPPORT_PREFIX}link`));
    keep.push(join(parent, `${SUPPORT_PREFIX}link`), target);
    mkdirSync(join(parent, 'quickloop-other'));
    writeFileSync(join(parent, 'quickloop-other', 'owner'), `999999 1 ${scope}\n`);
    keep.push(join(parent, 'quickloop-other'));
    if (process.getuid?.() === 0) {
      const theirs = folder(parent, 'theirs', `999999 1 ${scope}\n`);
      chownSync(theirs, 65534, 65534);
      keep.push(theirs);
    }
    expect(removeStaleSupport(parent)).toBe(0);
    for (const k of keep) expect(existsSync(k)).toBe(true);
    expect(removeStaleSupport(join(parent, 'missing'))).toBe(0);
  });

  it('keeps the folder of a live harness in another pid namespace sharing the temp folder (its pid means nothing here)', async () => {
    const parent = temp();
    const dir = folder(parent, 'other-ns');
    // A container's harness: its own pid namespace (and /proc), the same temp folder. It dies with unshare.
    const lib = fileURLToPath(new URL('../dist/stale-support.js', import.meta.url));
    const script = `import { markSupportOwner } from ${JSON.stringify(lib)}; markSupportOwner(process.argv[1]); console.log('marked'); setInterval(() => {}, 1e6);`;
    const ns = process.getuid?.() === 0 ? [] : ['--user', '--map-root-user'];
    const child = spawn('unshare', [...ns, '--pid', '--kill-child', '--mount-proc', '--', process.execPath, '--input-type=module', '-e', script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (c: Buffer) => c.toString().includes('marked') && resolve());
        child.once('exit', (code) => reject(new Error(`the other harness exited ${code}`)));
      });
      // Its pid, read here, is another process's (or none): it must not be judged by it.
      expect(readFileSync(join(dir, 'owner'), 'utf8')).toMatch(/^\d+ \d+/);
      expect(removeStaleSupport(parent)).toBe(0);
      expect(existsSync(join(dir, 'etc', 'passwd'))).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('a folder it fails to remove whole keeps its owner file, and the next sweep removes the rest', () => {
    const parent = temp();
    const ended = spawnSync('sh', ['-c', 'cut -d" " -f22 /proc/$$/stat; echo $$'], { encoding: 'utf8' }).stdout.trim().split('\n');
    // Several entries, so that some come before the owner file and some after, whatever the order.
    const dir = folder(parent, 'stuck', `${ended[1]} ${ended[0]} ${scope}\n`);
    for (const name of ['a', 'b', 'c', 'x', 'y', 'z']) writeFileSync(join(dir, name), name);
    // A file that cannot be removed: immutable for root, in a read-only folder for another user.
    const root = process.getuid?.() === 0;
    const stuck = () => spawnSync(root ? 'chattr' : 'chmod', root ? ['+i', join(dir, 'etc', 'passwd')] : ['0555', join(dir, 'etc')]).status;
    const unstuck = () => spawnSync(root ? 'chattr' : 'chmod', root ? ['-i', join(dir, 'etc', 'passwd')] : ['0755', join(dir, 'etc')]).status;
    expect(stuck()).toBe(0);
    try {
      expect(removeStaleSupport(parent)).toBe(0);
      expect(readFileSync(join(dir, 'owner'), 'utf8')).toBe(`${ended[1]} ${ended[0]} ${scope}\n`);
    } finally {
      unstuck();
    }
    expect(removeStaleSupport(parent)).toBe(1);
    expect(existsSync(dir)).toBe(false);
  });
});
