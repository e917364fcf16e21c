// Opens the run's sandbox again from the stream's sandbox.ready, under the same backend and policy.
import type { Payload } from '@quickloop/events';
import { limitsFrom, openSandbox, type BackendChoice, type EgressEvent, type Forward, type Sandbox } from '@quickloop/sandbox';

export type SandboxReady = Payload<'sandbox.ready'>;
export type TaskLoaded = Payload<'task.loaded'>;

export interface SandboxChoice {
  backend: BackendChoice;
  allowUnenforced: boolean;
  env: Record<string, string | undefined>;
}

/** Re-opens the workspace another stage described, with this stage's own egress proxy. */
export async function reopen(ready: SandboxReady, choice: SandboxChoice, onEgress: (e: EgressEvent) => void, extra: { forwards?: Forward[]; docsReachable?: boolean } = {}): Promise<Sandbox> {
  return openSandbox({
    workspace: { root: ready.root, workspace: ready.workspace, home: ready.home, tmp: ready.tmp },
    policy: ready.policy,
    backend: ready.backend === 'docker' ? 'auto' : ready.backend,
    // The stage that made the workspace already accepted an unenforced backend, and every
    // result downstream says so; asking for the flag again on each stage would add nothing.
    allowUnenforced: choice.allowUnenforced || !ready.enforced,
    env: choice.env,
    onEgress,
    limits: limitsFrom(ready.limits),
    ...(extra.forwards && extra.forwards.length > 0 ? { forwards: extra.forwards } : {}),
    ...(extra.docsReachable ? { docsReachable: true } : {}),
  });
}
