// Host matching shared by the docs allow list: exact or a subdomain, case-insensitive, trailing dot ignored.
export function hostMatches(host: string, pattern: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '').replace(/^\[|\]$/g, '');
  const p = pattern.toLowerCase().replace(/\.$/, '');
  return h === p || h.endsWith(`.${p}`);
}
