// SPDX-License-Identifier: Apache-2.0
// fieldbridge peer check: drives an Iridium SBD modem (here: fieldbridge's simulator on a pty)
// with an Arduino host library written by other people (mikalhart/IridiumSBD, or SparkFun's
// fork of it), through its public API only, the way an Arduino sketch does. Prints one line
// per API call (its result code) and one per check; exits 1 if a check failed, 2 on a usage or
// setup error. See README.md next to this file.
//
//   iridium-peer --port /tmp/iridium0 [--inbox DIR] [--scenario main|sky|nosignal]
//                [--transcript FILE]
//
// Scenarios (each expects a fresh simulator, see build.sh):
//   main      begin, firmware version, IMEI (if the library has it), signal, system time,
//             binary sends (5, 340, 341 bytes), the -MSSTM workaround, and with --inbox: two MT
//             messages queued at the simulator, SBDRING, sendReceiveSBDBinary (SBDRB), the
//             library's receive-only call, a text send.
//   sky       the simulator runs with --sky 32,0,12: one retried session, one fatal.
//   nosignal  the simulator runs with --bars 0.

#include <Arduino.h>
#include <IridiumSBD.h>

#include <errno.h>
#include <stdarg.h>
#include <string>
#include <sys/stat.h>
#include <time.h>
#include <vector>

static SerialPort port;
static FILE *transcript = nullptr;
static int failures = 0;

// ---- reporting ----

static const char *codeName(int code) {
  static const char *names[] = {"ISBD_SUCCESS", "ISBD_ALREADY_AWAKE", "ISBD_SERIAL_FAILURE", "ISBD_PROTOCOL_ERROR",
                                "ISBD_CANCELLED", "ISBD_NO_MODEM_DETECTED", "ISBD_SBDIX_FATAL_ERROR",
                                "ISBD_SENDRECEIVE_TIMEOUT", "ISBD_RX_OVERFLOW", "ISBD_REENTRANT", "ISBD_IS_ASLEEP",
                                "ISBD_NO_SLEEP_PIN", "ISBD_NO_NETWORK", "ISBD_MSG_TOO_LONG"};
  return code >= 0 && code < (int)(sizeof names / sizeof names[0]) ? names[code] : "?";
}

static void check(bool ok, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("CHECK %s ", ok ? "ok  " : "FAIL");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
  if (!ok) failures++;
}

static void note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("      ");
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  fflush(stdout);
}

/** One API call's result, with how long it took. */
static void call(const char *what, int code, unsigned long startMs) {
  printf("CALL  %-44s -> %2d %-26s (%.1f s)\n", what, code, codeName(code), (millis() - startMs) / 1000.0);
  fflush(stdout);
}

static std::string hex(const uint8_t *p, size_t n) {
  std::string s;
  char b[4];
  for (size_t i = 0; i < n; i++) {
    snprintf(b, sizeof b, "%02x", p[i]);
    s += b;
  }
  return s;
}

// ---- the wire, as seen by the host ----

struct WireLog {
  std::string fromModem;  // every byte the modem sent
  std::string toModem;    // every byte the host sent
  int lastDirection = -1; // for the transcript
} wire;

static void transcriptByte(bool fromDevice, uint8_t b) {
  if (!transcript) return;
  if ((int)fromDevice != wire.lastDirection) {
    fprintf(transcript, "%s%s ", wire.lastDirection == -1 ? "" : "\n", fromDevice ? "M<" : "H>");
    wire.lastDirection = fromDevice;
  }
  if (b == '\r') fputs("\\r", transcript);
  else if (b == '\n') fputs("\\n", transcript);
  else if (b == '\\') fputs("\\\\", transcript);
  else if (b >= 0x20 && b < 0x7f) fputc(b, transcript);
  else fprintf(transcript, "\\x%02x", b);
}

static void tap(bool fromDevice, uint8_t b) {
  (fromDevice ? wire.fromModem : wire.toModem) += (char)b;
  transcriptByte(fromDevice, b);
}

/** How often `needle` occurs in `hay` from `from` on. */
static int count(const std::string &hay, const std::string &needle, size_t from = 0) {
  int n = 0;
  for (size_t at = hay.find(needle, from); at != std::string::npos; at = hay.find(needle, at + needle.size())) n++;
  return n;
}

