// Shared machinery of the fake model CLIs: the per-test script, call claiming, the call log and the misbehaviours.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const DEFAULT_USAGE = { input: 12, output: 7, cacheRead: 0, cacheWrite: 0, reasoning: 0 };

function fail(kind, message, code = 2) {
  process.stderr.write(`${kind}: ${message}\n`);
  process.exit(code);
}

/** The first free index among `<dir>/<prefix>-<i>`, claimed with O_EXCL so parallel calls never share one. */
function claim(dir, prefix) {
  for (let i = 0; ; i++) {
    try {
      fs.closeSync(fs.openSync(path.join(dir, `${prefix}-${i}`), 'wx'));
      return i;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
  }
}

/**
 * The step for this call. QL_FAKE_STEP (one JSON step for every call) wins; else QL_FAKE_SCRIPT names a JSON
 * file holding an array of steps, or an object of arrays keyed by persona, CLI kind or "*". Steps are taken in
 * order per persona; the last one repeats once the list is used up.
 */
function loadStep(kind) {
  const persona = process.env.QL_FAKE_PERSONA || kind;
  const stateDir = process.env.QL_FAKE_STATE || (process.env.QL_FAKE_SCRIPT ? `${process.env.QL_FAKE_SCRIPT}.d` : undefined);
  let index = 0;
  let seq = 0;
  if (stateDir) {
    fs.mkdirSync(stateDir, { recursive: true });
    index = claim(stateDir, `claim-${persona}`);
    seq = claim(stateDir, 'seq');
  }
  let step = {};
  if (process.env.QL_FAKE_STEP) {
    try {
      step = JSON.parse(process.env.QL_FAKE_STEP);
    } catch (error) {
      fail(`fake-${kind}`, `QL_FAKE_STEP is not JSON: ${error.message}`);
    }
  } else if (process.env.QL_FAKE_SCRIPT) {
    let script;
    try {
      script = JSON.parse(fs.readFileSync(process.env.QL_FAKE_SCRIPT, 'utf8'));
    } catch (error) {
      fail(`fake-${kind}`, `cannot read QL_FAKE_SCRIPT ${process.env.QL_FAKE_SCRIPT}: ${error.message}`);
    }
    const steps = Array.isArray(script) ? script : script[persona] || script[kind] || script['*'];
    if (!Array.isArray(steps) || steps.length === 0) fail(`fake-${kind}`, `QL_FAKE_SCRIPT has no steps for persona "${persona}"`);
    step = steps[Math.min(index, steps.length - 1)];
  }
  return { step, persona, index, seq, stateDir };
}

function readStdin() {
  try {
    return fs.readFileSync(0, 'utf8');
  } catch (error) {
    // A closed or absent stdin reads as empty, like the real CLIs.
    if (error.code === 'EAGAIN' || error.code === 'EOF' || error.code === 'ENXIO') return '';
    throw error;
  }
}

function record(ctx, kind, argv, prompt) {
  if (!ctx.stateDir) return;
  const entry = {
    seq: ctx.seq,
    kind,
    persona: ctx.persona,
    index: ctx.index,
    argv,
    prompt,
    cwd: process.cwd(),
    pid: process.pid,
    // Names only: a test asserts which variables reached the CLI without writing their values to disk.
    envKeys: Object.keys(process.env).filter((k) => !k.startsWith('QL_FAKE_')).sort(),
  };
  fs.writeFileSync(path.join(ctx.stateDir, `call-${String(ctx.seq).padStart(5, '0')}.json`), JSON.stringify(entry) + '\n');
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Starts the misbehaviours that come before any output: a grandchild that outlives us, a delay, a hang. */
async function misbehave(ctx, step) {
  if (step.ignoreSigterm) process.on('SIGTERM', () => process.stderr.write('fake: ignoring SIGTERM\n'));
  if (step.spawnChild) {
    const child = spawn(process.execPath, ['-e', 'process.on("SIGTERM",()=>{});setInterval(()=>{},1000)'], { stdio: 'ignore' });
    if (ctx.stateDir) fs.appendFileSync(path.join(ctx.stateDir, 'pids'), `${process.pid} ${child.pid}\n`);
    child.unref();
  }
  if (step.delayMs) await sleep(step.delayMs);
  if (step.hang) {
    if (step.partial) process.stdout.write(step.partial);
    await new Promise(() => setInterval(() => {}, 1000));
  }
}

function replyText(step, prompt, kind, index) {
  let text = step.echo ? prompt : step.reply !== undefined ? String(step.reply) : `fake ${kind} reply ${index + 1}`;
  text = text.replaceAll('{n}', String(index + 1));
  if (step.outputBytes && text.length < step.outputBytes) text += 'x'.repeat(step.outputBytes - text.length);
  return text;
}

function usageOf(step) {
  return { ...DEFAULT_USAGE, ...(step.usage || {}) };
}

/** Minimal argv parsing that knows each CLI's flags, so a wrong argv fails as it would with the real CLI. */
function parseArgv(argv, spec, kind) {
  const flags = {};
  const positionals = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-' || !arg.startsWith('-')) {
      positionals.push(arg);
      continue;
    }
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const canonical = spec.alias[name] || name;
    if (spec.value.includes(canonical)) {
      const value = inline !== undefined ? inline : argv[++i];
      if (value === undefined) fail(`error`, `option '${name}' argument missing`, 1);
      (flags[canonical] = flags[canonical] || []).push(value);
    } else if (spec.boolean.includes(canonical)) {
      flags[canonical] = [true];
    } else {
      fail('error', `unknown option '${name}' (fake ${kind})`, 1);
    }
  }
  return { flags, positionals };
}

async function writeOut(text) {
  await new Promise((resolve) => process.stdout.write(text, resolve));
}

module.exports = { loadStep, readStdin, record, misbehave, replyText, usageOf, parseArgv, writeOut, fail };
