// The version `qs --version` and every subcommand report.
export const VERSION = '0.1.0';
