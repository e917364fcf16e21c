#!/bin/sh
':' //; if [ -n "${NODE_EXTRA_CA_CERTS+set}" ]; then export QUICKLOOP_NODE_EXTRA_CA_CERTS="$NODE_EXTRA_CA_CERTS"; unset NODE_EXTRA_CA_CERTS; else unset QUICKLOOP_NODE_EXTRA_CA_CERTS; fi; exec node "$0" "$@"
// Both a shell script and CommonJS (see package.json here; Node starts a CommonJS entry sooner than an ES module).
// Run as a program, the line above starts Node without NODE_EXTRA_CA_CERTS: Node 20 parses the file it names at every
// start (40-90 ms with a system CA bundle), and loop-run opens no TLS connection itself. startBundle() puts the variable
// back before anything runs, so the CLIs it starts see it unchanged. Started as `node bin/loop-run.js`, Node reads that line
// as a string and a comment, and loads the CA file as usual.
require('../dist/code-cache.cjs').startBundle(require('node:url').pathToFileURL(`${__dirname}/../dist/bundle.cjs`));
