// The reader's name on the wire. The version is package.json's, written into version.generated.ts at
// build time (the binaries run from a bundle, with no package.json beside them).
import { VERSION } from './version.generated.js';

export { VERSION };

/** Honest about who is reading: robots.txt groups and server logs can tell this reader from a browser. */
export const USER_AGENT = `quickloop/${VERSION} (+documentation agent-readiness testing)`;

/** The product token robots.txt groups are matched against. */
export const ROBOTS_TOKEN = 'quickloop';
