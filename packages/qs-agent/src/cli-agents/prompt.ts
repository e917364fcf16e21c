// The CLI agents' instructions: what the API agents are told, said once on stdin.
import type { AgentContext } from '../agents/agent.js';

export function cliPrompt(task: AgentContext['task']): string {
  const route = task.docs.path.map((u, i) => `${i + 1}. ${u}`).join('\n');
  const allow = task.docs.allow.join(', ');
  return [
    'You are following a documentation quickstart the way a new user would, in an empty working directory.',
    '',
    `Goal: ${task.goal}`,
    '',
    'Read the documentation in this order:',
    route,
    '',
    `You may read documentation only from these hosts: ${allow}. Use only what the documentation says; do not rely on what you already know about the project.`,
    'Run the commands the documentation gives in the current directory with your shell tool. When you are done, or cannot go on, say in a few lines what you did and where the documentation fell short.',
    '',
  ].join('\n');
}
