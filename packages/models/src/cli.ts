// @quickloop/models/cli: the model-CLI adapter alone, for the loop binaries. It loads none of the
// vendor SDKs that the package's main entry brings in, which would add a fifth of a second to every start.
export { ZERO_USAGE, addUsage, usage, type ErrorKind, type Usage } from './types.js';
export { invokeCli, type CliResult, type InvokeCliOptions } from './cli/invoke.js';
export { parseCliOutput, type OutputMode, type ParsedOutput } from './cli/parse.js';
export { classifyStatus, classifyText, policyBlock, type Classified } from './cli/classify.js';
export { cliEnv, SAFE_ENV_KEYS } from './cli/env.js';
export { conventionalExitCode, usageTokens } from './cli/report.js';
