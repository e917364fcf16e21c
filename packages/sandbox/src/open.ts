// openSandbox: the workspace, the egress proxy and a backend session, tied into one handle closed as one.
import { chownSync, rmSync } from 'node:fs';
import { unrunnable } from '@quickloop/events';
import { join } from 'node:path';
import { endedIfNotEntered, INSIDE_USER, mirrorSocket, proxySocketDir, SOCKETS, startBwrap, SUPPORT_INSIDE, type BwrapSession } from './backends/bwrap.js';
import { startDirectCatcher } from './direct.js';
import type { BackendSession } from './backends/backend.js';
import { startLocal } from './backends/local.js';
import { selectBackend } from './backends/select.js';
import { sandboxEnv } from './env.js';
import { effectivePolicy } from './install-hosts.js';
import { checkLayout, createLayout, removeLayout } from './layout.js';
import { DenialScanner } from './denials.js';
import { LimitScanner, limitHits } from './limit-hits.js';
import { DEFAULT_MAX_OUTPUT_CHARS } from './output.js';
import { runProcess } from './process.js';
import { startEgressProxy, type EgressProxy } from './proxy.js';
import { MAX_NAMED } from './leftovers.js';
import { makeLimits, resolveLimits, type LimitInForce } from './limits.js';
import { loopbackRegistries, startMirrors } from './mirrors.js';
import { checkForwards, startForwardRelay, type ForwardInForce } from './forwards.js';
import { outerIds } from './rootfs.js';
import { egressRecord } from './egress-record.js';
import type { CloseReport, EgressEvent, ExecOptions, ExecResult, OpenOptions, Sandbox, SandboxDescription } from './types.js';

/**
 * The sandbox openSandbox would make, without its session (no namespaces, proxy or processes): its
 * folders, backend and policy, and the limits this machine enforces (found as a session finds them,
 * its cgroups made and removed at once). For a stage that runs nothing in it, qs-sandbox for a task
 * without setup commands: the stages after it open their own sessions on these folders.
 */
export async function planSandbox(options: OpenOptions): Promise<Sandbox> {
  if (options.workspace || (options.forwards?.length ?? 0) > 0) throw new Error('planSandbox makes a new workspace, and a forward needs a session');
  const selection = selectBackend(options.backend ?? 'auto', options.allowUnenforced === true);
  const policy = effectivePolicy(options.policy, { installHosts: options.installHosts !== false });
  let limits: LimitInForce[] = [];
  if (selection.backend === 'bwrap') {
    const { cgroups } = makeLimits(resolveLimits(options.limits));
    limits = cgroups.inForce;
    await cgroups.remove();
  }
  const layout = createLayout(options.baseDir);
  const description: SandboxDescription = { ...layout, backend: selection.backend, enforced: selection.backend === 'bwrap', reason: selection.reason, policy, limits };
  return {
    describe: () => ({ ...description, limits: description.limits.map((l) => ({ ...l })) }),
    exec: () => Promise.reject(new Error('a planned sandbox runs nothing: open it (openSandbox with its workspace) to run a command')),
    close: () => Promise.resolve({ leftRunning: [], egressUnrecorded: 0 }),
  };
}

