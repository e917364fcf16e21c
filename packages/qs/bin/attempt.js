#!/usr/bin/env node
// One attempt of a sweep: qs-sandbox, qs-agent and qs-check in one process (src/attempt.ts). `qs run` starts it.
require('../dist/code-cache.cjs').startBundle(require('node:url').pathToFileURL(`${__dirname}/../dist/attempt.cjs`));
