export { run, AGENTS, STAGE, type AgentOptions } from './run.js';
export { cli, main, VERSION } from './cli.js';
export { replayAgent } from './agents/replay.js';
export type { Agent, AgentContext, AgentOutcome } from './agents/agent.js';
export { createToolbelt, type Toolbelt, type Executor, type BashResult } from './toolbelt.js';
export { readDocsPage, headTail, MAX_PAGE_CHARS, type DocsResult } from './docs/client.js';
export { parseDocsMap, mappedFile, type DocsMapping } from './docs/docs-map.js';
export { htmlToText } from './docs/html-text.js';
