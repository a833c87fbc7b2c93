import { setFlagsFromString } from 'node:v8';

// Operators' regular expressions (rule text.regex, transform drop_if) run on every message,
// and any radio can send the text. A backtracking pattern such as (a|a)+$ takes exponential
// time on a crafted text and would freeze the bridge, and no static check catches every such
// pattern. So they run on V8's linear-time engine (the `l` flag): time grows with the text,
// never explodes. That engine has no backreferences, no lookahead, no (?i:...)
// groups and no `i` or `u` flag; patterns that need them are refused at validation.
setFlagsFromString('--enable-experimental-regexp-engine');

export const SAFE_REGEX_MAX_LENGTH = 200;

/** Why a pattern is refused, or null when it may be used. (The schemas bound the length
 *  with SAFE_REGEX_MAX_LENGTH themselves, so the limit shows in the OpenAPI document.) */
export function checkSafeRegex(pattern: string): string | null {
  try {
    new RegExp(pattern, 'l');
  } catch (error) {
    const message = (error as Error).message;
    if (/linear time/.test(message)) {
      return 'uses a feature that cannot run in linear time (backreferences, lookahead, (?i:...) groups); for case-insensitive matching write [Ss][Oo][Ss] or use text.contains';
    }
    return `is not a valid regular expression: ${message.replace(/^Invalid regular expression: /, '')}`;
  }
  return null;
}

const compiled = new Map<string, RegExp>();

/** The pattern on the linear-time engine, cached (patterns were checked at validation). */
export function compileSafeRegex(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    if (compiled.size >= 1000) compiled.clear();
    re = new RegExp(pattern, 'l');
    compiled.set(pattern, re);
  }
  return re;
}
