// openSandbox: the workspace, the egress proxy and a backend session, tied into one handle closed as one.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { proxySocketDir, SOCKETS, startBwrap } from './backends/bwrap.js';
import { startDirectCatcher } from './direct.js';
import type { BackendSession } from './backends/backend.js';
import { startLocal } from './backends/local.js';
import { selectBackend } from './backends/select.js';
import { sandboxEnv } from './env.js';
import { effectivePolicy } from './install-hosts.js';
import { checkLayout, createLayout, removeLayout } from './layout.js';
import { DenialScanner } from './denials.js';
import { DEFAULT_MAX_OUTPUT_CHARS } from './output.js';
import { runProcess } from './process.js';
import { startEgressProxy, type EgressProxy } from './proxy.js';
import { MAX_NAMED } from './leftovers.js';
import type { CloseReport, ExecOptions, ExecResult, OpenOptions, Sandbox, SandboxDescription } from './types.js';

export async function openSandbox(options: OpenOptions): Promise<Sandbox> {
  const selection = selectBackend(options.backend ?? 'auto', options.allowUnenforced === true);
  const layout = options.workspace ? checkLayout(options.workspace) : createLayout(options.baseDir);
  const hostEnv = options.env ?? process.env;
  const policy = options.workspace ? options.policy : effectivePolicy(options.policy, { installHosts: options.installHosts !== false });
  const onEgress = options.onEgress;
  let proxy: EgressProxy | undefined;
  let session: BackendSession;
  let catcher: { close(): Promise<void> } | undefined;
  if (selection.backend === 'bwrap') {
    const socketDir = proxySocketDir();
    const at = (name: keyof typeof SOCKETS): string => join(socketDir, SOCKETS[name]);
    proxy = await startEgressProxy({ policy, socketPath: at('proxy'), ...(onEgress ? { onEgress } : {}) });
    catcher = await startDirectCatcher({ policy, tcpSocketPath: at('direct'), dnsSocketPath: at('dns'), report: (e) => onEgress?.(e) });
    try {
      session = await startBwrap(layout, socketDir);
    } catch (error) {
      await proxy.close();
      await catcher.close();
      rmSync(socketDir, { recursive: true, force: true });
      // A workspace made just now for a sandbox that never came up is nobody's to remove later.
      if (!options.workspace) removeLayout(layout);
      throw error;
    }
  } else {
    proxy = await startEgressProxy({ policy, ...(onEgress ? { onEgress } : {}) });
    session = startLocal(proxy.port ?? 0);
  }
  const description: SandboxDescription = { ...layout, backend: session.name, enforced: session.enforced, reason: selection.reason, policy };
  const running = new Set<Promise<ExecResult>>();
  let closed: Promise<CloseReport> | undefined;

  return {
    describe: () => ({ ...description }),
    exec: (command: string, exec: ExecOptions = {}) => {
      if (closed) return Promise.reject(new Error('the sandbox is closed'));
      const { file, args } = session.argv(command);
      const run = runProcess({
        file,
        args,
        cwd: layout.workspace,
        env: sandboxEnv(layout, hostEnv, session.proxyUrl, exec.env),
        maxOutputChars: exec.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
        ...(exec.timeoutMs !== undefined ? { timeoutMs: exec.timeoutMs } : {}),
        ...(exec.signal ? { signal: exec.signal } : {}),
        onGroup: (pgid) => session.adopt(pgid),
        ...(session.denialRules ? { scanner: new DenialScanner(session.denialRules) } : {}),
      });
      running.add(run);
      void run.finally(() => running.delete(run));
      return run;
    },
    close: () => {
      closed ??= (async () => {
        const left = await session.close();
        await Promise.allSettled([...running]);
        await proxy?.close();
        await catcher?.close();
        return { leftRunning: left.slice(0, MAX_NAMED).map((p) => p.command) };
      })();
      return closed;
    },
  };
}
