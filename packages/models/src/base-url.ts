// A base URL as the SDKs must be given it, and what in it must never be shown. A gateway may take its key
// in the query (`https://gw.example/v1?key=…`); the SDKs append their paths to the base URL as text, which
// would put `/responses` inside that query, so the query travels apart and is added to every request.

export interface BaseUrl {
  /** The base URL without its query and fragment: what the SDK appends its paths to. */
  base: string;
  /**
   * The query as written, without its `?`: what is sent on every request, pair by pair as it is (a
   * name given twice keeps both values, in order; a gateway may take several).
   */
  query: string;
  /** The names in the query, decoded, each once. */
  params: string[];
  /** What may be a credential: the user, the password, every query value (decoded). */
  secrets: string[];
  /** The query's values among them: a short one is an ordinary word as often as a key (`?tenant=prod`). */
  words: string[];
}

export function splitBaseUrl(raw: string): BaseUrl {
  const u = new URL(raw);
  // Every value is a secret, a repeated name's earlier ones too: the CLI agents' forwarder sends them all.
  const unique = (xs: string[]): string[] => xs.filter((s, i, all) => s !== '' && all.indexOf(s) === i);
  const words = unique([...u.searchParams.values()]);
  const query = /^[^?#]*\?([^#]*)/.exec(raw)?.[1] ?? '';
  return { base: raw.split(/[?#]/)[0]!, query, params: unique([...u.searchParams.keys()]), secrets: unique([decoded(u.username), decoded(u.password), ...words]), words };
}

function decoded(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Shorter values are not looked for in free text (they would scrub ordinary words); in a URL's query they still are. */
const MIN_SECRET = 4;
/**
 * A query value shorter than this (`?tenant=prod`) is taken out only where it stands as a word
 * (`production` stays whole). A longer one, and any key or password, wherever it is, glued to anything.
 */
const WHOLE_WORD_BELOW = 12;
/** A word's edges: no letter or digit beside it, unless that is the end of a percent-escape (`%3Dprod`). */
const WORD_START = '(?:(?<![A-Za-z0-9])|(?<=%[0-9A-Fa-f]{2}))';
const WORD_END = '(?![A-Za-z0-9])';
const alnum = (ch: string | undefined): boolean => ch !== undefined && /[A-Za-z0-9]/.test(ch);
/** `secret` in any encoding, with a word's edge asked for only where the secret itself starts or ends with a letter or digit. */
const asWord = (secret: string): string => `${alnum(secret[0]) ? WORD_START : ''}${anyEncoding(secret)}${alnum(secret.at(-1)) ? WORD_END : ''}`;
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * A pattern for `secret` however a URL, a form or a log may have written it: each character as itself or
 * percent-encoded (either case of hex, once or twice: `%2F`, `%2f`, `%252F`), a space also as `+`.
 */
function anyEncoding(secret: string): string {
  let out = '';
  for (const ch of secret) {
    const bytes = [...Buffer.from(ch, 'utf8')].map((b) => `%(?:25)?${[...b.toString(16).toUpperCase().padStart(2, '0')].map((d) => (/[A-F]/.test(d) ? `[${d}${d.toLowerCase()}]` : d)).join('')}`).join('');
    // In a quoted string a log prints (util.inspect, JSON) a quote or a backslash comes escaped.
    const literal = `${/['"\\]/.test(ch) ? '\\\\?' : ''}${escape(ch)}`;
    out += `(?:${literal}|${bytes}${ch === ' ' ? '|\\+' : ''})`;
  }
  return out;
}

/**
 * Replaces every secret in `text`, in any of its encodings, with `[redacted]` (one of `words` that is
 * short, only as a whole word); and the value of every query parameter in `params` wherever `NAME=` is
 * followed by one (a URL printed in a log line or an error), however short it is.
 */
export function secretScrubber(secrets: readonly string[], params: readonly string[] = [], words: readonly string[] = []): (text: string) => string {
  const alternatives = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET))]
    .sort((a, b) => b.length - a.length)
    .map((s) => (s.length < WHOLE_WORD_BELOW && words.includes(s) ? asWord(s) : anyEncoding(s)));
  const values = alternatives.length === 0 ? undefined : new RegExp(alternatives.join('|'), 'g');
  const names = [...new Set(params.filter((p) => p !== ''))].map(anyEncoding);
  const inQuery = names.length === 0 ? undefined : new RegExp(`([?&;](?:${names.join('|')})=)[^&#\\s'"<>]+`, 'g');
  return (text) => {
    let out = text;
    if (values) out = out.replace(values, '[redacted]');
    if (inQuery) out = out.replace(inQuery, '$1[redacted]');
    return out;
  };
}

/** The scrubber for one base URL and key: what an adapter runs its log lines and error messages through. */
export function baseUrlScrubber(baseURL: string | undefined, apiKey?: string): (text: string) => string {
  const parts = baseURL === undefined ? undefined : splitBaseUrl(baseURL);
  const key = apiKey !== undefined ? [apiKey] : [];
  return secretScrubber([...(parts?.secrets ?? []), ...key], parts?.params ?? [], (parts?.words ?? []).filter((w) => !key.includes(w)));
}
