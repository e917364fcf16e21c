#!/usr/bin/env node
import { startBundle } from '@quickloop/cli-kit/code-cache';
await startBundle(new URL('../dist/bundle.cjs', import.meta.url));
