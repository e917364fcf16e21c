// Each vendor end to end, as typed: qs-validate | qs-agent --agent X | qs-check, real processes, the
// real SDK against the testkit mock, docs from the fixture site, commands in the enforced sandbox.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockServer, type MockServer, type MockStep } from '@quickloop/testkit';
import { BIN, typedPipeline } from './testing/pipeline.js';
import { parseOut } from './testing/task-event.js';

const root = (p: string) => fileURLToPath(new URL(`../../../${p}`, import.meta.url));
const TASK = root('fixtures/examples/greeter.yaml');
const SITE = root('fixtures/docs-site');
const KEY = 'sk-e2e-SECRET-91b0d3aa';
const mocks: MockServer[] = [];

afterEach(async () => {
  for (const m of mocks.splice(0)) await m.close();
});

/** Runs the shell pipeline without blocking this process (the mock answers from it). */
const pipeline = (agentArgs: string[], env: Record<string, string> = {}) => typedPipeline(TASK, agentArgs, env);

/** The replay commands of the greeter quickstart, as a model following it would type them. */
async function greeterCommands(): Promise<string[]> {
  const out = await new Promise<string>((resolve) => {
    const child = spawn(process.execPath, [BIN.validate, TASK]);
    let s = '';
    child.stdout.on('data', (c: Buffer) => (s += c.toString()));
    child.on('close', () => resolve(s));
  });
  const loaded = parseOut(out).find((e) => e.type === 'task.loaded') as { task: { replay: string[] } };
  return loaded.task.replay;
}

const script = (commands: string[], extra: MockStep[] = []): MockStep[] => [
  { text: 'I will read the install page.', toolCalls: [{ id: 'k1', name: 'read_docs', input: { url: 'https://docs.greeter.test/install.html' } }] },
  { toolCalls: [{ id: 'k2', name: 'read_docs', input: { url: 'https://docs.greeter.test/quickstart.html' } }] },
  ...extra,
  ...commands.map((command, i): MockStep => ({ toolCalls: [{ id: `b${i}`, name: 'bash', input: { command } }] })),
  { text: 'The greeter is built and greets Ada.' },
];

type Vendor = 'anthropic' | 'openai' | 'openai-chat' | 'gemini';

function envFor(vendor: Vendor, mock: MockServer): Record<string, string> {
  if (vendor === 'anthropic') return { QS_ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: mock.url };
  if (vendor === 'gemini') return { GOOGLE_API_KEY: KEY, GOOGLE_GEMINI_BASE_URL: mock.url };
  return { QS_OPENAI_API_KEY: KEY, OPENAI_BASE_URL: mock.openaiUrl };
}

describe('qs-validate | qs-agent --agent MODEL | qs-check, in the enforced sandbox', () => {
  for (const [vendor, stream] of [
    ['anthropic', true],
    ['openai', false],
    ['openai-chat', true],
    ['gemini', false],
  ] as const) {
    it(`${vendor} (${stream ? 'streaming' : 'not streaming'}) reads the docs, runs the commands and passes the check`, async () => {
      const commands = await greeterCommands();
      // One vendor also tries the docs host from the shell: blocked, and counted as a bypass attempt.
      // It also prints its whole environment: the key given to qs-agent is not in it (checked on the whole stream below).
      const bypass: MockStep[] =
        vendor === 'anthropic'
          ? [{ toolCalls: [{ id: 'x1', name: 'bash', input: { command: 'curl -sS --max-time 10 https://docs.greeter.test/install.html; echo "curl exited $?"' } }, { id: 'x2', name: 'bash', input: { command: 'env; cat /proc/1/environ 2>/dev/null | tr "\\0" "\\n"; true' } }] }]
          : [];
      const mock = await startMockServer({ script: script(commands, bypass), whenEmpty: 'error' });
      mocks.push(mock);
      const args = ['--agent', vendor, '--model', vendor === 'gemini' ? 'gemini-2.5-flash' : 'mock-model', '--docs-map', `https://docs.greeter.test/=${SITE}`, ...(stream ? [] : ['--no-stream'])];
      const r = await pipeline(args, envFor(vendor, mock));
      const events = parseOut(r.stdout);
      const completed = events.find((e) => e.type === 'agent.completed');
      expect(completed, r.stderr).toMatchObject({ agent: vendor, stop_reason: 'completed', final_text: 'The greeter is built and greets Ada.' });
      expect(events.find((e) => e.type === 'sandbox.ready')).toMatchObject({ backend: 'bwrap', enforced: true });
      expect(events.filter((e) => e.type === 'docs.read').map((e) => e.url)).toEqual(['https://docs.greeter.test/install.html', 'https://docs.greeter.test/quickstart.html']);
      expect(events.filter((e) => e.type === 'tool.result').every((e) => e.exit_code === 0)).toBe(true);
      const verdict = events.find((e) => e.type === 'run.completed');
      expect(verdict, r.stderr).toMatchObject({ classification: 'passed', label: 'PASS' });
      expect(r.code).toBe(0);
      expect(mock.requests.every((q) => q.stream === stream)).toBe(true);
      if (vendor === 'anthropic') {
        expect(events.find((e) => e.type === 'egress.blocked')).toMatchObject({ host: 'docs.greeter.test', reason: 'docs_host' });
        expect(verdict).toMatchObject({ docs_bypass_attempts: 1 });
        expect(events.filter((e) => e.type === 'tool.result').some((e) => /HOME=/.test(String(e.output)))).toBe(true);
      }
      expect(`${r.stdout}${r.stderr}`).not.toContain(KEY);
    });
  }
});
