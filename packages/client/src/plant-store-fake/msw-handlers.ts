import { type HttpHandler, HttpResponse, http } from 'msw';
import { isDroppedConnection } from './faults.ts';
import type { PlantStoreFake } from './plant-store-fake.ts';

/**
 * MSW request handlers (msw 3) that answer every request under `baseUrl` from `fake`, for code
 * that calls the API through its own fetch, axios or a generated client. A fault's lost answer or
 * dropped connection becomes MSW's network error.
 *
 * ```ts
 * const server = setupServer(...plantStoreHandlers(fake, { baseUrl: 'https://plants.example.com' }));
 * ```
 */
export const plantStoreHandlers = (fake: PlantStoreFake, { baseUrl }: { baseUrl: string }): HttpHandler[] => {
  const base = new URL(baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  return [
    http.all(`${base.origin}${basePath}/*`, async ({ request }) => {
      try {
        return await fake.handle(request, { basePath });
      } catch (error) {
        if (isDroppedConnection(error)) return HttpResponse.error();
        throw error;
      }
    }),
  ];
};