/** The "+SBDIX: ..." lines the modem sent after `from` (joined by " / ", without CR LF), up to
 *  an AT+SBDRB echo: what follows that is an MT payload, which may hold such text itself. */
static std::string sessionLines(size_t from) {
  size_t stop = wire.fromModem.find("AT+SBDRB\r", from);
  std::string lines;
  for (size_t at = wire.fromModem.find("+SBDIX:", from); at != std::string::npos && at < stop; at = wire.fromModem.find("+SBDIX:", at + 1)) {
    size_t end = wire.fromModem.find('\r', at);
    lines += (lines.empty() ? "" : " / ") + wire.fromModem.substr(at, end == std::string::npos ? std::string::npos : end - at);
  }
  return lines;
}

// ---- the library's callbacks (its weak defaults replaced) ----

// The console stream the library reports: ">> command", "<< answer", and "[Binary size:N]"
// and "[csum:N]" around an SBDRB read. The last two are picked out here.
struct Console {
  std::string tail;
  long binarySize = -1;
  long csum = -1;
} console;

static void pickNumber(const char *tag, long &into) {
  size_t at = console.tail.rfind(tag);
  if (at == std::string::npos) return;
  size_t end = console.tail.find(']', at);
  if (end == std::string::npos) return;
  into = strtol(console.tail.c_str() + at + strlen(tag), nullptr, 10);
  console.tail.erase(0, end + 1);
}

void ISBDConsoleCallback(IridiumSBD *, char c) {
  console.tail += c;
  if (c == ']') {
    pickNumber("[Binary size:", console.binarySize);
    pickNumber("[csum:", console.csum);
  }
  if (console.tail.size() > 256) console.tail.erase(0, console.tail.size() - 64);
}

static std::string diagLine;
void ISBDDiagsCallback(IridiumSBD *, char c) {
  if (c == '\r') return;
  if (c != '\n') {
    diagLine += c;
    return;
  }
  if (transcript) {
    fprintf(transcript, "%s# %s\n", wire.lastDirection == -1 ? "" : "\n", diagLine.c_str());
    wire.lastDirection = -1;
  }
  diagLine.clear();
}

// ---- MT messages through the simulator's --inbox folder ----

static bool dropMt(const char *dir, const char *name, const std::vector<uint8_t> &bytes) {
  std::string tmp = std::string(dir) + "/." + name + ".part";
  std::string final = std::string(dir) + "/" + name;
  FILE *f = fopen(tmp.c_str(), "wb");
  if (!f) return false;
  bool ok = fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = fclose(f) == 0 && ok;
  return ok && rename(tmp.c_str(), final.c_str()) == 0;
}

static uint16_t sum16(const uint8_t *p, size_t n) {
  uint16_t s = 0;
  for (size_t i = 0; i < n; i++) s = (uint16_t)(s + p[i]);
  return s;
}

// ---- scenarios ----

static const char *LIBRARY =
#ifdef ISBD_CLEAR_MO
    "SparkFun IridiumSBD (IridiumSBDi2c) API";
#else
    "mikalhart IridiumSBD API";
#endif

static int beginModem(IridiumSBD &modem) {
  unsigned long t = millis();
  int r = modem.begin();
  call("begin()", r, t);
  check(r == ISBD_SUCCESS, "begin(): AT, ATE1, AT&D0, AT&K0, AT+SBDMTA, AT+CGMR all answered as the library expects");
  return r;
}

