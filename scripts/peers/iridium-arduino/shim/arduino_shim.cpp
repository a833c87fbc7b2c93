// SPDX-License-Identifier: Apache-2.0
// The Linux side of the Arduino stand-in (Arduino.h, Print.h, Stream.h, Wire.h): time, pins,
// Print formatting and SerialPort over termios. Written for fieldbridge's peer harness.
#include "Arduino.h"
#include "Wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

TwoWire Wire;

static uint64_t monotonicMicros() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static const uint64_t startMicros = monotonicMicros();

unsigned long millis() { return (unsigned long)((monotonicMicros() - startMicros) / 1000u); }
unsigned long micros() { return (unsigned long)(monotonicMicros() - startMicros); }

void delay(unsigned long ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

void yield() {}

static int pinValues[64];
void pinMode(int, int) {}
void digitalWrite(int pin, int value) {
  if (pin >= 0 && pin < 64) pinValues[pin] = value;
}
int digitalRead(int) { return HIGH; }

// ---- Print ----

size_t Print::write(const uint8_t *buffer, size_t size) {
  size_t n = 0;
  while (size--) n += write(*buffer++);
  return n;
}

size_t Print::write(const char *s) { return s ? write(reinterpret_cast<const uint8_t *>(s), strlen(s)) : 0; }
size_t Print::print(const __FlashStringHelper *s) { return write(reinterpret_cast<const char *>(s)); }
size_t Print::print(const char *s) { return write(s); }
size_t Print::print(char c) { return write((uint8_t)c); }
size_t Print::println() { return write("\r\n"); }

size_t Print::printUnsigned(unsigned long n, int base) {
  if (base < 2 || base > 36) base = 10;
  char digits[8 * sizeof(unsigned long) + 1];
  int i = 0;
  do {
    int d = (int)(n % (unsigned long)base);
    digits[i++] = (char)(d < 10 ? '0' + d : 'A' + d - 10);
    n /= (unsigned long)base;
  } while (n > 0);
  size_t written = 0;
  while (i > 0) written += write((uint8_t)digits[--i]);
  return written;
}

size_t Print::printSigned(long n, int base) {
  if (base == 10 && n < 0) return write((uint8_t)'-') + printUnsigned((unsigned long)(-(n + 1)) + 1u, 10);
  return printUnsigned((unsigned long)n, base);
}

size_t Print::print(double d, int digits) {
  char s[64];
  snprintf(s, sizeof s, "%.*f", digits, d);
  return write(s);
}

// ---- SerialPort ----

static speed_t speedOf(unsigned long baud) {
  switch (baud) {
    case 9600: return B9600;
    case 19200: return B19200;
    case 38400: return B38400;
    case 57600: return B57600;
    case 115200: return B115200;
    default: return 0;
  }
}

bool SerialPort::begin(const char *path, unsigned long baud) {
  speed_t speed = speedOf(baud);
  if (speed == 0) {
    errno = EINVAL;
    return false;
  }
  fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct termios t;
  if (tcgetattr(fd, &t) != 0) {
    end();
    return false;
  }
  cfmakeraw(&t);                       // no echo, no line editing, no CR/LF translation
  t.c_cflag &= ~(CSIZE | PARENB | CSTOPB | CRTSCTS);
  t.c_cflag |= CS8 | CLOCAL | CREAD;   // 8N1, ignore modem lines, no hardware flow control
  t.c_iflag &= ~(IXON | IXOFF | IXANY); // no software flow control either
  t.c_cc[VMIN] = 0;
  t.c_cc[VTIME] = 0;
  cfsetispeed(&t, speed);
  cfsetospeed(&t, speed);
  if (tcsetattr(fd, TCSANOW, &t) != 0) {
    end();
    return false;
  }
  tcflush(fd, TCIOFLUSH);
  head = tail = 0;
  return true;
}

void SerialPort::end() {
  if (fd >= 0) close(fd);
  fd = -1;
}

void SerialPort::fill(int waitMs) {
  if (fd < 0) return;
  if (head == tail) head = tail = 0;
  if (tail == sizeof buf) {
    if (head == 0) return; // full
    memmove(buf, buf + head, tail - head);
    tail -= head;
    head = 0;
  }
  if (waitMs > 0) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, waitMs) <= 0) return;
  }
  ssize_t n = ::read(fd, buf + tail, sizeof buf - tail);
  if (n <= 0) return;
  if (tap)
    for (ssize_t i = 0; i < n; i++) tap(true, buf[tail + i]);
  tail += (size_t)n;
}

// The libraries spin on available() while they wait; waiting up to 1 ms here when nothing
// has come keeps a busy loop from taking a whole core, and costs nothing at 19200 baud
// (about 2 bytes per ms).
int SerialPort::available() {
  if (head == tail) fill(1);
  else fill(0);
  return (int)(tail - head);
}

int SerialPort::read() {
  if (head == tail) fill(0);
  if (head == tail) return -1;
  return buf[head++];
}

int SerialPort::peek() {
  if (head == tail) fill(0);
  if (head == tail) return -1;
  return buf[head];
}

size_t SerialPort::write(uint8_t b) { return write(&b, 1); }

size_t SerialPort::write(const uint8_t *buffer, size_t size) {
  if (fd < 0) return 0;
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, buffer + done, size - done);
    if (n > 0) {
      if (tap)
        for (ssize_t i = 0; i < n; i++) tap(false, buffer[done + i]);
      done += (size_t)n;
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      struct pollfd p = {fd, POLLOUT, 0};
      poll(&p, 1, 100);
    } else {
      break;
    }
  }
  return done;
}
