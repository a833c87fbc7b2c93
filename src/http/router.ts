import type { Method, Route } from './route.ts';

// Pure route matching, no sockets: a path is split into segments and each segment decoded
// on its own, so "%2F" inside an id never splits it. Among the routes whose template fits, a
// static segment beats a parameter at the first position where they differ
// ("/api/interfaces/health" is not "/api/interfaces/{id}"). A trailing slash is ignored.

export type MatchResult =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: Method[] }
  | { kind: 'not_found' }
  | { kind: 'bad_path'; reason: string };

interface CompiledRoute {
  route: Route;
  segments: Array<{ static: string } | { param: string }>;
}

export interface RouteTable {
  routes: CompiledRoute[];
}

export function compileRoutes(routes: Route[]): RouteTable {
  const seen = new Set<string>();
  const compiled = routes.map((route) => {
    const segments = splitPath(route.path).map((s) => {
      const param = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(s);
      return param ? { param: param[1] } : { static: s };
    });
    const shape = `${route.method} /${segments.map((s) => ('param' in s ? '{}' : s.static)).join('/')}`;
    if (seen.has(shape)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    seen.add(shape);
    return { route, segments };
  });
  return { routes: compiled };
}

function splitPath(path: string): string[] {
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === '' ? [] : trimmed.slice(1).split('/');
}

export function matchRoute(table: RouteTable, method: string, pathname: string): MatchResult {
  let segments: string[];
  try {
    segments = splitPath(pathname).map((s) => decodeURIComponent(s));
  } catch {
    return { kind: 'bad_path', reason: 'the path has a malformed percent-encoding' };
  }
  const wanted = method === 'HEAD' ? 'GET' : method;
  let found: { c: CompiledRoute; score: string } | undefined;
  let shapeScore: string | undefined;
  const allow = new Set<Method>();
  for (const c of table.routes) {
    const score = scoreFor(c, segments);
    if (score === undefined) continue;
    // Scores compare as strings: a '1' (static segment) earlier in the path wins.
    if (c.route.method === wanted && (!found || score > found.score)) found = { c, score };
    if (shapeScore === undefined || score > shapeScore) {
      shapeScore = score;
      allow.clear();
    }
    if (score === shapeScore) allow.add(c.route.method);
  }
  if (found) return { kind: 'found', route: found.c.route, params: paramsOf(found.c, segments) };
  if (allow.size > 0) return { kind: 'method_not_allowed', allow: [...allow].sort() };
  return { kind: 'not_found' };
}

/** '1' per static segment and '0' per parameter, or undefined when the template does not fit. */
function scoreFor(c: CompiledRoute, segments: string[]): string | undefined {
  if (c.segments.length !== segments.length) return undefined;
  let score = '';
  for (let i = 0; i < segments.length; i++) {
    const s = c.segments[i];
    if ('static' in s) {
      if (s.static !== segments[i]) return undefined;
      score += '1';
    } else {
      if (segments[i] === '') return undefined;
      score += '0';
    }
  }
  return score;
}

function paramsOf(c: CompiledRoute, segments: string[]): Record<string, string> {
  const params: Record<string, string> = {};
  c.segments.forEach((s, i) => {
    if ('param' in s) params[s.param] = segments[i];
  });
  return params;
}
