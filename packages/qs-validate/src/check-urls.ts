// --check-urls: reads each page of a task's docs route once, with the same reader a run uses, and reports what would spoil it.
import { createDocsReader, type DocsReader } from '@quickloop/docs';
import { normalizeHost } from '@quickloop/sandbox/hosts';
import { finding, type Finding, type TaskLoadedPayload } from '@quickloop/task';

export interface UrlChecker {
  check(payload: TaskLoadedPayload): Promise<Finding[]>;
}

export interface UrlCheckOptions {
  signal: AbortSignal;
  /** Seconds between requests to one host, as in a run (default 1). */
  rateLimitSeconds?: number;
  timeoutMs?: number;
}

/**
 * One checker per qs-validate run, one reader per set of docs hosts: robots.txt is read once per
 * origin and the per-host gap holds across every task that shares those hosts.
 */
export function createUrlChecker(o: UrlCheckOptions): UrlChecker {
  const readers = new Map<string, DocsReader>();
  const readerFor = (hosts: readonly string[]): DocsReader => {
    const key = [...hosts].sort().join(' ');
    let reader = readers.get(key);
    if (!reader) {
      reader = createDocsReader({ allow: hosts, rateLimitSeconds: o.rateLimitSeconds ?? 1, signal: o.signal, ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}) });
      readers.set(key, reader);
    }
    return reader;
  };

  return {
    async check(payload) {
      const findings: Finding[] = [];
      const task = payload.task.name;
      const reader = readerFor(payload.policy.docs_hosts);
      for (const [i, page] of payload.task.docs.path.entries()) {
        const field = `docs.path[${i}]`;
        const add = (code: Parameters<typeof finding>[0], message: string): void => {
          findings.push(finding(code, `${field} ${page} ${message}`, { field, task }));
        };
        const result = await reader.read(page);
        if (o.signal.aborted) throw o.signal.reason as Error;
        if (!result.ok) {
          if (result.reason === 'robots') add('QS118', `is disallowed by ${new URL(page).origin}/robots.txt for automated readers`);
          else if (result.reason === 'allow_list') {
            // The hop off the list was refused before it was requested; its target is in the error.
            const to = /redirected to (\S+),/.exec(result.error)?.[1] ?? '';
            add('QS117', `redirects to ${to}, which is not a docs host of the task (add ${to ? normalizeHost(new URL(to).hostname) : 'its host'} to docs.allow, or route to the final page)`);
          } else if (result.reason === 'http_status') add('QS116', `could not be read: HTTP ${result.status ?? ''}`.trimEnd());
          else add('QS116', `could not be read: ${result.error.replace(/^fetch failed: /, '')}`);
          continue;
        }
        const meta = result.hops.find((h) => h.kind === 'meta');
        if (meta) findings.push(finding('QS204', `${field} ${page} redirects to ${meta.to} (meta refresh); the agent is shown that page`, { field, task }));
        if (result.markdown.trim() === '') add('QS119', 'has no readable text (an empty page, or one its scripts fill in), so the agent reads nothing there');
      }
      return findings;
    },
  };
}
