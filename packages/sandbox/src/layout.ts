// The folders of a sandbox: root/{workspace,home,tmp}, a marker proving we made them, and their removal.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { InputError, makeDirs } from '@quickloop/cli-kit';
import { outerIds } from './rootfs.js';
import type { WorkspaceLayout } from './types.js';

/**
 * Written at the root when it is made. A workspace described in a stream is only re-opened or
 * removed when the marker is there, so a bad `sandbox.ready` line can never point a stage at `/`.
 */
export const MARKER = '.quickloop-sandbox';

export function createLayout(baseDir: string = tmpdir()): WorkspaceLayout {
  makeDirs(baseDir);
  // realpath: bwrap binds by path, and the paths inside must equal the ones outside.
  const root = realpathSync(mkdtempSync(join(baseDir, 'quickloop-')));
  const layout = { root, workspace: join(root, 'workspace'), home: join(root, 'home'), tmp: join(root, 'tmp') };
  for (const dir of [layout.workspace, layout.home, layout.tmp]) mkdirSync(dir, { mode: 0o755 });
  writeFileSync(join(root, MARKER), 'made by quickloop; removing this folder removes the sandbox\n');
  // A root harness runs the sandbox as an unprivileged host uid: the three folders are that user's.
  if (process.getuid?.() === 0) {
    const { uid, gid } = outerIds();
    // It may pass through the root to its folders (bwrap binds them as that user), not list or change it;
    // no other host user may pass at all: what a run leaves in its folders (a setuid copy of a tool, which
    // the folders' filesystem does not refuse on the host) would be theirs to run as the sandbox's uid.
    chownSync(root, 0, gid);
    chmodSync(root, 0o710);
    for (const dir of [layout.workspace, layout.home, layout.tmp]) chownSync(dir, uid, gid);
  }
  return layout;
}

/** What is at a path itself, a link never followed. */
function entryKind(path: string): 'dir' | 'file' | 'link' | 'other' | undefined {
  try {
    const st = lstatSync(path);
    return st.isSymbolicLink() ? 'link' : st.isDirectory() ? 'dir' : st.isFile() ? 'file' : 'other';
  } catch {
    return undefined;
  }
}

/**
 * Checks a layout read from a stream (or named by a person: `qs check --sandbox`) before anything
 * runs in it; the message names the field. The folders are bound into the sandbox by path, and a
 * bind follows links: a command can make a whole layout in its own workspace (a marker, and a
 * `home` linking up to the host's /tmp), which a kept workspace then holds. So the root must be
 * where it says it is (no link on the way), inside no other layout, and each folder a real one.
 */
export function checkLayout(layout: WorkspaceLayout): WorkspaceLayout {
  if (entryKind(join(layout.root, MARKER)) === undefined) {
    throw new InputError(`sandbox.ready: root ${layout.root} is not a quickloop sandbox (no ${MARKER}); was it removed?`);
  }
  let real: string | undefined;
  try {
    real = realpathSync(layout.root);
  } catch {
    real = undefined;
  }
  if (real !== layout.root || entryKind(join(layout.root, MARKER)) !== 'file') {
    throw new InputError(`sandbox.ready: root ${layout.root} is not a quickloop sandbox (its path or its ${MARKER} goes through a link)`);
  }
  // Made by this user, and no one else can write to it: a folder and marker another local user made
  // (in /tmp, say) are never taken for one of ours.
  const me = process.getuid?.();
  if (me !== undefined) {
    const root = lstatSync(layout.root);
    const marker = lstatSync(join(layout.root, MARKER));
    if (root.uid !== me || marker.uid !== me || (root.mode & 0o022) !== 0) {
      throw new InputError(`sandbox.ready: root ${layout.root} is not a quickloop sandbox of this user's (${root.uid !== me || marker.uid !== me ? 'another user owns it' : 'others can write to it'})`);
    }
  }
  // A marker above the root counts only if this user or the sandbox's own user could have made it:
  // another local user's stray marker in /tmp must not make every sandbox under it unopenable.
  const makers = new Set([me, me === 0 ? outerIds().uid : undefined].filter((u): u is number => u !== undefined));
  const counts = (path: string): boolean => {
    try {
      return me === undefined || makers.has(lstatSync(path).uid);
    } catch {
      return false;
    }
  };
  for (let dir = dirname(layout.root); ; dir = dirname(dir)) {
    if (entryKind(join(dir, MARKER)) !== undefined && counts(join(dir, MARKER))) {
      throw new InputError(`sandbox.ready: root ${layout.root} is inside the quickloop sandbox ${dir}: a layout made in a sandbox's folders is a command's, never opened`);
    }
    if (dirname(dir) === dir) break;
  }
  for (const field of ['workspace', 'home', 'tmp'] as const) {
    const dir = layout[field];
    if (dir !== join(layout.root, field)) throw new InputError(`sandbox.ready: ${field} ${dir} is not ${join(layout.root, field)}`);
    const kind = entryKind(dir);
    if (kind === undefined) throw new InputError(`sandbox.ready: ${field} ${dir} does not exist`);
    if (kind !== 'dir') throw new InputError(`sandbox.ready: ${field} ${dir} is not a folder of the sandbox (${kind === 'link' ? 'a link' : 'not a folder'})`);
  }
  return layout;
}

