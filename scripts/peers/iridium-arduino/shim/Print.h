// SPDX-License-Identifier: Apache-2.0
// Minimal stand-in for the Arduino Print class: write() is the only primitive; print() and
// println() format numbers and strings on top of it, the way sketches expect.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "WString.h"

class Print {
public:
  virtual ~Print() {}
  virtual size_t write(uint8_t b) = 0;
  virtual size_t write(const uint8_t *buffer, size_t size);
  size_t write(const char *s);
  size_t write(const char *buffer, size_t size) { return write(reinterpret_cast<const uint8_t *>(buffer), size); }
  virtual void flush() {}

  size_t print(const __FlashStringHelper *s);
  size_t print(const char *s);
  size_t print(char c);
  size_t print(unsigned char n, int base = 10) { return printUnsigned(n, base); }
  size_t print(int n, int base = 10) { return printSigned(n, base); }
  size_t print(unsigned int n, int base = 10) { return printUnsigned(n, base); }
  size_t print(long n, int base = 10) { return printSigned(n, base); }
  size_t print(unsigned long n, int base = 10) { return printUnsigned(n, base); }
  size_t print(double d, int digits = 2);

  size_t println();
  template <typename T> size_t println(T v) { size_t n = print(v); return n + println(); }
  template <typename T> size_t println(T v, int base) { size_t n = print(v, base); return n + println(); }

private:
  size_t printUnsigned(unsigned long n, int base);
  size_t printSigned(long n, int base);
};
