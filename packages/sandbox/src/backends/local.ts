// The `local` backend: plain `bash -c` in the workspace. Nothing is enforced; the proxy variables are advice.
import { groupLeftovers } from '../leftovers.js';
import { killGroupsAndWait } from '../process.js';
import type { BackendSession } from './backend.js';

export function startLocal(proxyPort: number): BackendSession {
  const groups = new Set<number>();
  return {
    name: 'local',
    enforced: false,
    proxyUrl: `http://127.0.0.1:${proxyPort}`,
    argv: (command) => ({ file: 'bash', args: ['-c', command] }),
    adopt: (pgid) => {
      groups.add(pgid);
    },
    // Only the commands' own process groups can be found again: a job that called setsid escapes,
    // which is one reason `local` is refused unless --allow-unenforced.
    close: async () => {
      const left = groupLeftovers(groups);
      await killGroupsAndWait(groups);
      groups.clear();
      return left;
    },
  };
}
