// Ends a CLI and everything it started: the CLI runs as a process-group leader, so the group is the tree.

function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    // ESRCH: nobody left in the group.
    return false;
  }
}

export function groupAlive(pgid: number): boolean {
  return signalGroup(pgid, 0);
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * SIGTERM to the whole group, then SIGKILL to whatever is left after `graceMs`. Resolves once the group is
 * empty, or a second after SIGKILL (a zombie nobody reaps keeps its group "alive" but runs nothing).
 */
export async function killTree(pgid: number, graceMs: number): Promise<void> {
  if (!signalGroup(pgid, 'SIGTERM')) return;
  const step = Math.min(25, Math.max(1, graceMs));
  for (let waited = 0; waited < graceMs; waited += step) {
    await pause(step);
    if (!groupAlive(pgid)) return;
  }
  signalGroup(pgid, 'SIGKILL');
  // SIGKILL is asynchronous: wait for the exit so callers can rely on "nothing is left running".
  for (let waited = 0; waited < 1000 && groupAlive(pgid); waited += 10) await pause(10);
}
