// `loop session-prompt RESOLVED [--out FILE]`: RUN_IN_SESSION.md from a loop.resolved.json, as Looper renders it.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { makeDirs } from '@quickloop/cli-kit/dirs';
import { readResolvedForRender, renderRunInSessionMd } from '@quickloop/loop-spec';
import type { LoopCommand } from '../command.js';

export const sessionPromptCommand: LoopCommand = {
  name: 'session-prompt',
  summary: 'Render RUN_IN_SESSION.md from a loop.resolved.json (Looper\'s text); to stdout, or --out FILE',
  synopsis: 'loop session-prompt RESOLVED [--out FILE]',
  positionals: { min: 1, max: 1, names: 'RESOLVED' },
  fastFlags: { out: { type: 'string', short: 'o' } },
  configure: (y) => y.option('out', { alias: 'o', type: 'string', describe: 'Write the prompt to FILE instead of stdout' }),
  run: async (args, io) => {
    const given = args.positionals[0] as string;
    const path = given.startsWith('/') ? given : join(io.cwd, given);
    const prompt = renderRunInSessionMd(readResolvedForRender(path), { flavour: 'looper' });
    if (typeof args.out === 'string') {
      const out = args.out.startsWith('/') ? args.out : join(io.cwd, args.out);
      makeDirs(dirname(out));
      writeFileSync(out, prompt, 'utf8');
      if (args.quiet !== true) io.stderr.write(`Wrote ${args.out}\n`);
    } else {
      // Looper print()s the prompt, which already ends in a newline: one more follows.
      io.stdout.write(`${prompt}\n`);
    }
    return 0;
  },
};
