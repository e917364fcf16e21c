// The shapes discovery works with: a host and where it was found, and the system paths tests can move.

export interface Found {
  /** `host:port` of the configured URL (https 443, http 80, or its explicit port). */
  endpoint: string;
  /** Where the host came from, for people: `npm user config /home/me/.npmrc (registry)`. */
  from: string;
}

/** Absolute locations outside HOME and cwd; tests point them into a temp dir. */
export interface SystemPaths {
  /** Prefix for /etc and /usr lookups (apt sources, pip.conf, system pip). Default `/`. */
  root: string;
  /** The node binary; npm's global prefix and a bundled npm are found from it. */
  execPath: string;
  /** The installed npm package, when known; otherwise searched for. */
  npmRoot?: string;
}
