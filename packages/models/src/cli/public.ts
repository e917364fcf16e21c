// @quickloop/models/cli: reading model CLIs' output and classifying their failures, without the vendor SDKs (a stage's start-up stays light).
export { parseCliOutput, type OutputMode, type ParsedOutput } from './parse.js';
export { classifyStatus, classifyText, type Classified } from './classify.js';
export type { ErrorKind, Usage } from '../types.js';
