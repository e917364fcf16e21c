import { describe, expect, it } from 'vitest';
import { addressClass, endpointOfUrl, formatEndpoint, hostMatches, isIP, isIpLiteral, normalizeHost, parseEndpoint, registryEndpoint } from './hosts.js';

describe('normalizeHost', () => {
  it('lower-cases, strips trailing dots and brackets, and spells addresses one way', () => {
    expect(normalizeHost('Registry.Example.ORG.')).toBe('registry.example.org');
    expect(normalizeHost('example.org..')).toBe('example.org');
    expect(normalizeHost('[2001:DB8:0:0::1]')).toBe('2001:db8::1');
    expect(normalizeHost('0:0:0:0:0:0:0:1')).toBe('::1');
    expect(normalizeHost('::FFFF:127.0.0.1')).toBe('::ffff:7f00:1');
    expect(normalizeHost('0x7f.1')).toBe('127.0.0.1');
    expect(normalizeHost('2130706433')).toBe('127.0.0.1');
    expect(normalizeHost('127.0.0.1.')).toBe('127.0.0.1');
    expect(normalizeHost('bücher.example')).toBe('xn--bcher-kva.example');
  });

  it('refuses what is not a host rather than guessing', () => {
    for (const bad of ['', '   ', '.', 'a b', 'evil.test/x', 'evil.test?x', 'u@evil.test', 'evil.test#', 'a\\b', '[::1', 'zz::1', '%41']) expect(normalizeHost(bad), bad).toBe('');
  });
});

describe('hostMatches', () => {
  it('is exact or dot-suffix, case-insensitive, trailing dot stripped', () => {
    expect(hostMatches('registry.example.org', 'registry.example.org')).toBe(true);
    expect(hostMatches('cdn.Registry.Example.org.', 'registry.example.org')).toBe(true);
    expect(hostMatches('REGISTRY.EXAMPLE.ORG', 'registry.example.org.')).toBe(true);
    expect(hostMatches('evilregistry.example.org', 'registry.example.org')).toBe(false);
    expect(hostMatches('registry.example.org.evil.test', 'registry.example.org')).toBe(false);
    expect(hostMatches('', 'x.test')).toBe(false);
    expect(hostMatches('x.test', '')).toBe(false);
  });

  it('matches exactly only when asked', () => {
    expect(hostMatches('gist.github.com', 'github.com', false)).toBe(false);
    expect(hostMatches('GitHub.com.', 'github.com', false)).toBe(true);
  });

  it('matches IP literals only exactly, whatever their spelling', () => {
    expect(isIpLiteral('10.1.1.1')).toBe(true);
    expect(isIpLiteral('[::1]')).toBe(true);
    expect(isIpLiteral('example.org')).toBe(false);
    expect(hostMatches('10.1.1.1', '1.1')).toBe(false);
    expect(hostMatches('10.0.0.1', '0.0.1')).toBe(false);
    expect(hostMatches('10.0.0.1', '0.1')).toBe(false);
    expect(hostMatches('10.1.1.1', '10.1.1.1')).toBe(true);
    expect(hostMatches('[0:0::1]', '::1')).toBe(true);
    expect(hostMatches('1.example.org', '1')).toBe(false);
  });
});

