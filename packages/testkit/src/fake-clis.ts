// Test-side helpers for the fake model CLIs in bin-fakes/: a scratch dir with a script, personas and the call log.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type FakeCliKind = 'claude' | 'codex' | 'gemini';

/** The directory holding the fake `claude`, `codex` and `gemini` executables (put it on PATH, or use `fakeCliPath`). */
export const FAKE_CLI_DIR = fileURLToPath(new URL('../bin-fakes/', import.meta.url));

export function fakeCliPath(kind: FakeCliKind): string {
  return join(FAKE_CLI_DIR, kind);
}

/** One scripted call of a fake CLI; see README for what each field does. */
export interface FakeStep {
  /** The answer text; `{n}` becomes the call number of this persona (1-based). */
  reply?: string;
  /** Answer with the prompt itself. */
  echo?: boolean;
  exitCode?: number;
  delayMs?: number;
  /** Never answer (after writing `partial`, if given). */
  hang?: boolean;
  partial?: string;
  /** Start a grandchild that ignores SIGTERM and outlives the CLI unless its process group is killed. */
  spawnChild?: boolean;
  ignoreSigterm?: boolean;
  usage?: Partial<{ input: number; output: number; cacheRead: number; cacheWrite: number; reasoning: number }>;
  costUsd?: number;
  /** Write this text (or, with `true`, a truncated JSON document) instead of the CLI's output. */
  malformed?: string | true;
  stderr?: string;
  /** Fail as the CLI does when the API answered with this status. */
  apiError?: { status: number; message?: string };
  refusal?: string;
  contextOverflow?: boolean;
  /** Pad the reply to this many bytes. */
  outputBytes?: number;
}

export interface FakeCall {
  seq: number;
  kind: FakeCliKind;
  persona: string;
  /** 0-based call number of this persona. */
  index: number;
  argv: string[];
  prompt: string;
  cwd: string;
  pid: number;
  envKeys: string[];
}

export interface FakeCliHome {
  readonly dir: string;
  /** Variables that point the fakes at this script and log: merge them into the env given to a CLI. */
  readonly env: Record<string, string>;
  /** A directory with `claude`, `codex`, `gemini` in it: prepend to PATH so argv `['claude', …]` finds the fake. */
  readonly binDir: string;
  /**
   * An executable `<binDir>/<name>` that behaves as the fake `kind` with its own script list (`script[name]`),
   * so a host and a judge can both be "claude" and still answer differently.
   */
  persona(name: string, kind: FakeCliKind): string;
  /** Every call made so far, in start order. */
  calls(): FakeCall[];
  /** `[cliPid, grandchildPid]` pairs written by steps with `spawnChild`. */
  spawned(): Array<[number, number]>;
  cleanup(): void;
}

export function createFakeCliHome(script: FakeStep[] | Record<string, FakeStep[]> = [{}]): FakeCliHome {
  const dir = mkdtempSync(join(tmpdir(), 'ql-fake-cli-'));
  const scriptPath = join(dir, 'script.json');
  const stateDir = join(dir, 'state');
  const binDir = join(dir, 'bin');
  mkdirSync(stateDir);
  mkdirSync(binDir);
  writeFileSync(scriptPath, JSON.stringify(script));
  const persona = (name: string, kind: FakeCliKind) => {
    const file = join(binDir, name);
    // A wrapper rather than a symlink: the persona travels in the environment, argv stays the CLI's own.
    writeFileSync(file, `#!${process.execPath}\nprocess.env.QL_FAKE_PERSONA = ${JSON.stringify(name)};\nrequire(${JSON.stringify(fakeCliPath(kind))});\n`);
    chmodSync(file, 0o755);
    return file;
  };
  for (const kind of ['claude', 'codex', 'gemini'] as const) persona(kind, kind);
  return {
    dir,
    env: { QL_FAKE_SCRIPT: scriptPath, QL_FAKE_STATE: stateDir },
    binDir,
    persona,
    calls: () =>
      readdirSync(stateDir)
        .filter((f) => f.startsWith('call-'))
        .sort()
        .map((f) => JSON.parse(readFileSync(join(stateDir, f), 'utf8')) as FakeCall),
    spawned: () => {
      const file = join(stateDir, 'pids');
      if (!existsSync(file)) return [];
      return readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split(' ').map(Number) as [number, number]);
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** True while `pid` is a live process; a zombie (exited, not yet reaped) counts as gone. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return existsSync(`/proc/${pid}`);
  }
}
