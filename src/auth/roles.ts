// Who may do what (docs/api.md, "Keys and roles"): three roles, each a superset of the next.
// Stores and services use these as well as the HTTP layer, so they live outside http/.

export type Role = 'owner' | 'admin' | 'viewer';

/** Who may call a route (docs/design.md section 5). */
export const ANY_KEY: readonly Role[] = ['owner', 'admin', 'viewer'];
export const ADMIN: readonly Role[] = ['owner', 'admin'];
export const OWNER: readonly Role[] = ['owner'];

export interface Principal {
  keyId: string;
  role: Role;
  tenantId?: string;
}