describe('endpoints', () => {
  it('are host:port, brackets around IPv6', () => {
    expect(formatEndpoint('x.test', 443)).toBe('x.test:443');
    expect(formatEndpoint('::1', 4873)).toBe('[::1]:4873');
    expect(parseEndpoint('X.Test.:8080')).toEqual({ host: 'x.test', port: 8080 });
    expect(parseEndpoint('[::1]:4873')).toEqual({ host: '::1', port: 4873 });
    expect(parseEndpoint('x.test')).toEqual({ host: 'x.test' });
    expect(parseEndpoint('::1')).toEqual({ host: '::1' });
    for (const bad of ['x.test:0', 'x.test:65536', 'x.test:', ':80', 'a:b:c', '[::1]x']) expect(parseEndpoint(bad), bad).toBeUndefined();
  });

  it('of a URL take its port, else 443 for https and 80 for http', () => {
    expect(endpointOfUrl('https://R.test/simple/')).toEqual({ host: 'r.test', port: 443 });
    expect(endpointOfUrl('http://r.test')).toEqual({ host: 'r.test', port: 80 });
    expect(endpointOfUrl('http://localhost:4873/')).toEqual({ host: 'localhost', port: 4873 });
    expect(endpointOfUrl('https://r.test:443/')).toEqual({ host: 'r.test', port: 443 });
    expect(endpointOfUrl('mirror+http://m.test/list')).toEqual({ host: 'm.test', port: 80 });
    expect(endpointOfUrl('https://user:pw@r.test:8443/')).toEqual({ host: 'r.test', port: 8443 });
    expect(endpointOfUrl('http://[::1]:8080/')).toEqual({ host: '::1', port: 8080 });
    expect(endpointOfUrl('ftp://r.test')).toBeUndefined();
    expect(endpointOfUrl('r.test')).toBeUndefined();
  });

  it('of --allow-registry: a URL, host:port, or a host on 443', () => {
    expect(registryEndpoint('mirror.test')).toEqual({ host: 'mirror.test', port: 443 });
    expect(registryEndpoint('localhost:4873')).toEqual({ host: 'localhost', port: 4873 });
    expect(registryEndpoint('http://localhost:4873/')).toEqual({ host: 'localhost', port: 4873 });
    expect(registryEndpoint('127.0.0.1:4873')).toEqual({ host: '127.0.0.1', port: 4873 });
    expect(registryEndpoint('under_score.test')).toBeUndefined();
    expect(registryEndpoint('x.test/path')).toBeUndefined();
    expect(registryEndpoint('https://a..b/')).toBeUndefined();
  });
});

describe('addressClass', () => {
  const refused = [
    '127.0.0.1', '127.255.255.254', '10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '169.254.0.1',
    '0.0.0.0', '0.1.2.3', '100.64.0.1', '100.127.255.255', '192.0.0.1', '224.0.0.1', '239.255.255.250', '255.255.255.255',
    '::', '::1', '0:0:0:0:0:0:0:1', '[::1]', '::ffff:127.0.0.1', '::FFFF:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::ffff:0:127.0.0.1', '::127.0.0.1', '::10.0.0.1',
    '64:ff9b::7f00:1', '64:ff9b::10.0.0.1', '64:ff9b:1::1', '2002:7f00:1::', '2002:c0a8:101::1', '2001::1',
    'fc00::1', 'fd12:3456::1', 'fdff:ffff::1', 'fe80::1', 'fe80::1%eth0', 'febf::1', 'fec0::1', 'ff02::1', 'ff05::1:3', '100::1',
    'localhost', 'not-an-address', '',
  ];
  // Documentation, benchmarking and reserved ranges are not the host's own: some closed networks answer public names with them.
  const allowed = ['192.0.2.1', '198.51.100.1', '203.0.113.80', '198.18.0.1', '240.0.0.1', '2001:db8::1', '1.1.1.1', '8.8.8.8', '172.15.255.255', '172.32.0.1', '192.167.1.1', '169.253.1.1', '100.63.255.255', '100.128.0.1', '11.0.0.1', '2606:4700::1111', '2a00:1450::1', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', 'fbff::1', 'fe7f::1'];

  it('refuses every non-public spelling', () => {
    for (const a of refused) expect(addressClass(a), a).toBeDefined();
  });

  it('passes public addresses', () => {
    for (const a of allowed) expect(addressClass(a), a).toBeUndefined();
  });

  it('says what the address is', () => {
    expect(addressClass('127.0.0.1')).toBe('loopback');
    expect(addressClass('::ffff:127.0.0.1')).toMatch(/^loopback \(IPv4 127\.0\.0\.1 inside IPv6\)/);
    expect(addressClass('fd00::1')).toMatch(/unique local/);
    expect(addressClass('fe80::1')).toMatch(/link-local/);
  });
});

describe('isIP', () => {
  it("answers as node:net's isIP does, for names, IPv4 and every IPv6 form", async () => {
    const net = await import('node:net');
    const samples = ['docs.example.com', 'localhost', '', '127.0.0.1', '0x7f.1', '1.2.3', '999.1.1.1', '::1', '::', 'fe80::1%eth0', '::ffff:127.0.0.1', '2001:db8::1', '[::1]', 'a:b', '1.2.3.4:80', 'gggg::1'];
    for (const s of samples) expect([s, isIP(s)]).toEqual([s, net.isIP(s)]);
  });
});
