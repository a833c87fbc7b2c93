/** This process's environment without libfaketime, for a program that stands for another
 *  device (a phone's Reticulum, an operator's browser) rather than the bridge under test. When
 *  the suite runs a year ahead under libfaketime (scripts/test.sh), such a program keeps the
 *  machine's own time, as the real device would; and libfaketime breaks some of them outright:
 *  Python's time.sleep fails with EINVAL, and Chromium slowed to a 30 s page.goto timeout. */
export function realClockEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k, v]) => !(k === 'LD_PRELOAD' && v?.includes('faketime')) && !k.startsWith('FAKETIME')));
}
