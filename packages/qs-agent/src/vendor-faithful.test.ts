// The model agent against a second, independent mock of the vendors' published wire formats
// (@quickloop/testkit's vendor-faithful server): streams cut small, keep-alive events, optional ids
// left out, unknown fields, errors inside a 200. The normalised events and the verdict must match
// those the first mock gives.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { memoryIo } from '@quickloop/cli-kit';
import { startMockServer, startVendorFaithfulServer, type FaithfulStep, type MockStep } from '@quickloop/testkit';
import { run } from './run.js';
import { localAgentOptions, ndjson, parseOut, taskLoaded } from './testing/task-event.js';
import { cleanedAfterEach, QS_CHECK, VENDORS, type Vendor } from './testing/vendors.js';

const KEY = 'sk-test-vf-0c1d2e';
const { sandboxesOf, closeLater } = cleanedAfterEach();

function envFor(vendor: Vendor, url: string, openaiUrl: string): Record<string, string> {
  if (vendor === 'anthropic') return { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url };
  if (vendor === 'gemini') return { GEMINI_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: url };
  return { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: openaiUrl };
}

async function agentRun(vendor: Vendor, stream: boolean, server: { url: string; openaiUrl: string }, script = 'false') {
  const io = memoryIo({ stdin: ndjson([taskLoaded('r1', { script })]), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_COLOR: '1', ...envFor(vendor, server.url, server.openaiUrl) } });
  const opts = localAgentOptions(vendor, { model: 'mock-model', stream });
  const code = await run(opts, io);
  const events = parseOut(io.out());
  sandboxesOf(events);
  return { code, events, out: io.out(), err: io.err(), completed: events.find((e) => e.type === 'agent.completed') };
}

async function onFirst(vendor: Vendor, stream: boolean, script: MockStep[]) {
  const mock = await startMockServer({ script, whenEmpty: 'error' });
  closeLater(() => mock.close());
  return agentRun(vendor, stream, mock);
}

async function onFaithful(vendor: Vendor, stream: boolean, script: FaithfulStep[], check = 'false') {
  const server = await startVendorFaithfulServer(script);
  closeLater(() => server.close());
  return { ...(await agentRun(vendor, stream, server, check)), server };
}

function verdict(out: string): Record<string, unknown> {
  const r = spawnSync(process.execPath, [QS_CHECK, '-q'], { input: out, encoding: 'utf8' });
  return parseOut(r.stdout).find((e) => e.type === 'run.completed') ?? { stderr: r.stderr };
}

/** Events without what differs by construction: ids, times, request ids, and call ids (compared on their own). */
function norm(events: Array<Record<string, unknown>>) {
  return events
    .filter((e) => !['task.loaded', 'sandbox.ready', 'sandbox.usage'].includes(String(e.type)))
    .map((e) => {
      const { id: _i, parent_id: _p, ts: _t, request_id: _r, duration_ms: _d, stage: _s, run_id: _u, base_url: _b, call_id: _c, model: _m, ...rest } = e;
      if (Array.isArray(rest.blocks)) rest.blocks = (rest.blocks as Array<Record<string, unknown>>).map(({ id: _x, ...b }) => b);
      return rest;
    });
}

/** The first mock's run of SCRIPT, once per vendor for the whole file (its sandbox is removed after the test that made it). */
const bases = new Map<Vendor, Promise<{ events: Array<Record<string, unknown>>; out: string; code: number }>>();
function baseFor(vendor: Vendor) {
  let p = bases.get(vendor);
  if (!p) bases.set(vendor, (p = onFirst(vendor, true, SCRIPT)));
  return p;
}

const callIds = (events: Array<Record<string, unknown>>) => events.filter((e) => e.type === 'tool.call').map((e) => String(e.call_id));

