// The replay agent: reads the docs route, then types the documented commands in order, stopping at the first failure.
import type { Agent, AgentContext, AgentOutcome } from './agent.js';

const oneLine = (s: string, n = 160): string => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > n ? `${flat.slice(0, n - 1)}…` : flat;
};

export const replayAgent: Agent = {
  name: 'replay',
  async run(ctx: AgentContext): Promise<AgentOutcome> {
    const { task, tools, signal } = ctx;
    const commands = task.replay;
    if (commands === null || commands.length === 0) {
      return { stopReason: 'skipped', detail: 'the task has no replay commands (agent-only)' };
    }
    // The route is read as a person following the quickstart would: it records what the replay was
    // based on, and a page that no longer answers shows up in the run even when the commands pass.
    for (const url of task.docs.path) {
      if (signal.aborted) return { stopReason: 'interrupted', detail: 'interrupted while reading the docs' };
      await tools.readDocs(url);
    }
    const deadlineMs = task.budgets.max_seconds * 1000;
    for (const [i, command] of commands.entries()) {
      if (signal.aborted) return { stopReason: 'interrupted', detail: `interrupted before replay step ${i + 1}` };
      if (ctx.elapsedMs() >= deadlineMs) {
        return { stopReason: 'timeout', detail: `max_seconds (${task.budgets.max_seconds}) reached before replay step ${i + 1}` };
      }
      const result = await tools.bash(command);
      if (signal.aborted) return { stopReason: 'interrupted', detail: `interrupted during replay step ${i + 1}: ${oneLine(command)}` };
      // A command bash could not be given says nothing about the docs: the task file is at fault.
      if (result.refused !== undefined) return { stopReason: 'error', detail: `replay step ${i + 1} (replay[${i}]) was not run: ${result.refused}` };
      // Killed at max_command_seconds: the run ran out of its budget, which is not a verdict on the docs.
      if (result.timedOut) return { stopReason: 'timeout', detail: `replay step ${i + 1} timed out after ${task.budgets.max_command_seconds}s (max_command_seconds): ${oneLine(command)}` };
      if (result.exitCode !== 0) return { stopReason: 'command_failed', detail: `replay step ${i + 1} exited ${result.exitCode}: ${oneLine(command)}` };
    }
    return { stopReason: 'completed', detail: `replayed ${commands.length} command${commands.length === 1 ? '' : 's'}` };
  },
};
