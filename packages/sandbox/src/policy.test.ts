import { describe, expect, it } from 'vitest';
import { effectivePolicy, INSTALL_HOSTS } from './install-hosts.js';
import { decide, isConfiguredRegistry } from './policy.js';
import type { EgressPolicy } from './types.js';

const policy: EgressPolicy = {
  explicit: ['api.example.com', 'docs.example.com', '203.0.113.7', '10.0.0.1'],
  docs_hosts: ['docs.example.com', 'example.net'],
  registries: ['registry.example.org:443', 'example.net:443', 'mirror.corp.test:8080', '[::1]:4873', 'legacy.example.org'],
  install_hosts: ['github.com'],
  registries_source: 'default',
};

describe('decide', () => {
  it('allows an explicit host and its subdomains on 443 and 80 only, even when it is also a docs host', () => {
    expect(decide(policy, 'api.example.com', 443)).toEqual({ allow: true, reason: 'explicit', rule: 'api.example.com' });
    expect(decide(policy, 'a.api.example.com', 80)).toEqual({ allow: true, reason: 'explicit', rule: 'api.example.com' });
    expect(decide(policy, 'docs.example.com', 443)).toMatchObject({ allow: true, reason: 'explicit' });
    for (const port of [8443, 22, 25, 1]) {
      const d = decide(policy, 'api.example.com', port);
      expect(d).toMatchObject({ allow: false, reason: 'not_allowlisted' });
      expect(!d.allow && d.message).toContain(`not ${port}`);
      expect(!d.allow && d.message).toContain('80, 443');
    }
  });

  it('denies a docs host before the registries, and says to use read_docs', () => {
    const d = decide(policy, 'www.example.net', 443);
    expect(d).toMatchObject({ allow: false, reason: 'docs_host' });
    expect(!d.allow && d.message).toMatch(/use read_docs/);
    expect(decide(policy, 'example.net', 443)).toMatchObject({ allow: false, reason: 'docs_host' });
  });

  it('allows a registry on the port of its URL and nothing else, and never its subdomains', () => {
    expect(decide(policy, 'registry.example.org', 443)).toEqual({ allow: true, reason: 'registry', rule: 'registry.example.org:443' });
    expect(decide(policy, 'REGISTRY.example.org.', 443)).toMatchObject({ allow: true, reason: 'registry' });
    expect(decide(policy, 'registry.example.org', 80)).toMatchObject({ allow: false, reason: 'not_allowlisted', message: expect.stringContaining('only on port 443, not 80') });
    expect(decide(policy, 'mirror.corp.test', 8080)).toMatchObject({ allow: true, reason: 'registry', rule: 'mirror.corp.test:8080' });
    expect(decide(policy, 'mirror.corp.test', 443)).toMatchObject({ allow: false, reason: 'not_allowlisted' });
    expect(decide(policy, 'a.registry.example.org', 443)).toMatchObject({ allow: false, reason: 'not_allowlisted' });
    expect(decide(policy, 'evilregistry.example.org', 443)).toMatchObject({ allow: false, reason: 'not_allowlisted' });
  });

  it('reads a bare registry host of an older stream as ports 443 and 80', () => {
    expect(decide(policy, 'legacy.example.org', 443)).toMatchObject({ allow: true, reason: 'registry', rule: 'legacy.example.org:443' });
    expect(decide(policy, 'legacy.example.org', 80)).toMatchObject({ allow: true, reason: 'registry' });
    expect(decide(policy, 'legacy.example.org', 8080)).toMatchObject({ allow: false, reason: 'not_allowlisted' });
    expect(isConfiguredRegistry(policy, 'legacy.example.org', 443)).toBe(false);
  });

  it('matches install hosts exactly: a subdomain is refused', () => {
    expect(decide(policy, 'github.com', 443)).toEqual({ allow: true, reason: 'install_host', rule: 'github.com' });
    expect(decide(policy, 'github.com', 80)).toMatchObject({ allow: true, reason: 'install_host' });
    expect(decide(policy, 'gist.github.com', 443)).toMatchObject({ allow: false, reason: 'not_allowlisted' });
    expect(decide(policy, 'github.com', 22)).toMatchObject({ allow: false, reason: 'not_allowlisted', message: expect.stringContaining('not 22') });
  });

  it('denies a raw IP unless an entry names exactly that address', () => {
    expect(decide(policy, '198.51.100.1', 443)).toMatchObject({ allow: false, reason: 'ip_literal' });
    expect(decide(policy, '::2', 443)).toMatchObject({ allow: false, reason: 'ip_literal' });
    expect(decide(policy, '::1', 443)).toMatchObject({ allow: false, reason: 'not_allowlisted', message: expect.stringContaining('only on port 4873') });
    expect(decide(policy, '203.0.113.7', 443)).toMatchObject({ allow: true, reason: 'explicit' });
    expect(decide(policy, '10.0.0.1', 443)).toMatchObject({ allow: true, reason: 'explicit' });
    // The old matcher let 0.0.1 cover 10.0.0.1 by dot-suffix.
    expect(decide({ ...policy, explicit: ['0.0.1'] }, '10.0.0.1', 443)).toMatchObject({ allow: false, reason: 'ip_literal' });
    expect(decide({ ...policy, explicit: ['0.1'] }, '10.0.0.1', 443)).toMatchObject({ allow: false });
    expect(decide(policy, '[::1]', 4873)).toMatchObject({ allow: true, reason: 'registry', rule: '[::1]:4873' });
    expect(decide(policy, '0:0::1', 4873)).toMatchObject({ allow: true, reason: 'registry' });
    expect(decide(policy, '::1', 4874)).toMatchObject({ allow: false, reason: 'not_allowlisted' });
  });

  it('denies everything else, and a request without a host', () => {
    expect(decide(policy, 'elsewhere.test', 443)).toMatchObject({ allow: false, reason: 'not_allowlisted', message: expect.stringContaining('elsewhere.test:443') });
    expect(decide(policy, '(relative-url)', 80)).toMatchObject({ allow: false, reason: 'bad_request' });
    expect(decide(policy, '', 443)).toMatchObject({ allow: false, reason: 'bad_request' });
    expect(decide(policy, 'api.example.com/x', 443)).toMatchObject({ allow: false, reason: 'bad_request' });
  });

  it('knows a configured registry endpoint only by exact host and port', () => {
    expect(isConfiguredRegistry(policy, 'mirror.corp.test', 8080)).toBe(true);
    expect(isConfiguredRegistry(policy, 'MIRROR.corp.test.', 8080)).toBe(true);
    expect(isConfiguredRegistry(policy, 'mirror.corp.test', 8081)).toBe(false);
    expect(isConfiguredRegistry(policy, 'x.mirror.corp.test', 8080)).toBe(false);
    expect(isConfiguredRegistry(policy, 'github.com', 443)).toBe(false);
    expect(isConfiguredRegistry(policy, 'api.example.com', 443)).toBe(false);
  });
});