static void scenarioMain(IridiumSBD &modem, const char *inbox) {
  modem.enableRingAlerts(true); // begin() then sends AT+SBDMTA=1
  modem.setPowerProfile(IridiumSBD::DEFAULT_POWER_PROFILE);
  modem.adjustATTimeout(10);
  if (beginModem(modem) != ISBD_SUCCESS) return;

  unsigned long t = millis();
  char version[16];
  int r = modem.getFirmwareVersion(version, sizeof version);
  call("getFirmwareVersion(buf, 16)", r, t);
  check(r == ISBD_SUCCESS && strncmp(version, "TA", 2) == 0, "firmware version \"%s\" (the library reads the 'Call Processor Version: ' line)", version);

#ifdef ISBD_CLEAR_MO
  t = millis();
  char imei[32];
  r = modem.getIMEI(imei, sizeof imei);
  call("getIMEI(buf, 32)", r, t);
  bool digits = strlen(imei) == 15;
  for (size_t i = 0; i < strlen(imei); i++) digits = digits && isdigit((unsigned char)imei[i]);
  check(r == ISBD_SUCCESS && digits, "IMEI \"%s\" is 15 digits", imei);
#else
  note("(this library has no getIMEI(); AT+CGSN is not exercised)");
#endif

  t = millis();
  int quality = -1;
  r = modem.getSignalQuality(quality);
  call("getSignalQuality(q)", r, t);
  check(r == ISBD_SUCCESS && quality >= 0 && quality <= 5, "signal quality %d (0-5)", quality);

  t = millis();
  struct tm tm;
  memset(&tm, 0, sizeof tm);
  r = modem.getSystemTime(tm);
  call("getSystemTime(tm)", r, t);
  time_t modemTime = timegm(&tm);
  long off = (long)(modemTime - time(nullptr));
  char when[32];
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  size_t msstm = wire.fromModem.rfind("-MSSTM: ");
  std::string line = msstm == std::string::npos ? "" : wire.fromModem.substr(msstm, wire.fromModem.find('\r', msstm) - msstm);
  // Iridium re-epochs now and then. A library that predates ERA3 (epoch 2025-02-14T18:14:17Z)
  // decodes an ERA3 count with ERA2's epoch (2014-05-11T14:23:55Z): exactly this much early.
  const long era3MinusEra2 = 339738622;
  if (r == ISBD_SUCCESS && labs(off + era3MinusEra2) <= 60) {
    check(true, "system time from \"%s\" is an ERA3 count: right once decoded with ERA3's epoch", line.c_str());
    note("this library decodes it with ERA2's epoch only: %s (%ld s early); a library issue, not the modem's", when, -off);
  } else {
    check(r == ISBD_SUCCESS && labs(off) <= 60, "system time %s from \"%s\" is within 60 s of the host clock (off by %ld s)", when, line.c_str(), off);
  }

  // "hello": the ISU reference's own example (checksum 02 14).
  t = millis();
  size_t mark = wire.fromModem.size();
  r = modem.sendSBDBinary(reinterpret_cast<const uint8_t *>("hello"), 5);
  call("sendSBDBinary(\"hello\", 5)", r, t);
  check(r == ISBD_SUCCESS, "5-byte MO: READY, status 0, +SBDIX accepted; modem said %s", sessionLines(mark).c_str());
  check(wire.toModem.find(std::string("hello\x02\x14", 7)) != std::string::npos, "the library sent hello + checksum 02 14");

  // 340 bytes, the largest MO, with CR, LF, "OK", "READY" and NULs inside.
  std::vector<uint8_t> big(340);
  for (size_t i = 0; i < big.size(); i++) big[i] = (uint8_t)(i * 37 + 11);
  const char *traps[] = {"\r\nOK\r\n", "READY\r\n", "AT+SBDIX\r", "\r\n0\r\n\r\nOK\r\n"};
  size_t at = 0;
  big[at++] = 0x00;
  for (const char *s : traps) {
    memcpy(&big[at], s, strlen(s));
    at += strlen(s) + 20;
  }
  big[339] = '\r';
  t = millis();
  mark = wire.fromModem.size();
  r = modem.sendSBDBinary(big.data(), big.size());
  call("sendSBDBinary(340 bytes with CR/LF/OK)", r, t);
  check(r == ISBD_SUCCESS, "340-byte MO with CR/LF/OK inside: status 0, +SBDIX accepted; modem said %s", sessionLines(mark).c_str());
  printf("EXPECT-MO 5 \"hello\"\nEXPECT-MO 340 hex %s...\n", hex(big.data(), 40).c_str());

  std::vector<uint8_t> tooBig(341, 'x');
  t = millis();
  size_t sent = wire.toModem.size();
  r = modem.sendSBDBinary(tooBig.data(), tooBig.size());
  call("sendSBDBinary(341 bytes)", r, t);
  check(r == ISBD_MSG_TOO_LONG && wire.toModem.size() == sent, "341 bytes refused by the library itself, nothing sent");

  // The -MSSTM workaround (used below firmware TA13001): AT-MSSTM before every AT+SBDIX.
  modem.useMSSTMWorkaround(true);
  t = millis();
  mark = wire.fromModem.size();
  size_t sentMark = wire.toModem.size();
  r = modem.sendSBDBinary(reinterpret_cast<const uint8_t *>("msstm"), 5);
  call("sendSBDBinary(\"msstm\") with MSSTM workaround", r, t);
  check(r == ISBD_SUCCESS && count(wire.toModem, "AT-MSSTM\r", sentMark) == 1, "-MSSTM answer accepted as valid system time before the session; modem said %s", sessionLines(mark).c_str());
  modem.useMSSTMWorkaround(false);
  printf("EXPECT-MO 5 \"msstm\"\n");

#ifdef ISBD_CLEAR_MO
  t = millis();
  r = modem.clearBuffers(ISBD_CLEAR_MO);
  call("clearBuffers(ISBD_CLEAR_MO)", r, t);
  check(r == ISBD_SUCCESS, "AT+SBDD0 answered");
#endif

  if (!inbox) {
    note("(no --inbox: MT messages, SBDRB and ring alerts not exercised)");
  } else {
    // Two MT messages: 270 bytes (the largest) full of things a parser could trip on, and a short one.
    std::vector<uint8_t> mt1(270);
    for (size_t i = 0; i < mt1.size(); i++) mt1[i] = (uint8_t)(255 - i * 13);
    const char *mtTraps[] = {"\r\nOK\r\n", "SBDRING\r\n", "\r\n+SBDIX: 0, 0, 0, 0, 0, 0\r\n", "AT+SBDRB\r"};
    at = 1;
    mt1[0] = 0x00;
    for (const char *s : mtTraps) {
      memcpy(&mt1[at], s, strlen(s));
      at += strlen(s) + 30;
    }
    mt1[268] = '\r';
    mt1[269] = '\n';
    const char *second = "second MT message";
    std::vector<uint8_t> mt2(second, second + strlen(second));
    bool dropped = dropMt(inbox, "a-mt1.bin", mt1) && dropMt(inbox, "b-mt2.bin", mt2);
    check(dropped, "queued two MT messages (270 and %zu bytes) in %s", mt2.size(), inbox);

    // SBDRING while idle: the library's idle check is hasRingAsserted().
    bool ringIdle = false;
    for (unsigned long s = millis(); millis() - s < 3000 && !ringIdle;) {
      ringIdle = modem.hasRingAsserted();
      delay(20);
    }
    int rings = count(wire.fromModem, "SBDRING\r\n");
    note("hasRingAsserted() while idle, polled 3 s: %s (the modem had sent SBDRING %d time(s) so far)", ringIdle ? "true" : "false", rings);

    uint8_t rx[300];
    size_t rxSize = sizeof rx;
    console.binarySize = console.csum = -1;
    t = millis();
    mark = wire.fromModem.size();
    r = modem.sendReceiveSBDBinary(reinterpret_cast<const uint8_t *>("ping"), 4, rx, rxSize);
    call("sendReceiveSBDBinary(\"ping\", rx[300])", r, t);
    printf("EXPECT-MO 4 \"ping\"\n");
    check(r == ISBD_SUCCESS, "session + AT+SBDRB accepted; modem said %s (before the SBDRB data)", sessionLines(mark).c_str());
    check(rxSize == mt1.size() && memcmp(rx, mt1.data(), mt1.size()) == 0, "received %zu bytes, identical to the 270 queued (CR/LF/OK/SBDRING inside)", rxSize);
    check(console.binarySize == 270, "SBDRB length field %ld", console.binarySize);
    check(console.csum == sum16(mt1.data(), mt1.size()), "SBDRB checksum %ld = low 16 bits of the sum (%u); the library reads it but never checks it", console.csum, sum16(mt1.data(), mt1.size()));
    check(modem.getWaitingMessageCount() == 1, "getWaitingMessageCount() = %d (one more queued)", modem.getWaitingMessageCount());
    bool ringAfter = modem.hasRingAsserted();
    check(ringIdle || ringAfter, "SBDRING recognised by the library's filter (idle: %s, during the next call: %s)", ringIdle ? "yes" : "no", ringAfter ? "yes" : "no");

    // The library's receive-only call (its Ring and SendReceive examples use it). It writes an
    // empty text ("AT+SBDWT="), which does not empty the MO buffer on a 9603N
    // (mikalhart/IridiumSBD issue #10): clear it first where the library can.
#ifdef ISBD_CLEAR_MO
    t = millis();
    r = modem.clearBuffers(ISBD_CLEAR_MO);
    call("clearBuffers(ISBD_CLEAR_MO)", r, t);
    bool moCleared = r == ISBD_SUCCESS;
#else
    bool moCleared = false;
#endif
    rxSize = sizeof rx;
    t = millis();
    mark = wire.fromModem.size();
    sentMark = wire.toModem.size();
    r = modem.sendReceiveSBDText(NULL, rx, rxSize);
    call("sendReceiveSBDText(NULL, rx[300])", r, t);
    size_t wt = wire.toModem.find("AT+SBDWT=\r", sentMark);
    std::string answer = wt == std::string::npos ? "" : wire.fromModem.substr(mark, 40);
    std::string shown;
    for (char c : answer) shown += c == '\r' ? std::string("\\r") : c == '\n' ? std::string("\\n") : std::string(1, c);
    check(r == ISBD_SUCCESS && rxSize == mt2.size() && memcmp(rx, mt2.data(), mt2.size()) == 0,
          "receive-only: \"AT+SBDWT=\" (empty) then a session; modem answered \"%s\"", shown.c_str());
    if (r == ISBD_SUCCESS && !moCleared) printf("EXPECT-MO-AGAIN 4 \"ping\"\n");
    if (r != ISBD_SUCCESS) {
      rxSize = sizeof rx;
      t = millis();
      r = modem.sendReceiveSBDBinary(reinterpret_cast<const uint8_t *>("pong"), 4, rx, rxSize);
      call("sendReceiveSBDBinary(\"pong\", rx[300])", r, t);
      printf("EXPECT-MO 4 \"pong\"\n");
      check(r == ISBD_SUCCESS && rxSize == mt2.size() && memcmp(rx, mt2.data(), mt2.size()) == 0, "second MT message (%zu bytes) read with a binary send instead", rxSize);
    }
    check(modem.getWaitingMessageCount() == 0, "getWaitingMessageCount() = %d", modem.getWaitingMessageCount());
  }

  // Text send: the library uses the READY form, AT+SBDWT then the text and CR.
  char text[] = "text via SBDWT";
  t = millis();
  mark = wire.fromModem.size();
  r = modem.sendSBDText(text);
  call("sendSBDText(\"text via SBDWT\")", r, t);
  check(r == ISBD_SUCCESS, "text MO through \"AT+SBDWT\" + READY; modem answered \"%s\"", [&] {
    std::string s;
    for (char c : wire.fromModem.substr(mark, 30)) s += c == '\r' ? std::string("\\r") : c == '\n' ? std::string("\\n") : std::string(1, c);
    return s;
  }().c_str());
  if (r == ISBD_SUCCESS) printf("EXPECT-MO 14 \"text via SBDWT\"\n");
}

