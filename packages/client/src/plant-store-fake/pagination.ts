/** A stored plant: int64 id, name and optional tag. */
export type StoredPlant = { id: bigint; name: string; tag?: string };

export type PageRequest = { limit: number; after?: bigint; tag?: string };

/**
 * One page of `sorted` (ordered by id) as the service cuts it, and the id after which the next page
 * starts when more remain (no empty last page is announced). Kept alone so that a change to how the
 * service cuts pages is one change here.
 */
export const pageOf = (
  sorted: readonly StoredPlant[],
  { limit, after, tag }: PageRequest,
): { items: StoredPlant[]; nextAfter?: bigint } => {
  const items: StoredPlant[] = [];
  for (const plant of sorted) {
    if (after !== undefined && plant.id <= after) continue;
    if (tag !== undefined && plant.tag !== tag) continue;
    if (items.length === limit) {
      const last = items.at(-1);
      return last === undefined ? { items } : { items, nextAfter: last.id };
    }
    items.push(plant);
  }
  return { items };
};

/** The `Link` header of the next page: a relative reference, as the service writes it. */
export const nextPageLink = ({ limit, tag }: PageRequest, after: bigint): string => {
  const query = new URLSearchParams({ limit: String(limit), after: String(after) });
  if (tag !== undefined) query.set('tag', tag);
  return `<?${query}>; rel="next"`;
};
