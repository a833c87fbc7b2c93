// Credentials in a URL (HUB_MQTT_URL, HUB_DATABASE_URL, the bridge's broker URL) never reach a
// log line or an error message: every place that shows such a URL shows it through here.
//
// The whole user information goes, user name included (a broker may take a token as the user
// name), and it is cut at the LAST "@" of the URL, not the first: a password may contain "@"
// (RFC 3986 wants it percent-encoded, people do not), and a WHATWG parser takes the last one
// too. A password may also hold "/", "?" or "#", after which no parser finds the user
// information at all ("mqtt://u:12/s@host" parses as host "u", port 12 and the path "/s@host"),
// so the cut does not ask a parser. When the path or query holds an "@" of its own, more is
// masked than needed; a log line missing its host is better than one holding a password.

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
export const MASKED_USERINFO = '***';

/** "mqtt://hub:p@ss@broker:1883" -> "mqtt://***@broker:1883"; a URL without "@" is unchanged. */
export function maskUrlCredentials(url: string): string {
  const scheme = SCHEME.exec(url);
  if (!scheme) return url;
  const rest = url.slice(scheme[0].length);
  const at = rest.lastIndexOf('@');
  if (at === -1) return url;
  return `${scheme[0]}${MASKED_USERINFO}@${rest.slice(at + 1)}`;
}

/** Masks every URL with user information inside a longer text (an error message quoting one). */
export function maskUrlsIn(text: string): string {
  // A URL runs to the next white space or quote; within that run the last "@" ends the
  // user information, as in maskUrlCredentials.
  return text.replace(/[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s"'<>`]*/g, (url) => maskUrlCredentials(url));
}