static void scenarioSky(IridiumSBD &modem) {
  // The simulator runs with --sky 32,0,12: the next sessions fail (32), succeed, fail fatally (12).
  modem.setPowerProfile(IridiumSBD::DEFAULT_POWER_PROFILE); // 10 s between retries
  modem.adjustATTimeout(10);
  if (beginModem(modem) != ISBD_SUCCESS) return;

  unsigned long t = millis();
  size_t sentMark = wire.toModem.size();
  size_t mark = wire.fromModem.size();
  int r = modem.sendSBDBinary(reinterpret_cast<const uint8_t *>("retry"), 5);
  call("sendSBDBinary(\"retry\") (sky: 32 then 0)", r, t);
  int sessions = count(wire.toModem, "AT+SBDIX\r", sentMark);
  check(r == ISBD_SUCCESS && sessions == 2, "MO status 32 retried after the library's wait, then sent: %d sessions; modem said %s", sessions, sessionLines(mark).c_str());
  printf("EXPECT-MO 5 \"retry\"\n");

  t = millis();
  sentMark = wire.toModem.size();
  mark = wire.fromModem.size();
  r = modem.sendSBDBinary(reinterpret_cast<const uint8_t *>("fatal"), 5);
  call("sendSBDBinary(\"fatal\") (sky: 12)", r, t);
  check(r == ISBD_SBDIX_FATAL_ERROR && count(wire.toModem, "AT+SBDIX\r", sentMark) == 1, "MO status 12 is fatal to the library, no retry; modem said %s", sessionLines(mark).c_str());
}

