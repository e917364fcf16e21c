// The reader's name on the wire. Embedded rather than read from package.json: the binaries run from a bundle.
export const VERSION = '0.1.0';

/** Honest about who is reading: robots.txt groups and server logs can tell this reader from a browser. */
export const USER_AGENT = `quickloop/${VERSION} (+documentation agent-readiness testing)`;

/** The product token robots.txt groups are matched against. */
export const ROBOTS_TOKEN = 'quickloop';
