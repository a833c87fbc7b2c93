// SPDX-License-Identifier: Apache-2.0
// Minimal stand-in for the Arduino WString.h: only the flash-string marker type and F().
#pragma once

class __FlashStringHelper;
#define F(string_literal) (reinterpret_cast<const __FlashStringHelper *>(string_literal))