static void scenarioNoSignal(IridiumSBD &modem) {
  // The simulator runs with --bars 0.
  modem.setPowerProfile(IridiumSBD::DEFAULT_POWER_PROFILE);
  modem.adjustATTimeout(10);
  if (beginModem(modem) != ISBD_SUCCESS) return;

  unsigned long t = millis();
  int quality = -1;
  int r = modem.getSignalQuality(quality);
  call("getSignalQuality(q)", r, t);
  check(r == ISBD_SUCCESS && quality == 0, "signal quality %d", quality);

  t = millis();
  struct tm tm;
  r = modem.getSystemTime(tm);
  call("getSystemTime(tm)", r, t);
  check(r == ISBD_NO_NETWORK, "\"-MSSTM: no network service\" read as no network");

  // With the -MSSTM workaround the library never starts a session without system time.
  modem.useMSSTMWorkaround(true);
  modem.adjustSendReceiveTimeout(15);
  t = millis();
  size_t sentMark = wire.toModem.size();
  r = modem.sendSBDBinary(reinterpret_cast<const uint8_t *>("nosky"), 5);
  call("sendSBDBinary(\"nosky\") with MSSTM workaround", r, t);
  check(r == ISBD_SENDRECEIVE_TIMEOUT && count(wire.toModem, "AT+SBDIX\r", sentMark) == 0, "no session tried (%d AT-MSSTM), gave up after the send/receive timeout", count(wire.toModem, "AT-MSSTM\r", sentMark));

  // Without it: sessions fail with MO status 32 and are retried until the timeout.
  modem.useMSSTMWorkaround(false);
  t = millis();
  sentMark = wire.toModem.size();
  size_t mark = wire.fromModem.size();
  r = modem.sendSBDBinary(reinterpret_cast<const uint8_t *>("nosky"), 5);
  call("sendSBDBinary(\"nosky\") without workaround", r, t);
  check(r == ISBD_SENDRECEIVE_TIMEOUT && count(wire.toModem, "AT+SBDIX\r", sentMark) >= 2, "%d sessions, each failing; modem said %s", count(wire.toModem, "AT+SBDIX\r", sentMark), sessionLines(mark).c_str());
}