// No ids: Gemini leaves them out, and the others' ids are the server's own.
const SCRIPT = [
  { text: 'Reading the docs first, then running it.', toolCalls: [{ name: 'read_docs', input: { url: 'https://docs.greeter.test/install.html' } }], usage: { input: 100, output: 20 } },
  { toolCalls: [{ name: 'bash', input: { command: 'echo "Hello, Ada!" && echo {\\"k\\": [1, 2]}' } }, { name: 'bash', input: { command: 'exit 3' } }], usage: { input: 50, cacheRead: 100, output: 10 } },
  { toolCalls: [{ name: 'bash', input: { command: 'true' } }] },
  { text: 'Done: the greeter says hello, with ünïcødé and "quotes".', usage: { input: 7, output: 9, reasoning: 4 } },
] satisfies MockStep[];

describe('the model agent against an independent mock of the published wire formats', () => {
  for (const vendor of VENDORS) {
    it(`${vendor}: the same normalised events and verdict as with the first mock, streaming and not`, async () => {
      const base = await baseFor(vendor);
      expect(base.code).toBe(0);
      const want = norm(base.events);
      const wantVerdict = verdict(base.out);
      for (const stream of [true, false]) {
        const got = await onFaithful(vendor, stream, SCRIPT);
        expect(got.code, `${vendor} stream=${stream}: ${got.err}`).toBe(0);
        expect(norm(got.events), `${vendor} stream=${stream}`).toEqual(want);
        const ids = callIds(got.events);
        expect(ids).toHaveLength(4);
        // Ids a vendor left out are made up, but never twice in one run: the model pairs results by them.
        expect(new Set(ids).size, `${vendor} stream=${stream}: ${ids.join(',')}`).toBe(4);
        expect(verdict(got.out), `${vendor} stream=${stream}`).toMatchObject({ classification: wantVerdict.classification });
        const turns = got.events.filter((e) => e.type === 'agent.turn');
        expect(turns.map((t) => t.request_id), vendor).toEqual(vendor === 'gemini' ? turns.map((t) => expect.stringMatching(/^gr/)) : ['req_vf_1', 'req_vf_2', 'req_vf_3', 'req_vf_4']);
      }
    });
  }

  it('an overloaded error inside a 200 stream is retried as infra (an agent.retry event), and the run goes on as before', async () => {
    const OVERLOADED = { anthropic: 'overloaded_error', openai: 'server_error', 'openai-chat': 'server_error', gemini: 'UNAVAILABLE' } as const;
    const strip = (events: Array<Record<string, unknown>>) => norm(events.filter((e) => e.type !== 'agent.retry')).map(({ attempts: _a, ...e }) => e);
    for (const vendor of VENDORS) {
      const base = norm((await baseFor(vendor)).events);
      const got = await onFaithful(vendor, true, [{ streamError: { type: OVERLOADED[vendor] }, text: 'I will st' }, ...SCRIPT]);
      expect(got.code, got.err).toBe(0);
      const retries = got.events.filter((e) => e.type === 'agent.retry');
      expect(retries, vendor).toMatchObject([{ turn: 1, attempt: 1, error_kind: 'infra' }]);
      expect(got.events.find((e) => e.type === 'agent.turn'), vendor).toMatchObject({ turn: 1, attempts: 2 });
      // What the failed attempt's stream said it was billed is counted in its turn and the run: only
      // Anthropic's says anything before its error (message_start: the input, and a placeholder output).
      const billed: Record<string, number> = vendor === 'anthropic' ? { input_tokens: 12, output_tokens: 1 } : {};
      const plus = (u: Record<string, number>) => Object.fromEntries(Object.entries(u).map(([k, v]) => [k, v + (billed[k] ?? 0)]));
      const expected = base.map(({ attempts: _a, ...e }) => ((e.type === 'agent.turn' && e.turn === 1) || e.type === 'agent.completed' ? { ...e, usage: plus(e.usage as Record<string, number>) } : e));
      expect(strip(got.events), vendor).toEqual(expected);
    }
  });

  it('an error event that persists past the retries ends the run as an infra error, which is no docs gap', async () => {
    const err = { streamError: { type: 'overloaded_error' } };
    const got = await onFaithful('anthropic', true, [err, err, err]);
    expect(got.completed).toMatchObject({ stop_reason: 'error', error_kind: 'infra', turns: 0 });
    expect(got.events.filter((e) => e.type === 'agent.retry')).toHaveLength(2);
    expect(verdict(got.out).classification).not.toBe('docs_gap');
  });
});
