import { chromium, type Browser } from 'playwright-core';
import { realClockEnv } from './real-clock.ts';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Debian's headless Chromium through playwright-core, on the machine's real clock (see
 *  realClockEnv): none of the pages tested reads the browser's date. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ARGS, env: realClockEnv() as Record<string, string> });
}
