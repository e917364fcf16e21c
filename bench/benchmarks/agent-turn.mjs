// The model agent's own cost per turn (prompt building, tool dispatch, a docs page read from the
// fixture site, events), with the model's time — the adapter's call to the mock — taken out.
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { ROOT } from '../helpers.mjs';

const { createModelAgent, createToolbelt, parseDocsMap } = await import(`${ROOT}packages/qs-agent/dist/index.js`);
const { taskLoaded } = await import(`${ROOT}packages/qs-agent/dist/testing/index.js`);
const { AnthropicAdapter } = await import(`${ROOT}packages/models/dist/index.js`);
const { createEmitter, EventWriter } = await import(`${ROOT}packages/events/dist/index.js`);
const { createLogger } = await import(`${ROOT}packages/cli-kit/dist/index.js`);
const { startMockServer } = await import(`${ROOT}packages/testkit/dist/index.js`);

const TURNS = 10;
const PAGES = ['https://docs.greeter.test/install.html', 'https://docs.greeter.test/quickstart.html'];
const task = taskLoaded('bench').task;
const maps = [parseDocsMap(`https://docs.greeter.test/=${ROOT}fixtures/docs-site`, ROOT)];
const script = () => [
  ...Array.from({ length: TURNS - 1 }, (_, i) => ({ text: `Step ${i + 1}.`, toolCalls: [{ name: 'read_docs', input: { url: PAGES[i % 2] } }] })),
  { text: 'Done.' },
];
const sink = () => new Writable({ write: (_c, _e, cb) => cb() });

export default {
  name: 'model agent: harness overhead per turn (model time excluded)',
  iterations: 15,
  target: { max_ms: 30 },
  setup: async () => ({ mock: await startMockServer({ whenEmpty: 'error' }) }),
  teardown: async ({ mock }) => mock.close(),
  baseline: {
    name: 'the adapter alone, one turn',
    run: async ({ mock }) => {
      mock.push({ text: 'Done.' });
      const a = new AnthropicAdapter({ apiKey: 'bench', baseURL: mock.url });
      await a.turn({ model: 'claude-sonnet-4-6', system: 's', messages: [{ role: 'user', blocks: [{ type: 'text', text: 'go' }] }], maxTokens: 100, stream: true });
    },
  },
  candidate: {
    name: `createModelAgent, ${TURNS} turns`,
    run: async ({ mock }) => {
      mock.push(...script());
      let modelMs = 0;
      const inner = new AnthropicAdapter({ apiKey: 'bench', baseURL: mock.url });
      // Times only the model call, so what is left is the loop's own work.
      const timed = {
        name: inner.name,
        turn: async (req) => {
          const t = performance.now();
          try {
            return await inner.turn(req);
          } finally {
            modelMs += performance.now() - t;
          }
        },
      };
      let n = 0;
      const newId = () => `id-${++n}`;
      const emitter = createEmitter({ stage: 'qs-agent', writer: new EventWriter(sink()), now: () => new Date() });
      const signal = new AbortController().signal;
      const executor = { exec: async () => ({ exitCode: 0, output: '', timedOut: false, durationMs: 0, originalChars: 0, truncated: false }) };
      const tools = createToolbelt({ runId: 'bench', emitter, newId, executor, maxCommandSeconds: 30, maxOutputChars: 20000, docsAllow: ['docs.greeter.test'], docsMaps: maps, signal });
      const agent = createModelAgent('anthropic', () => timed, { model: 'claude-sonnet-4-6' });
      const t0 = performance.now();
      const outcome = await agent.run({ runId: 'bench', task, tools, signal, log: createLogger({ stream: sink(), env: {}, level: 'quiet' }), elapsedMs: () => performance.now() - t0, emitter, newId, setup: [] });
      if (outcome.stopReason !== 'completed' || outcome.report.turns !== TURNS) throw new Error(`the agent stopped: ${outcome.stopReason} after ${outcome.report?.turns} turns`);
      return { ms: (performance.now() - t0 - modelMs) / TURNS };
    },
  },
};
