// Events of the docs reader (@quickloop/docs): pages read for an agent or a check, refusals, changes, affordances.
import { Type } from '@sinclair/typebox';
import { defineEvent } from '../define.js';

const Hop = Type.Object(
  {
    url: Type.String({ description: 'The URL that redirected.' }),
    status: Type.Integer({ description: 'Its HTTP status (3xx), or 200 for a meta refresh.' }),
    to: Type.String({ description: 'Where it pointed, absolute; admitted (allow list, robots.txt) before it was requested.' }),
    kind: Type.Union([Type.Literal('http'), Type.Literal('meta')], { description: 'http: a 3xx Location; meta: <meta http-equiv="refresh">.' }),
  },
  { description: 'One redirect followed.' },
);

export const DocsRead = defineEvent({
  type: 'docs.read',
  emittedBy: ['qs-agent'],
  doc: 'A docs page was read for the agent (through read_docs, or the replay route). The text is not in the event, its hash is.',
  payload: Type.Object({
    url: Type.String({ description: 'The URL as requested (credentials never appear: a URL carrying them is refused).' }),
    resolved_to: Type.Optional(Type.String({ description: 'Where HTTP redirects ended, when not the URL itself.' })),
    status: Type.Integer({ description: 'HTTP status, or 200 for a page served from a --docs-map folder.' }),
    from: Type.Union([Type.Literal('fetch'), Type.Literal('map'), Type.Literal('cache')], {
      description: 'fetch: over the network; map: a --docs-map folder; cache: a docs cache.',
    }),
    chars: Type.Integer({ minimum: 0, description: 'Characters given to the agent (this part, with its footer).' }),
    original_chars: Type.Integer({ minimum: 0, description: 'Characters of the whole page text.' }),
    truncated: Type.Boolean({ description: 'True when the agent was given only a part of the page (pages > 1); nothing is ever cut silently.' }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'sha256 of the whole page text (UTF-8), before paging.' }),
    page: Type.Optional(Type.Integer({ minimum: 1, description: 'The part given (1-based).' })),
    pages: Type.Optional(Type.Integer({ minimum: 1, description: 'How many parts the page has.' })),
    hops: Type.Optional(Type.Array(Hop, { description: 'Redirects followed, in order (absent when none).' })),
    robots_ignored: Type.Optional(Type.Boolean({ description: 'True under --ignore-robots: robots.txt was not consulted.' })),
  }),
});

export const DocsError = defineEvent({
  type: 'docs.error',
  emittedBy: ['qs-agent'],
  doc: 'A docs page could not be read: an HTTP error status, a network failure, a file missing from a --docs-map folder, a host off the docs allow list, robots.txt, a withheld affordance or a cache miss under --offline.',
  payload: Type.Object({
    url: Type.String({ description: 'The URL as requested, credentials removed.' }),
    error: Type.String({ minLength: 1, description: 'One line: what the agent was told.' }),
    status: Type.Optional(Type.Integer({ description: 'HTTP status, when there was an answer.' })),
    from: Type.Union([Type.Literal('fetch'), Type.Literal('map'), Type.Literal('cache'), Type.Literal('policy')]),
    reason: Type.Optional(
      Type.Union(
        [
          Type.Literal('invalid_url'),
          Type.Literal('allow_list'),
          Type.Literal('credentials'),
          Type.Literal('robots'),
          Type.Literal('affordance_withheld'),
          Type.Literal('offline_miss'),
          Type.Literal('redirect_loop'),
          Type.Literal('too_many_redirects'),
          Type.Literal('bad_redirect'),
          Type.Literal('http_status'),
          Type.Literal('network'),
          Type.Literal('too_large'),
          Type.Literal('not_text'),
          Type.Literal('not_found'),
          Type.Literal('no_such_page'),
          Type.Literal('convert'),
        ],
        { description: 'Why, as a stable code: robots (robots.txt disallows it), allow_list (the URL or a redirect hop is off docs.allow), bad_redirect (javascript:, not a URL), http_status (a non-2xx answer), not_text (a PDF, an image or other bytes that are no page)…' },
      ),
    ),
    hops: Type.Optional(Type.Array(Hop, { description: 'Redirects followed before the failure.' })),
  }),
});

export const DocsChanged = defineEvent({
  type: 'docs.changed',
  emittedBy: ['qs-agent'],
  doc: 'Under --refresh, a page re-fetched into the docs cache has text different from the cached copy (followed by its docs.read).',
  payload: Type.Object({
    url: Type.String(),
    previous_sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Hash of the cached text.' }),
    sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Hash of the text just fetched.' }),
    previous_fetched_at: Type.Optional(Type.String({ description: 'When the cached copy was fetched (ISO 8601).' })),
  }),
});

export const DocsAffordances = defineEvent({
  type: 'docs.affordances',
  emittedBy: ['qs-agent'],
  doc: 'The machine-readable files the docs site offers agents, probed once per task under --probe-affordances, and whether this run withholds them.',
  payload: Type.Object({
    entrypoint: Type.String({ description: 'The first page of the route.' }),
    affordances: Type.Union([Type.Literal('all'), Type.Literal('none')], { description: 'none: llms.txt, llms-full.txt and .md variants are withheld from the agent (except pages on the route).' }),
    probes: Type.Array(
      Type.Object({
        kind: Type.Union([Type.Literal('llms.txt'), Type.Literal('llms-full.txt'), Type.Literal('md')]),
        url: Type.String({ description: 'origin/llms.txt, origin/llms-full.txt, or the entrypoint with .md appended (index.html.md for a folder or the root).' }),
        present: Type.Boolean({ description: 'A 2xx answer with a non-empty body that is not HTML.' }),
        status: Type.Optional(Type.Integer()),
        bytes: Type.Optional(Type.Integer({ minimum: 0 })),
        note: Type.Optional(Type.String({ description: 'Why it is not present, in one line.' })),
      }),
    ),
  }),
});
