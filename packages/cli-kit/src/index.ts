export { QsExit, LoopExit, exitCodeFor, type Family, type ErrorKind } from './exit-codes.js';
export {
  CliError,
  UsageError,
  InputError,
  InterruptedError,
  ExitError,
  PipeClosedError,
  isPipeClosed,
} from './errors.js';
export { shownName, SHOWN_NAME_CHARS, terminalSafe, type TextShape } from './safe-text.js';
export { createLogger, wantsColour, type Logger, type LogLevel, type LoggerOptions } from './logger.js';
export { defaultNewId, sequentialIds, steppingClock, type Io } from './io.js';
export { parseArgs, logLevel, type ArgsMeta, type CommonOptions } from './args.js';
export { parseFast, type FastFlag, type FastResult } from './fast-args.js';
export { runBin, reportError, type Main, type RunBinOptions } from './run-bin.js';
export { memoryIo, type MemoryIo } from './memory-io.js';
export { endGroup, endGroups, exitCodeOf, groupAlive, groupRunning, signalGroup, signalNumber } from './process-group.js';
export { makeDirs } from './dirs.js';
export { globalDispatcher, type Dispatcher } from './node-fetch.js';
