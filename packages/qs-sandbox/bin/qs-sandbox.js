#!/usr/bin/env node
import { main } from '../dist/bundle.js';
await main();
