import { LIST_PAGE_MAX_BYTES, plantJson, type StoredPlant } from '@org/plant-contract';

export type PageRequest = { limit: number; after?: bigint; tag?: string };

const utf8 = new TextEncoder();
/** What a plant weighs in a page: the UTF-8 bytes of its JSON text. */
const plantBytes = (plant: StoredPlant): number => utf8.encode(plantJson(plant)).length;

/**
 * One page of `sorted` (ordered by id) as the service cuts it — at `limit` plants, or at the plant
 * that brings its JSON to LIST_PAGE_MAX_BYTES — and the id after which the next page
 * starts when more remain (no empty last page is announced). Kept alone so that a change to how the
 * service cuts pages is one change here.
 */
export const pageOf = (
  sorted: readonly StoredPlant[],
  { limit, after, tag }: PageRequest,
): { items: StoredPlant[]; nextAfter?: bigint } => {
  const items: StoredPlant[] = [];
  let bytes = 0;
  for (const plant of sorted) {
    if (after !== undefined && plant.id <= after) continue;
    if (tag !== undefined && plant.tag !== tag) continue;
    if (items.length === limit || bytes >= LIST_PAGE_MAX_BYTES) {
      const last = items.at(-1);
      return last === undefined ? { items } : { items, nextAfter: last.id };
    }
    items.push(plant);
    bytes += plantBytes(plant);
  }
  return { items };
};

/** The `Link` header of the next page: a relative reference, as the service writes it. */
export const nextPageLink = ({ limit, tag }: PageRequest, after: bigint): string => {
  const query = new URLSearchParams({ limit: String(limit), after: String(after) });
  if (tag !== undefined) query.set('tag', tag);
  return `<?${query}>; rel="next"`;
};
