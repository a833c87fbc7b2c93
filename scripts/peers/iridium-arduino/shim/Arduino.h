// SPDX-License-Identifier: Apache-2.0
// Part of fieldbridge's independent-peer check of the Iridium SBD simulator
// (scripts/peers/iridium-arduino/README.md). A minimal stand-in for the Arduino core on Linux:
// just what an Arduino library that talks to a modem over a Stream needs to compile and run.
// Written for this harness; no Arduino core code is used.
#pragma once

#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#ifndef ARDUINO
#define ARDUINO 100
#endif

typedef uint8_t byte;
typedef bool boolean;

#define HIGH 0x1
#define LOW 0x0
#define INPUT 0x0
#define OUTPUT 0x1
#define INPUT_PULLUP 0x2

#define DEC 10
#define HEX 16
#define OCT 8
#define BIN 2

// Program memory is ordinary memory here.
#define PROGMEM
#define PGM_P const char *
#define PSTR(s) (s)
#define pgm_read_byte(p) (*(const unsigned char *)(p))

unsigned long millis();
unsigned long micros();
void delay(unsigned long ms);
void yield();

// No GPIO on a pty: pins are remembered (so a sketch can read back what it wrote) and
// otherwise ignored. An input pin reads HIGH (an idle, active-low RING line).
void pinMode(int pin, int mode);
void digitalWrite(int pin, int value);
int digitalRead(int pin);

#include "WString.h"
#include "Stream.h"
