#!/usr/bin/env node
// CommonJS (see package.json here): Node starts it sooner than an ES module entry, and start-up is most of a short run.
require('../dist/code-cache.cjs').startBundle(require('node:url').pathToFileURL(`${__dirname}/../dist/bundle.cjs`));
