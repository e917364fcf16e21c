export { run, STAGE, type CheckOptions } from './run.js';
export { cli, main, VERSION } from './cli.js';
export { classify, isEvidential, label, type RunEvidence } from './classify.js';
export { lastLine, runCheck } from './check.js';
export { newFacts, type RunFacts } from './facts.js';
export { sessionOutput } from './session.js';
export { pickPort } from './port.js';