int main(int argc, char **argv) {
  const char *path = nullptr, *inbox = nullptr, *scenario = "main", *transcriptPath = nullptr;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--port" && v) path = argv[++i];
    else if (a == "--inbox" && v) inbox = argv[++i];
    else if (a == "--scenario" && v) scenario = argv[++i];
    else if (a == "--transcript" && v) transcriptPath = argv[++i];
    else {
      fprintf(stderr, "usage: %s --port PTY [--inbox DIR] [--scenario main|sky|nosignal] [--transcript FILE]\n", argv[0]);
      return 2;
    }
  }
  if (!path) {
    fprintf(stderr, "--port is required\n");
    return 2;
  }
  std::string s = scenario;
  if (s != "main" && s != "sky" && s != "nosignal") {
    fprintf(stderr, "unknown scenario %s\n", scenario);
    return 2;
  }
  setenv("TZ", "UTC", 1); // the library turns -MSSTM into a struct tm with mktime/localtime
  tzset();
  if (transcriptPath && !(transcript = fopen(transcriptPath, "w"))) {
    fprintf(stderr, "%s: %s\n", transcriptPath, strerror(errno));
    return 2;
  }
  if (!port.begin(path, 19200)) {
    fprintf(stderr, "%s: %s\n", path, strerror(errno));
    return 2;
  }
  port.tap = tap;
  printf("peer: %s, ISBD_LIBRARY_REVISION %d; port %s at 19200 8N1; scenario %s\n", LIBRARY, ISBD_LIBRARY_REVISION, path, scenario);

  IridiumSBD modem(port); // no sleep pin, no RING pin: a three-wire RockBLOCK
  if (s == "main") scenarioMain(modem, inbox);
  else if (s == "sky") scenarioSky(modem);
  else scenarioNoSignal(modem);

  if (transcript) {
    fputc('\n', transcript);
    fclose(transcript);
  }
  printf("peer: %d check(s) failed\n", failures);
  return failures == 0 ? 0 : 1;
}
