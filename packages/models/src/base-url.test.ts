// A base URL split for the SDKs, and the scrubber that keeps its secrets out of what is printed.
import { describe, expect, it } from 'vitest';
import { baseUrlScrubber, secretScrubber, splitBaseUrl } from './base-url.js';

describe('splitBaseUrl', () => {
  it('gives the URL before its query and fragment, the query as written with its names, and what may be a credential', () => {
    expect(splitBaseUrl('https://gw.test/v1?key=a%2Fb+c&v=1&v=2#frag')).toEqual({ base: 'https://gw.test/v1', query: 'key=a%2Fb+c&v=1&v=2', params: ['key', 'v'], secrets: ['a/b c', '1', '2'], words: ['a/b c', '1', '2'] });
    // A repeated key: the first value is as secret as the last.
    expect(baseUrlScrubber('https://gw.test/v1?key=first-key-1&key=second-key-2')('sent first-key-1 and second-key-2')).toBe('sent [redacted] and [redacted]');
    expect(splitBaseUrl('https://bob:p%40ss@gw.test/')).toEqual({ base: 'https://bob:p%40ss@gw.test/', query: '', params: [], secrets: ['bob', 'p@ss'], words: [] });
    expect(splitBaseUrl('http://127.0.0.1:8080')).toEqual({ base: 'http://127.0.0.1:8080', query: '', params: [], secrets: [], words: [] });
  });
});

describe('secretScrubber', () => {
  const secret = "s3cr/et+k 'ä";
  const scrub = secretScrubber([secret], ['key']);
  const pct = encodeURIComponent(secret);

  it('takes a secret out however it was written: raw, percent-encoded in either case or twice, form-encoded, escaped in a quoted string', () => {
    const forms = [secret, pct, pct.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()), encodeURIComponent(pct), new URLSearchParams({ k: secret }).toString().slice(2), secret.replace("'", "\\'")];
    for (const form of forms) expect(scrub(`before ${form} after`), form).toBe('before [redacted] after');
  });

  it("takes a query parameter's value out of a printed URL however short, and leaves short words alone elsewhere", () => {
    const short = secretScrubber(['ab1'], ['key']);
    expect(short("POST https://gw.test/v1/responses?key=ab1&v=2 and 'ab1'")).toBe("POST https://gw.test/v1/responses?key=[redacted]&v=2 and 'ab1'");
  });

  it('takes a short value out only where it stands as a word, so a word that merely contains it is left whole', () => {
    const s = secretScrubber(['prod', 'eu-1', '+k9-'], ['tenant', 'region'], ['prod', 'eu-1', '+k9-']);
    expect(s('tenant prod failed in production; eu-1 (eu-12 is fine); x%3Dprod, a+k9-b')).toBe('tenant [redacted] failed in production; [redacted] (eu-12 is fine); x%3D[redacted], a[redacted]b');
    // A long value, and a key of any length, is taken out wherever it is, glued to other characters too.
    const long = secretScrubber(['k9Zq4tLmW2xR', 'sk-9'], [], ['k9Zq4tLmW2xR']);
    expect(long('Bearerk9Zq4tLmW2xRtail xsk-9y')).toBe('Bearer[redacted]tail x[redacted]y');
    // Through a base URL: the query's short value as a word, the key anywhere.
    expect(baseUrlScrubber('https://gw.test/v1?tenant=prod', 'key1')('prod production key1s')).toBe('[redacted] production [redacted]s');
  });

  it('scrubs the key along with the base URL', () => {
    const s = baseUrlScrubber('https://gw.test/v1?token=tok-123456', 'sk-the-key-0001');
    expect(s('sent sk-the-key-0001 to https://gw.test/v1/x?token=tok-123456')).toBe('sent [redacted] to https://gw.test/v1/x?token=[redacted]');
  });
});

describe('an adapter error given to the caller', () => {
  const scrub = baseUrlScrubber('https://gw.example/v1?key=gw-secret-1', 'sk-test-key');
  it("drops the SDK's error it came from when that quotes a secret, even if its own message does not", async () => {
    const { scrubbed } = await import('./api/run-turn.js');
    const { ModelError } = await import('./errors.js');
    const sdk = new Error('403 {"error":{"message":"denied","url":"https://gw.example/v1/responses?key=gw-secret-1"}}');
    const e = scrubbed(new ModelError('config', 'openai: HTTP 403: denied', { status: 403, cause: sdk }), scrub);
    expect(e.message).toBe('openai: HTTP 403: denied');
    expect(e.cause).toBeUndefined();
    expect(e).toMatchObject({ errorKind: 'config', status: 403 });
    // Nothing to scrub anywhere: the very error, cause and all.
    const clean = new ModelError('config', 'openai: HTTP 403: denied', { status: 403, cause: new Error('403 denied') });
    expect(scrubbed(clean, scrub)).toBe(clean);
  });
});
