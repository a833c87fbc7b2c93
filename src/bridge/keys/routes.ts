import { keyRoutes as sharedKeyRoutes } from '../../http/key-routes.ts';
import type { Route } from '../../http/route.ts';
import type { KeyService } from './service.ts';

export function keyRoutes(keys: KeyService): Route[] {
  return sharedKeyRoutes(
    {
      create: (_principal, label, role) => keys.create(label, role),
      list: () => keys.list(),
      delete: (_principal, id) => keys.delete(id),
    },
    '',
  );
}
