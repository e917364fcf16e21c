// --check-urls: reads each page of a task's docs route once, as a run would, and reports what would spoil it.
import { hostMatches, normalizeHost } from '@quickloop/sandbox/hosts';
import { finding, type Finding, type TaskLoadedPayload } from '@quickloop/task';

export const USER_AGENT = 'quickloop (documentation agent-readiness testing; qs-validate --check-urls)';
/** The product token robots.txt groups are matched against. */
const ROBOTS_TOKEN = 'quickloop';
export const URL_TIMEOUT_MS = 15_000;
const MAX_REDIRECTS = 5;
/** A page is read only far enough to tell whether it has text; docs pages are not downloads. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

interface Page {
  /** Where the route ended up after HTTP redirects. */
  final: string;
  status: number;
  type: string;
  body: string;
}

export interface UrlChecker {
  check(payload: TaskLoadedPayload): Promise<Finding[]>;
}

/** One checker per qs-validate run: robots.txt is read once per origin across every task. */
export function createUrlChecker(signal: AbortSignal): UrlChecker {
  const robots = new Map<string, Promise<Rule[]>>();

  const get = async (url: string): Promise<Page> => {
    let current = url;
    for (let hop = 0; ; hop += 1) {
      const response = await fetch(current, {
        redirect: 'manual',
        headers: { 'user-agent': USER_AGENT, accept: 'text/html, text/markdown, text/plain;q=0.9, */*;q=0.5' },
        signal: AbortSignal.any([signal, AbortSignal.timeout(URL_TIMEOUT_MS)]),
      });
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location && hop < MAX_REDIRECTS) {
        await response.body?.cancel();
        current = new URL(location, current).href;
        continue;
      }
      return { final: current, status: response.status, type: response.headers.get('content-type') ?? '', body: await readCapped(response) };
    }
  };

  const rulesFor = (url: URL): Promise<Rule[]> => {
    let rules = robots.get(url.origin);
    if (!rules) {
      // A robots.txt that cannot be read says nothing: only a readable one can disallow.
      rules = get(`${url.origin}/robots.txt`).then(
        (r) => (r.status === 200 ? parseRobots(r.body, ROBOTS_TOKEN) : []),
        () => [],
      );
      robots.set(url.origin, rules);
    }
    return rules;
  };

  return {
    async check(payload) {
      const findings: Finding[] = [];
      const task = payload.task.name;
      const docsHosts = payload.policy.docs_hosts;
      for (const [i, page] of payload.task.docs.path.entries()) {
        const field = `docs.path[${i}]`;
        const add = (code: Parameters<typeof finding>[0], message: string): void => {
          findings.push(finding(code, `${field} ${page} ${message}`, { field, task }));
        };
        const url = new URL(page);
        if (!robotsAllows(await rulesFor(url), url.pathname + url.search)) add('QS118', `is disallowed by ${url.origin}/robots.txt for automated readers`);
        let result: Page;
        try {
          result = await get(page);
        } catch (error) {
          if (signal.aborted) throw error;
          add('QS116', `could not be read: ${describeFetchError(error)}`);
          continue;
        }
        const finalHost = normalizeHost(new URL(result.final).hostname);
        if (!docsHosts.some((h) => hostMatches(finalHost, h))) {
          add('QS117', `redirects to ${result.final}, which is not a docs host of the task (add ${finalHost} to docs.allow, or route to the final page)`);
          continue;
        }
        if (result.status >= 300) {
          add('QS116', `could not be read: HTTP ${result.status}`);
          continue;
        }
        const refresh = metaRefresh(result.body);
        if (refresh) findings.push(finding('QS204', `${field} ${page} redirects to ${new URL(refresh, result.final).href} (meta refresh); the agent is shown that page`, { field, task }));
        else if (pageText(result.body, result.type) === '') add('QS119', 'has no readable text (an empty page, or one its scripts fill in), so the agent reads nothing there');
      }
      return findings;
    },
  };
}

async function readCapped(response: Response): Promise<string> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= MAX_BODY_BYTES) break;
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describeFetchError(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return `no answer within ${URL_TIMEOUT_MS / 1000}s`;
    const cause = (error as Error & { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as Error & { code?: string }).code ?? '';
      return cause.message.includes(code) ? cause.message : `${code} ${cause.message}`.trim();
    }
    return error.message;
  }
  return String(error);
}

/** The text a reader gets: for HTML, without scripts, styles and tags. */
export function pageText(body: string, type: string): string {
  if (!/html/i.test(type) && !/^\s*<(!doctype|html)/i.test(body)) return body.trim();
  return body
    .replace(/<(script|style|noscript|template|svg)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<head\b[^>]*>[\s\S]*?<\/head\s*>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;|&#160;/gi, ' ')
    .trim();
}

/** The target of `<meta http-equiv="refresh" content="0; url=...">`, attributes in any order. */
export function metaRefresh(body: string): string | undefined {
  for (const [tag] of body.matchAll(/<meta\b[^>]*>/gi)) {
    if (!/http-equiv\s*=\s*["']?refresh\b/i.test(tag)) continue;
    const content = /content\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(tag);
    const target = /url\s*=\s*['"]?([^'";]+)/i.exec(content?.[1] ?? content?.[2] ?? content?.[3] ?? '');
    if (target?.[1]?.trim()) return target[1].trim();
  }
  return undefined;
}

interface Rule {
  allow: boolean;
  pattern: string;
}

/** RFC 9309: the group naming our token (else `*`), its Allow/Disallow lines. */
export function parseRobots(text: string, token: string): Rule[] {
  const groups: { agents: string[]; rules: Rule[] }[] = [];
  let current: { agents: string[]; rules: Rule[] } | undefined;
  let lastWasAgent = false;
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.replace(/#.*$/, '').trim();
    const m = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    const value = m[2]!.trim();
    if (key === 'user-agent') {
      if (!current || !lastWasAgent) {
        current = { agents: [], rules: [] };
        groups.push(current);
      }
      current.agents.push(value.toLowerCase());
      lastWasAgent = true;
    } else if ((key === 'allow' || key === 'disallow') && current) {
      lastWasAgent = false;
      // An empty Disallow allows everything: no rule.
      if (value !== '') current.rules.push({ allow: key === 'allow', pattern: value });
    } else {
      lastWasAgent = false;
    }
  }
  const mine = groups.filter((g) => g.agents.some((a) => a !== '*' && token.toLowerCase().includes(a)));
  const chosen = mine.length ? mine : groups.filter((g) => g.agents.includes('*'));
  return chosen.flatMap((g) => g.rules);
}

/** The longest matching rule decides; Allow wins a tie; no rule allows. */
export function robotsAllows(rules: readonly Rule[], path: string): boolean {
  let best: Rule | undefined;
  for (const rule of rules) {
    if (!robotsMatch(rule.pattern, path)) continue;
    if (!best || rule.pattern.length > best.pattern.length || (rule.pattern.length === best.pattern.length && rule.allow)) best = rule;
  }
  return best?.allow ?? true;
}

function robotsMatch(pattern: string, path: string): boolean {
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  const re = body.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp(`^${re}${anchored ? '$' : ''}`).test(path);
}
