// @quickloop/sandbox: workspaces, backends and the egress proxy that every command-running stage opens.
export type * from './types.js';
export { openSandbox } from './open.js';
export { selectBackend, type Selection } from './backends/select.js';
export { bwrapUnavailable, INSIDE_PROXY_PORT } from './backends/bwrap.js';
export { createLayout, checkLayout, removeLayout, MARKER } from './layout.js';
export { decide, isConfiguredRegistry, WEB_PORTS, type Decision } from './policy.js';
export { hostMatches, firstMatch, normalizeHost, isIpLiteral, addressClass, formatEndpoint, parseEndpoint, endpointOfUrl, registryEndpoint, type Endpoint } from './hosts.js';
export { startEgressProxy, type EgressProxy, type ProxyOptions, type LookupAll } from './proxy.js';
export { sandboxEnv, COPIED_VARS, NO_PROXY } from './env.js';
export { MAX_NAMED } from './leftovers.js';
export { DenialScanner, parseDenialLine, classify, MAX_DENIALS, type DenialRules } from './denials.js';
export { OutputCap, omissionMarker, DEFAULT_MAX_OUTPUT_CHARS } from './output.js';
export { INSTALL_HOSTS, effectivePolicy, allowRegistry, type PolicyExtras } from './install-hosts.js';
export { provisionSandbox, egressEmitter, emitDenials, emitUsage, setupFailureDetail, type ProvisionOptions, type Provisioned, type TaskLoadedPayload, type SandboxReadyPayload } from './provision.js';
export { diskUsage, type DiskUsage } from './usage.js';
export { DEFAULT_LIMITS, limitsFrom, resolveLimits } from './limits.js';
export { checkForwards } from './forwards.js';
export { shownInside, TOOLCHAINS } from './rootfs.js';
