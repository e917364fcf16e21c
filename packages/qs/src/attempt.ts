// The process `qs run` starts for each attempt (bin/attempt.js): the three stages of sweep/host.ts.
// argv: one JSON object, each stage's argv by name. The task's lines come on stdin, qs-check's stream
// goes to stdout, every stage's log lines to stderr, and the stages' exit codes, as a JSON array in
// pipe order, to file descriptor 3 with --report-codes (qs run opens it). Not a command for people: `qs run` is.
import { writeSync } from 'node:fs';
import { runBin, UsageError, type Io } from '@quickloop/cli-kit';
import { cli as agent } from '@quickloop/qs-agent';
import { cli as check } from '@quickloop/qs-check';
import { cli as sandbox } from '@quickloop/qs-sandbox';
import { HOSTED_STAGES, hostAttempt, type HostedStage } from './sweep/host.js';

export const CODES_FD = 3;

export function parseStageArgv(text: string | undefined): Record<HostedStage, string[]> {
  let value: unknown;
  try {
    value = JSON.parse(text ?? '');
  } catch {
    throw new UsageError('qs attempt: the argument must be a JSON object of each stage\'s argv (qs run starts this)');
  }
  const argvOf = {} as Record<HostedStage, string[]>;
  for (const name of HOSTED_STAGES) {
    const argv = (value as Record<string, unknown> | null)?.[name] ?? [];
    if (!Array.isArray(argv) || argv.some((a) => typeof a !== 'string')) throw new UsageError(`qs attempt: ${name}'s argv must be an array of strings`);
    argvOf[name] = argv as string[];
  }
  return argvOf;
}

export async function attemptCli(argv: string[], io: Io): Promise<number> {
  const [stages, ...flags] = argv;
  if (flags.some((f) => f !== '--report-codes')) throw new UsageError(`qs attempt: unknown argument ${flags.find((f) => f !== '--report-codes')}`);
  const codes = await hostAttempt({ 'qs-sandbox': sandbox, 'qs-agent': agent, 'qs-check': check }, parseStageArgv(stages), io);
  if (flags.length > 0) writeSync(CODES_FD, `${JSON.stringify(codes)}\n`);
  return codes.find((c) => c !== 0) ?? 0;
}

export async function main(): Promise<void> {
  await runBin(attemptCli, { name: 'qs attempt', family: 'qs' });
}
