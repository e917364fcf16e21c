#!/usr/bin/env node
import { start } from '../dist/start.js';
await start();
