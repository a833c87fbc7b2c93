// SPDX-License-Identifier: Apache-2.0
// Minimal stand-in for the Arduino Stream class, plus SerialPort: a Stream over a Linux serial
// device (a tty or a pty) opened raw, 8N1, no flow control, at a given speed.
#pragma once

#include "Print.h"

class Stream : public Print {
public:
  virtual int available() = 0;
  virtual int read() = 0;
  virtual int peek() = 0;
};

class SerialPort : public Stream {
public:
  SerialPort() {}
  ~SerialPort() { end(); }
  /** Opens `path` raw at `baud` (only the usual speeds), 8N1; false (errno set) on failure. */
  bool begin(const char *path, unsigned long baud);
  void end();
  int available() override;
  int read() override;
  int peek() override;
  size_t write(uint8_t b) override;
  size_t write(const uint8_t *buffer, size_t size) override;
  using Print::write;
  /** Every byte read and written, for a transcript; null for none. */
  void (*tap)(bool fromDevice, uint8_t b) = nullptr;

private:
  int fd = -1;
  uint8_t buf[4096];
  size_t head = 0, tail = 0;
  void fill(int waitMs);
};
