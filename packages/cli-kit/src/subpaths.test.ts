// The subpath exports let a fast-starting binary skip yargs; they must be the very same modules as the index's.
import { describe, expect, it } from 'vitest';
import * as index from '@quickloop/cli-kit';
import * as errors from '@quickloop/cli-kit/errors';
import * as exitCodes from '@quickloop/cli-kit/exit-codes';
import * as io from '@quickloop/cli-kit/io';
import * as logger from '@quickloop/cli-kit/logger';
import * as memoryIo from '@quickloop/cli-kit/memory-io';
import * as runBin from '@quickloop/cli-kit/run-bin';
import * as fastArgs from '@quickloop/cli-kit/fast-args';
import * as safeText from '@quickloop/cli-kit/safe-text';
import * as args from '@quickloop/cli-kit/args';
import * as processGroup from '@quickloop/cli-kit/process-group';
import * as nodeFetch from '@quickloop/cli-kit/node-fetch';

describe('subpath exports', () => {
  it('resolve to the same classes and functions as the package index', () => {
    expect(errors.CliError).toBe(index.CliError);
    expect(errors.UsageError).toBe(index.UsageError);
    expect(exitCodes.LoopExit).toBe(index.LoopExit);
    expect(io.sequentialIds).toBe(index.sequentialIds);
    expect(logger.createLogger).toBe(index.createLogger);
    expect(memoryIo.memoryIo).toBe(index.memoryIo);
    expect(runBin.runBin).toBe(index.runBin);
    expect(fastArgs.parseFast).toBe(index.parseFast);
    expect(safeText.terminalSafe).toBe(index.terminalSafe);
    expect(args.parseArgs).toBe(index.parseArgs);
    expect(args.logLevel).toBe(logger.logLevel);
    expect(index.logLevel).toBe(logger.logLevel);
    expect(processGroup.endGroups).toBe(index.endGroups);
    expect(nodeFetch.globalDispatcher).toBe(index.globalDispatcher);
  });
});
