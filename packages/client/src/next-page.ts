/**
 * The query of the `rel="next"` target in a Link header (RFC 8288), or undefined on the last page.
 * The target may be relative (the API sends `<?limit=…&after=…>`), so only its query is used.
 */
export const nextPageQuery = (link: string | null): Record<string, string> | undefined => {
  if (!link) return undefined;
  for (const [, target = '', parameters = ''] of link.matchAll(/<([^>]*)>([^,]*)/g)) {
    if (!/;\s*rel\s*=\s*"?([^";]*\s)?next(\s[^";]*)?"?\s*(;|$)/i.test(parameters)) continue;
    return Object.fromEntries(new URL(target, 'http://link.invalid/').searchParams);
  }
  return undefined;
};