export async function openSandbox(options: OpenOptions): Promise<Sandbox> {
  const selection = selectBackend(options.backend ?? 'auto', options.allowUnenforced === true);
  const layout = options.workspace ? checkLayout(options.workspace) : createLayout(options.baseDir);
  const hostEnv = options.env ?? process.env;
  const policy = options.workspace ? options.policy : effectivePolicy(options.policy, { installHosts: options.installHosts !== false });
  // Bounded: a command decides how many connections it makes (egress-record.ts).
  const record = egressRecord(options.onEgress);
  const onEgress = (e: EgressEvent): void => record.report(e);
  let proxy: EgressProxy | undefined;
  let session: BackendSession | BwrapSession;
  let catcher: { close(): Promise<void> } | undefined;
  let mirrors: { close(): Promise<void> } | undefined;
  const forwards = options.forwards ?? [];
  const relays: Array<{ close(): Promise<void> }> = [];
  const forwardsInForce: ForwardInForce[] = [];
  // A sandbox the reader may use to read docs itself (a model CLI): the proxy lets the docs hosts
  // through as it does explicit hosts, and records each connection. The policy described stays the
  // task's, so later stages (the check) are held to it.
  const proxyPolicy = options.docsReachable ? { ...policy, explicit: [...policy.explicit, ...policy.docs_hosts], docs_hosts: [] } : policy;
  const closeRelays = async (): Promise<void> => {
    await Promise.all(relays.map((r) => r.close()));
  };
  /** The proxy's socket folder, once made (bwrap). */
  let supportDir: string | undefined;
  try {
    if (selection.backend === 'bwrap') {
      const socketDir = (supportDir = proxySocketDir());
      const at = (name: keyof typeof SOCKETS): string => join(socketDir, SOCKETS[name]);
      const loopback = loopbackRegistries(policy);
      checkForwards(forwards, loopback.map((m) => m.port));
      proxy = await startEgressProxy({ policy: proxyPolicy, socketPath: at('proxy'), onEgress });
      catcher = await startDirectCatcher({ policy, tcpSocketPath: at('direct'), dnsSocketPath: at('dns'), report: onEgress });
      mirrors = await startMirrors(loopback, (m) => join(socketDir, mirrorSocket(m.port)), onEgress);
      // A forward is one more loopback port of the layer, relayed to the harness's socket.
      for (const f of forwards) {
        relays.push(await startForwardRelay(f, join(socketDir, mirrorSocket(f.port))));
        forwardsInForce.push({ name: f.name, port: f.port });
      }
      const ports = [...loopback.map((m) => m.port), ...forwards.map((f) => f.port)];
      // The network layer runs as the sandbox's host uid; a root harness gives it the sockets.
      if (process.getuid?.() === 0) {
        for (const path of [...(['proxy', 'direct', 'dns'] as const).map(at), ...ports.map((p) => join(socketDir, mirrorSocket(p)))]) chownSync(path, outerIds().uid, outerIds().gid);
      }
      session = await startBwrap(layout, socketDir, resolveLimits(options.limits), ports);
    } else {
      checkForwards(forwards, []);
      proxy = await startEgressProxy({ policy: proxyPolicy, onEgress });
      // Nothing is enforced here: the forward answers on a free port of the host's own loopback.
      for (const f of forwards) {
        const relay = await startForwardRelay(f, 0);
        relays.push(relay);
        forwardsInForce.push({ name: f.name, port: relay.port });
      }
      session = startLocal(proxy.port ?? 0);
    }
  } catch (error) {
    // Whatever came up before the failure (a forward refused, a proxy or the namespace that would not
    // start) is ended, and a workspace made just now for a sandbox that never came up is nobody's to remove later.
    await proxy?.close();
    await catcher?.close();
    await mirrors?.close();
    await closeRelays();
    if (supportDir !== undefined) rmSync(supportDir, { recursive: true, force: true });
    if (!options.workspace) removeLayout(layout);
    throw error;
  }
  const limits = 'limits' in session ? session.limits : [];
  const description: SandboxDescription = { ...layout, backend: session.name, enforced: session.enforced, reason: selection.reason, policy, limits, ...(forwardsInForce.length > 0 ? { forwards: forwardsInForce } : {}) };
  const running = new Set<Promise<ExecResult>>();
  let closed: Promise<CloseReport> | undefined;

  return {
    describe: () => ({ ...description, limits: description.limits.map((l) => ({ ...l })), ...(description.forwards ? { forwards: description.forwards.map((f) => ({ ...f })) } : {}) }),
    exec: (command: string, exec: ExecOptions = {}) => {
      if (closed) return Promise.reject(new Error('the sandbox is closed'));
      // The stages refuse these first; a caller of the library that did not gets a result, not a throw.
      const unfit = unrunnable(command);
      if (unfit) return Promise.resolve(refused(unfit));
      const { file, args, fd3 } = session.argv(command);
      const witness = session.limitWitness;
      const limitScanner = witness ? new LimitScanner() : undefined;
      // The sandbox's own counters, around this command: a delta is what happened while it ran.
      const before = session.limitCounters?.() ?? {};
      const ran = runProcess({
        file,
        args,
        ...(fd3 !== undefined ? { fd3 } : {}),
        // Under bwrap the command's folder is chosen inside the namespace: the host's never leaks in.
        cwd: session.enforced ? '/' : layout.workspace,
        env: session.enforced ? insideEnv(sandboxEnv(layout, hostEnv, session.proxyUrl, exec.env)) : sandboxEnv(layout, hostEnv, session.proxyUrl, exec.env),
        maxOutputChars: exec.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
        ...(exec.timeoutMs !== undefined ? { timeoutMs: exec.timeoutMs } : {}),
        ...(exec.signal ? { signal: exec.signal } : {}),
        onGroup: (pgid) => session.adopt(pgid),
        ...(session.denialRules ? { scanner: new DenialScanner(session.denialRules) } : {}),
        ...(limitScanner ? { limitScanner } : {}),
      });
      const started = witness && limitScanner
        ? ran.then((r) => ({ ...r, limitHits: limitHits(witness, r.exitCode, before, session.limitCounters?.() ?? {}, limitScanner.end()) }))
        : ran;
      const run = session.ended ? started.then((r) => endedIfNotEntered(r, session.ended?.() === true)) : started;
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
        await mirrors?.close();
        await closeRelays();
        return { leftRunning: left.slice(0, MAX_NAMED).map((p) => p.command), egressUnrecorded: record.unrecorded() };
      })();
      return closed;
    },
  };
}

function refused(why: string): ExecResult {
  const output = `quickloop: not run: ${why}\n`;
  return { exitCode: 126, output, originalChars: output.length, truncated: false, timedOut: false, durationMs: 0, denials: [], limitHits: [] };
}

/** Inside the enforced sandbox: the sandbox user's name, and its support folder (sudo) first on PATH. */
function insideEnv(env: Record<string, string>): Record<string, string> {
  return { ...env, PATH: `${SUPPORT_INSIDE}/bin:${env.PATH ?? ''}`, USER: INSIDE_USER, LOGNAME: INSIDE_USER };
}
