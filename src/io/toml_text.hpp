// A deck's text, checked before toml++ parses it. Debian's toml++ 3.3.0
// reaches a __builtin_unreachable (undefined behaviour) on some non-ASCII
// code points where it tests for whitespace (upstream issues #190 and #295,
// fixed after 3.3.0); the fuzz target found it from a deck with a Cyrillic
// letter in a number. TOML allows non-ASCII text only in strings and
// comments, so the check refuses it elsewhere, and in the two places where
// toml++ runs that test over a string's text too: after a backslash in a
// multi-line string (and the whitespace or line end that may follow it), and
// in a string glued to a bare value
// (`11"..."`, which toml++ reads whole before it classifies the value).
// Messages name the file, line and column.
#pragma once

#include <string>

namespace larmor::io {

// Reads `path` whole; throws std::invalid_argument "PATH:LINE:COL: ..." for a
// non-ASCII byte where the check refuses it, std::runtime_error if the file
// cannot be read.
std::string read_toml_text(const std::string& path);

// The check alone, on text already read (`path` names it in the message).
void check_toml_text(const std::string& text, const std::string& path);

}  // namespace larmor::io