describe('effectivePolicy', () => {
  const base: EgressPolicy = { explicit: ['api.example.com'], docs_hosts: ['docs.example.com'], registries: ['registry.example.org:443'], registries_source: 'default' };

  it('adds the install hosts and --allow-registry endpoints', () => {
    const p = effectivePolicy(base, { allowRegistries: ['Mirror.Corp.Test.', 'http://localhost:4873/', 'https://npm.corp.test/path/', 'http://plain.corp.test', '[::1]:8080', 'localhost:4874'] });
    expect(p.registries).toEqual(['registry.example.org:443', 'mirror.corp.test:443', 'localhost:4873', 'npm.corp.test:443', 'plain.corp.test:80', '[::1]:8080', 'localhost:4874']);
    expect(p.install_hosts).toEqual(INSTALL_HOSTS.map((h) => h.host));
    expect(p.explicit).toEqual(base.explicit);
    expect(p.docs_hosts).toEqual(base.docs_hosts);
    expect(effectivePolicy(p)).toEqual(p);
  });

  it('refuses an --allow-registry value that names no registry', () => {
    for (const bad of ['', 'not a host', 'ftp://x.test', 'x.test:0', 'x.test:70000', 'a..b', 'http://', '.x.test', 'x.test/path']) {
      expect(() => effectivePolicy(base, { allowRegistries: [bad] }), bad).toThrow(/--allow-registry/);
    }
  });

  it('adds no install hosts when the task said network.only, but still the --allow-registry ones', () => {
    const only: EgressPolicy = { explicit: ['api.example.com'], docs_hosts: [], registries: [], registries_source: 'only' };
    const p = effectivePolicy(only, { allowRegistries: ['mirror.corp.test'] });
    expect(p.registries).toEqual(['mirror.corp.test:443']);
    expect(p.install_hosts).toEqual([]);
    expect(effectivePolicy(base, { installHosts: false }).install_hosts).toEqual([]);
  });

  it('keeps raw.githubusercontent.com out: docs are hosted there', () => {
    expect(effectivePolicy(base).install_hosts).not.toContain('raw.githubusercontent.com');
    expect(decide(effectivePolicy(base), 'raw.githubusercontent.com', 443)).toMatchObject({ allow: false });
  });
});
