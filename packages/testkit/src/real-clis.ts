// Pointing the real model CLIs at the mock server: where they are, and the env/config each one needs.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { MockServer } from './server.js';

/** The absolute path of `name` on `path` (default: this process's PATH), or undefined. */
export function findOnPath(name: string, path = process.env.PATH ?? ''): string | undefined {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    if (existsSync(file)) return file;
  }
  return undefined;
}

/**
 * Variables for `claude -p` against the mock, with `home` as its HOME. The quiet-mode switches stop it probing
 * the network and retrying on its own, so the harness decides retries and nothing leaves loopback.
 */
export function claudeMockEnv(mock: MockServer, home: string): Record<string, string> {
  mkdirSync(home, { recursive: true });
  return {
    HOME: home,
    ANTHROPIC_BASE_URL: mock.url,
    ANTHROPIC_API_KEY: 'dummy',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
    CLAUDE_CODE_DISABLE_REFUSAL_RETRY: '1',
  };
}

/**
 * Variables for `codex exec` against the mock. codex ignores OPENAI_BASE_URL, so this writes a custom provider
 * (`wire_api = "responses"`) into `<home>/.codex/config.toml` and points CODEX_HOME there.
 */
export function codexMockEnv(mock: MockServer, home: string, model = 'gpt-mock'): Record<string, string> {
  const codexHome = join(home, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      `model = "${model}"`,
      'model_provider = "mock"',
      '[model_providers.mock]',
      'name = "Mock"',
      `base_url = "${mock.openaiUrl}"`,
      'env_key = "MOCK_API_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
  return { HOME: home, CODEX_HOME: codexHome, MOCK_API_KEY: 'dummy' };
}

/**
 * Variables for `gemini` against the mock, plus the `<home>/.gemini/settings.json` that selects API-key auth
 * (with only a base URL it infers "gateway" auth and refuses to run) and turns off telemetry and updates.
 */
export function geminiMockEnv(mock: MockServer, home: string): Record<string, string> {
  const dir = join(home, '.gemini');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'settings.json'),
    JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, privacy: { usageStatisticsEnabled: false }, general: { disableAutoUpdate: true }, telemetry: { enabled: false } }),
  );
  // It writes an error report into the temp dir on every API error: keep those inside `home` too.
  const tmp = join(home, 'tmp');
  mkdirSync(tmp, { recursive: true });
  return { HOME: home, TMPDIR: tmp, GOOGLE_GEMINI_BASE_URL: mock.url, GEMINI_API_KEY: 'dummy', GEMINI_CLI_TRUST_WORKSPACE: 'true' };
}

/** Argv that the real CLIs accepted offline against the mock servers; prompts go on stdin. */
export const REAL_CLI_ARGV = {
  claudeJudge: ['claude', '-p', '--output-format', 'json', '--no-session-persistence', '--bare', '--tools', '', '--model', 'claude-sonnet-4-6'],
  claudeHost: ['claude', '-p', '--output-format', 'json', '--no-session-persistence', '--model', 'claude-sonnet-4-6'],
  codex: ['codex', 'exec', '--skip-git-repo-check', '--ephemeral', '--json', '-'],
  // `-m` skips the router call that picks a model (its JSON-schema answer is more than the mock fakes).
  gemini: ['gemini', '-m', 'gemini-3.8-flash', '-o', 'json'],
} as const;