function checkMarker(root: string): void {
  if (!existsSync(join(root, MARKER)) || readFileSync(join(root, MARKER), 'utf8').indexOf('quickloop') < 0) {
    throw new InputError(`refusing to remove ${root}: it is not a quickloop sandbox (no ${MARKER})`);
  }
}

/** Removes the sandbox's folders; refuses a root without the marker. Returns false when nothing was there. */
export function removeLayout(layout: Pick<WorkspaceLayout, 'root'>): boolean {
  if (!existsSync(layout.root)) return false;
  checkMarker(layout.root);
  try {
    rmSync(layout.root, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    rmStubborn(layout.root);
  }
  return true;
}

/**
 * removeLayout off the event loop (the filesystem work in libuv's threads): for a host that goes on
 * with other work meanwhile, as `qs run` starts its next attempt while the last one's folders go.
 */
export async function removeLayoutAsync(layout: Pick<WorkspaceLayout, 'root'>): Promise<boolean> {
  if (!existsSync(layout.root)) return false;
  checkMarker(layout.root);
  try {
    await rm(layout.root, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    rmStubborn(layout.root);
  }
  return true;
}

/**
 * What a command left can defeat Node's rm: folders it took its own permissions from (chmod 000,
 * which a harness of the same uid cannot enter) or a tree deeper than the stack. Their owner may
 * give the permissions back, and rm(1) walks any depth; neither follows a link.
 */
function rmStubborn(root: string): void {
  if (process.getuid?.() !== 0) unlock(root);
  const r = spawnSync('rm', ['-rf', '--one-file-system', '--', root], { encoding: 'utf8' });
  if (existsSync(root)) throw new InputError(`could not remove ${root}: ${(r.stderr || r.error?.message || 'rm failed').trim().split('\n')[0]}`);
}

const SLASH = Buffer.from('/');

/** Names as the bytes they are: one that is no UTF-8, read as text, names nothing, and stayed locked. */
function unlock(root: string): void {
  const stack = [Buffer.from(root)];
  while (stack.length > 0) {
    const dir = stack.pop() as Buffer;
    try {
      if (!lstatSync(dir).isDirectory()) continue;
      // Only a harness of the sandbox's own uid gets here, once every process of it is gone: it
      // changes nothing the sandbox could not have changed itself.
      chmodSync(dir, 0o700);
      for (const entry of readdirSync(dir, { withFileTypes: true, encoding: 'buffer' })) if (entry.isDirectory()) stack.push(Buffer.concat([dir, SLASH, entry.name]));
    } catch {
      // Not ours to change, or too deep to name: rm says what is left.
    }
  }
}
