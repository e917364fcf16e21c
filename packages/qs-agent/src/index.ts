export { run, AGENTS, STAGE, type AgentOptions } from './run.js';
export { cli, main, VERSION } from './cli.js';
export { replayAgent } from './agents/replay.js';
export type { Agent, AgentContext, AgentOutcome } from './agents/agent.js';
export { createToolbelt, type Toolbelt, type Executor, type BashResult, type DocsSettings } from './toolbelt.js';
export { parseDocsMap, mappedFile, type DocsMapping } from '@quickloop/docs';
