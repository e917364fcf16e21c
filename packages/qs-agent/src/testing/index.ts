// Test support shared by the pipeline packages: a docs site on loopback and hand-made task.loaded events.
export { serveDocs, type DocsServer } from './docs-server.js';
export { taskLoaded, ndjson, parseOut, GREETER_DOCS, type TaskSpec } from './task-event.js';
