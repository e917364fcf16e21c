import { describe, expect, it } from 'vitest';
import { hostMatches, isIpLiteral, normalizeHost } from './hosts.js';
import { effectivePolicy, INSTALL_HOSTS } from './install-hosts.js';
import { decide } from './policy.js';
import type { EgressPolicy } from './types.js';

const policy: EgressPolicy = {
  explicit: ['api.example.com', 'docs.example.com', '203.0.113.7'],
  docs_hosts: ['docs.example.com', 'example.net'],
  registries: ['registry.example.org', 'example.net'],
  registries_source: 'default',
};

describe('host matching', () => {
  it('is exact or dot-suffix, case-insensitive, trailing dot stripped', () => {
    expect(hostMatches('registry.example.org', 'registry.example.org')).toBe(true);
    expect(hostMatches('cdn.Registry.Example.org.', 'registry.example.org')).toBe(true);
    expect(hostMatches('REGISTRY.EXAMPLE.ORG', 'registry.example.org.')).toBe(true);
    expect(hostMatches('evilregistry.example.org', 'registry.example.org')).toBe(false);
    expect(hostMatches('registry.example.org.evil.test', 'registry.example.org')).toBe(false);
    expect(hostMatches('', 'x.test')).toBe(false);
  });

  it('matches IP literals only exactly', () => {
    expect(isIpLiteral('10.1.1.1')).toBe(true);
    expect(isIpLiteral('[::1]')).toBe(true);
    expect(isIpLiteral('example.org')).toBe(false);
    expect(hostMatches('10.1.1.1', '1.1')).toBe(false);
    expect(hostMatches('10.1.1.1', '10.1.1.1')).toBe(true);
    expect(normalizeHost('[2001:DB8::1]')).toBe('2001:db8::1');
  });
});

describe('decide', () => {
  it('allows an explicit host first, even when it is also a docs host', () => {
    expect(decide(policy, 'api.example.com')).toEqual({ allow: true, reason: 'explicit', rule: 'api.example.com' });
    expect(decide(policy, 'docs.example.com')).toMatchObject({ allow: true, reason: 'explicit' });
  });

  it('denies a docs host before the registries, and says to use read_docs', () => {
    const d = decide(policy, 'www.example.net');
    expect(d).toMatchObject({ allow: false, reason: 'docs_host' });
    expect(!d.allow && d.message).toMatch(/use read_docs/);
  });

  it('allows a registry host and its subdomains', () => {
    expect(decide(policy, 'registry.example.org')).toEqual({ allow: true, reason: 'registry', rule: 'registry.example.org' });
    expect(decide(policy, 'a.registry.example.org.')).toMatchObject({ allow: true, reason: 'registry' });
  });

  it('denies a raw IP unless it is listed explicitly', () => {
    expect(decide(policy, '198.51.100.1')).toMatchObject({ allow: false, reason: 'ip_literal' });
    expect(decide(policy, '::1')).toMatchObject({ allow: false, reason: 'ip_literal' });
    expect(decide(policy, '203.0.113.7')).toMatchObject({ allow: true, reason: 'explicit' });
  });

  it('denies everything else, and a request without a host', () => {
    expect(decide(policy, 'elsewhere.test')).toMatchObject({ allow: false, reason: 'not_allowlisted' });
    expect(decide(policy, '(relative-url)')).toMatchObject({ allow: false, reason: 'bad_request' });
    expect(decide(policy, '')).toMatchObject({ allow: false, reason: 'bad_request' });
  });
});

describe('effectivePolicy', () => {
  it('adds the install hosts and --allow-registry hosts to the default registries', () => {
    const p = effectivePolicy(policy, { allowRegistries: ['Mirror.Corp.Test.'] });
    expect(p.registries.slice(0, 2)).toEqual(['registry.example.org', 'example.net']);
    for (const { host } of INSTALL_HOSTS) expect(p.registries).toContain(host);
    expect(p.registries.at(-1)).toBe('mirror.corp.test');
    expect(p.explicit).toEqual(policy.explicit);
    expect(p.docs_hosts).toEqual(policy.docs_hosts);
  });

  it('adds no install hosts when the task said network.only, but still the --allow-registry ones', () => {
    const only: EgressPolicy = { explicit: ['api.example.com'], docs_hosts: [], registries: ['api.example.com'], registries_source: 'only' };
    expect(effectivePolicy(only, { allowRegistries: ['mirror.corp.test'] }).registries).toEqual(['api.example.com', 'mirror.corp.test']);
    expect(effectivePolicy(policy, { installHosts: false }).registries).toEqual(['registry.example.org', 'example.net']);
  });

  it('keeps raw.githubusercontent.com out: docs are hosted there', () => {
    expect(effectivePolicy(policy).registries).not.toContain('raw.githubusercontent.com');
  });
});
