/** `pathname` without one trailing slash (`/` itself stays): routes match either way, as on Express. */
export const withoutTrailingSlash = (pathname: string): string =>
  pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
