#!/usr/bin/env node
// A scriptable stand-in for a model CLI (host, reviewer or judge): reads the prompt on stdin, records it, answers per flags.
//   --name N --capture DIR   record each prompt as DIR/N-<k>.txt (k counts calls across processes)
//   --verdicts a,b,c         judge: the k-th verdict (pass|pass-with-issues|revise|malformed|hang), the last one repeats
//   --unique / --same        judge: always revise, with a new / the same blocking issue each time
//   --leak FILE              host: put FILE's content (path relative to cwd) into the artifact
//   --output-format json     answer like claude -p --output-format json, with usage and cost
//   --reasoning N            with json: N of the 50 output tokens were reasoning (output includes them)
//   --input-tokens N         with json: report N input tokens (default 100)
//   --fail-first N --stderr S   exit 1 with S on stderr for the first N calls
//   --barrier N              wait until N calls (of any fake) have reached the barrier: proves they overlap
//   --slow-first MS          the first call answers only after MS milliseconds
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? dflt : args[i + 1];
};
const has = (name) => args.includes(`--${name}`);
const name = opt('name', 'model');
const dir = opt('capture', process.cwd());
const prompt = readFileSync(0, 'utf8');
const countFile = join(dir, `${name}.count`);
const k = (existsSync(countFile) ? Number(readFileSync(countFile, 'utf8')) : 0) + 1;
writeFileSync(countFile, String(k));
writeFileSync(join(dir, `${name}-${k}.txt`), prompt);
appendFileSync(join(dir, 'calls.log'), `${name}\n`);

if (k <= Number(opt('fail-first', '0'))) {
  process.stderr.write(`${opt('stderr', 'error')}\n`);
  process.exit(1);
}

if (k === 1 && Number(opt('slow-first', '0')) > 0) await new Promise((r) => setTimeout(r, Number(opt('slow-first', '0'))));

const barrier = Number(opt('barrier', '0'));
if (barrier > 0) {
  writeFileSync(join(dir, `barrier-${name}-${k}`), '');
  // Calls made one after another never meet here: give up (and fail) rather than wait forever.
  const deadline = Date.now() + 10_000;
  while (readdirSync(dir).filter((f) => f.startsWith('barrier-')).length < barrier) {
    if (Date.now() > deadline) {
      process.stderr.write('barrier never reached: calls did not overlap\n');
      process.exit(3);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

let answer;
if (opt('verdicts') || has('unique') || has('same')) {
  const list = (opt('verdicts') ?? '').split(',').filter(Boolean);
  const v = has('unique') || has('same') ? 'revise' : list[Math.min(k, list.length) - 1];
  if (v === 'hang') {
    writeFileSync(join(dir, `${name}.hang`), String(process.pid));
    setInterval(() => undefined, 1 << 30);
  } else if (v === 'malformed') answer = 'I think it is mostly fine, maybe pass? {not json';
  else {
    const issue = has('unique') ? `issue number ${k}: tighten section ${k}` : 'the plan has no milestones';
    const body = { verdict: v === 'pass-with-issues' ? 'pass' : v, blocking_issues: v === 'pass' ? [] : [issue], confidence: 0.8, notes: `call ${k}` };
    answer = `Here is my verdict.\n\`\`\`json\n${JSON.stringify(body)}\n\`\`\`\nThanks.`;
  }
} else if (name.startsWith('reviewer')) {
  answer = `Reviewer notes (call ${k}): consider a clearer title.`;
} else {
  const first = prompt.split('\n')[0];
  answer = `# Artifact ${k}\n\nA haiku about loops\nround and round the gate goes\nuntil it says pass\n\n(for: ${first})`;
  const leak = opt('leak');
  if (leak) answer += `\n\nNotes: ${readFileSync(leak, 'utf8')}`;
}
if (answer === undefined) process.exitCode = 0;
else if (opt('output-format') === 'json') {
  process.stdout.write(`${JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: answer, total_cost_usd: 0.01, usage: { input_tokens: Number(opt('input-tokens', '100')), cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 50, ...(opt('reasoning') ? { output_tokens_details: { reasoning_tokens: Number(opt('reasoning')) } } : {}) } })}\n`);
} else process.stdout.write(`${answer}\n`);
