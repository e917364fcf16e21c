// The process `qs run` starts for each attempt (bin/attempt.js): the three stages of sweep/host.ts.
// argv: `[--report-codes] N1 ARGS1... N2 ARGS2... N3 ARGS3...`, each stage's argv after its length, in
// pipe order (every argument stays one of its own, under the kernel's limit for one as before). The
// task's lines come on stdin, qs-check's stream goes to stdout, every stage's log lines to stderr, and
// with --report-codes one JSON line to file descriptor 3 (qs run opens it): the stages' exit codes in
// pipe order, and the sandbox folders left for qs to remove (it removes them while its next attempt
// starts; when qs has gone, this process removes them itself). Not a command for people: `qs run` is.
import { writeSync } from 'node:fs';
import { isPipeClosed, runBin, UsageError, type Io } from '@quickloop/cli-kit';
import { cli as agent } from '@quickloop/qs-agent';
import { cli as check } from '@quickloop/qs-check';
import { cli as sandbox } from '@quickloop/qs-sandbox';
import { removeLayout } from '@quickloop/sandbox';
import { HOSTED_STAGES, hostAttempt, type HostedStage } from './sweep/host.js';

export const CODES_FD = 3;
const REPORT = '--report-codes';

/** The argv `qs run` gives the attempt process. */
export function attemptArgv(argvOf: Record<HostedStage, string[]>, reportCodes: boolean): string[] {
  return [...(reportCodes ? [REPORT] : []), ...HOSTED_STAGES.flatMap((name) => [String(argvOf[name].length), ...argvOf[name]])];
}

export function parseAttemptArgv(argv: string[]): { argvOf: Record<HostedStage, string[]>; reportCodes: boolean } {
  const reportCodes = argv[0] === REPORT;
  let at = reportCodes ? 1 : 0;
  const argvOf = {} as Record<HostedStage, string[]>;
  for (const name of HOSTED_STAGES) {
    const n = Number(argv[at]);
    if (argv[at] === undefined || !/^\d+$/.test(argv[at] as string) || at + 1 + n > argv.length) throw new UsageError(`expected ${name}'s argument count at argument ${at + 1} (qs run starts this)`);
    argvOf[name] = argv.slice(at + 1, at + 1 + n);
    at += 1 + n;
  }
  if (at !== argv.length) throw new UsageError(`${argv.length - at} argument(s) after qs-check's`);
  return { argvOf, reportCodes };
}

/** What an attempt reports on CODES_FD. */
export interface AttemptReport {
  codes: number[];
  /** Sandbox roots for qs to remove. */
  remove: string[];
}

export async function attemptCli(argv: string[], io: Io): Promise<number> {
  const { argvOf, reportCodes } = parseAttemptArgv(argv);
  const leaving = new Set<string>();
  const codes = await hostAttempt({ 'qs-sandbox': sandbox, 'qs-agent': agent, 'qs-check': check }, argvOf, io, reportCodes ? (root) => leaving.add(root) : undefined);
  if (reportCodes) {
    const report: AttemptReport = { codes, remove: [...leaving] };
    try {
      writeSync(CODES_FD, `${JSON.stringify(report)}\n`);
    } catch (error) {
      // qs has gone (a second Ctrl-C): nobody is left to tell, or to remove what the attempt made
      if (!isPipeClosed(error)) throw error;
      for (const root of leaving) {
        try {
          removeLayout({ root });
        } catch {
          // not a sandbox of ours, or not removable: and nobody left to say so to
        }
      }
    }
  }
  return codes.find((c) => c !== 0) ?? 0;
}

export async function main(): Promise<void> {
  await runBin(attemptCli, { name: 'qs attempt', family: 'qs' });
}
