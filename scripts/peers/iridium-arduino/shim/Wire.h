// SPDX-License-Identifier: Apache-2.0
// Stand-in for the Arduino Wire (I2C) header, so a library with an optional I2C transport
// compiles. There is no I2C bus here: transmissions fail (endTransmission answers 2, "address
// NACK") and reads return nothing. The harness only uses the serial transport.
#pragma once

#include "Stream.h"

class TwoWire : public Stream {
public:
  void begin() {}
  void beginTransmission(uint8_t) {}
  void beginTransmission(int) {}
  uint8_t endTransmission(bool = true) { return 2; }
  uint8_t requestFrom(uint8_t, uint8_t, uint8_t = 1) { return 0; }
  uint8_t requestFrom(int, int, int = 1) { return 0; }
  int available() override { return 0; }
  int read() override { return -1; }
  int peek() override { return -1; }
  size_t write(uint8_t) override { return 1; }
  using Print::write;
};

extern TwoWire Wire;
