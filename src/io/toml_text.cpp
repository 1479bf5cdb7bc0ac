#include "io/toml_text.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace larmor::io {

namespace {

enum class Context { code, comment, basic, literal, multiline_basic, multiline_literal };

bool starts_with(const std::string& text, std::size_t at, const char* token) {
  return text.compare(at, std::char_traits<char>::length(token), token) == 0;
}

}  // namespace

void check_toml_text(const std::string& text, const std::string& path) {
  Context context = Context::code;
  // The last character of code before a string opened, spaces aside ('\n'
  // at a line's start). toml++ reads a bare value up to the next space or
  // comment before it classifies it, so a string glued to one (`11"...`,
  // `120."..."`) is read as part of that value, through the same whitespace
  // test; a '.' before a string outside a value is a dotted key's.
  char last_code = '\n', opened_after = '\n';
  // A bare value (a number, a boolean, a date) runs from its first character
  // in value position to a space, comma, bracket, brace, comment or line end;
  // `=`, `[` and `{` inside it do not end it (`8['...'`), so a string opened
  // there is glued to the value too. `nesting`: the arrays ('[') and inline tables ('{') open in
  // values; a comma in an array expects a value, in an inline table a key.
  bool value_expected = false, in_bare_value = false, opened_in_bare_value = false;
  std::string nesting;
  const auto in_array = [&] { return !nesting.empty() && nesting.back() == '['; };
  const auto string_may_hold_non_ascii = [&] {
    if (opened_in_bare_value) return false;
    return opened_after == '\n' || opened_after == '=' || opened_after == '[' ||
           opened_after == ',' || opened_after == '{' || opened_after == '.';
  };
  int line = 1;
  std::size_t line_start = 0;
  const auto refuse = [&](std::size_t at, const char* why) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", unsigned(static_cast<unsigned char>(text[at])));
    throw std::invalid_argument(path + ":" + std::to_string(line) + ":" +
                                std::to_string(at - line_start + 1) + ": non-ASCII byte " + byte +
                                " " + why);
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '\n') {
      ++line;
      line_start = i + 1;
      // Single-line strings and comments end at the line; an unterminated
      // string is toml++'s to report.
      if (context != Context::multiline_basic && context != Context::multiline_literal) {
        context = Context::code;
        last_code = '\n';
        value_expected = in_array();
        in_bare_value = false;
      }
      continue;
    }
    switch (context) {
      case Context::code:
        if (static_cast<unsigned char>(ch) >= 0x80)
          refuse(i,
                 "outside a string or comment (TOML allows non-ASCII text only in strings "
                 "and comments)");
        if (ch == '"' || ch == '\'') {
          opened_after = last_code;
          opened_in_bare_value = in_bare_value;
        }
        if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '#') {
          value_expected = value_expected && !in_bare_value;
          in_bare_value = false;
        } else if (ch == ',') {
          value_expected = in_array();
          in_bare_value = false;
        } else if (ch == ']' || ch == '}') {
          if (!nesting.empty() && nesting.back() == (ch == ']' ? '[' : '{')) nesting.pop_back();
          value_expected = false;
          in_bare_value = false;
        } else if (!in_bare_value && ch == '=') {
          value_expected = true;
        } else if (!in_bare_value && value_expected && (ch == '[' || ch == '{')) {
          nesting.push_back(ch);
          value_expected = ch == '[';
        } else if (!in_bare_value && value_expected && ch != '"' && ch != '\'') {
          in_bare_value = true;
        }
        if (ch != ' ' && ch != '\t' && ch != '\r') {
          last_code = ch;
        }
        if (ch == '#') {
          context = Context::comment;
        } else if (starts_with(text, i, "\"\"\"")) {
          context = Context::multiline_basic;
          i += 2;
        } else if (starts_with(text, i, "'''")) {
          context = Context::multiline_literal;
          i += 2;
        } else if (ch == '"') {
          context = Context::basic;
        } else if (ch == '\'') {
          context = Context::literal;
        }
        continue;
      case Context::comment:
        continue;
      default:  // the strings: the check here, their ends below
        if (static_cast<unsigned char>(ch) >= 0x80 && !string_may_hold_non_ascii()) {
          refuse(i,
                 "in a string that directly follows a value (write a space, comma or "
                 "newline between them)");
        }
        break;
    }
    switch (context) {
      case Context::code:
      case Context::comment:
        break;
      case Context::basic:
        if (ch == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
          ++i;
        } else if (ch == '"') {
          context = Context::code;
        }
        break;
      case Context::literal:
        if (ch == '\'') context = Context::code;
        break;
      case Context::multiline_basic:
        if (ch == '\\') {
          // A line-ending backslash trims the whitespace up to the next
          // character, which toml++ classifies as it goes.
          std::size_t j = i + 1;
          while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r')) ++j;
          if (j < text.size() && text[j] == '\n') {
            while (j < text.size() &&
                   (text[j] == ' ' || text[j] == '\t' || text[j] == '\r' || text[j] == '\n')) {
              if (text[j] == '\n') {
                ++line;
                line_start = j + 1;
              }
              ++j;
            }
            if (j < text.size() && static_cast<unsigned char>(text[j]) >= 0x80) {
              refuse(j,
                     "right after a line-ending backslash (start the line with an ASCII "
                     "character)");
            }
            i = j - 1;
          } else if (j < text.size() && static_cast<unsigned char>(text[j]) >= 0x80) {
            refuse(j, "after a backslash in a multi-line string (not an escape TOML knows)");
          } else {
            ++i;  // an escape: the next character is its
          }
        } else if (starts_with(text, i, "\"\"\"")) {
          context = Context::code;
          i += 2;
          // Up to two more quotes belong to the string (TOML 1.0).
          while (i + 1 < text.size() && text[i + 1] == '"') ++i;
        }
        break;
      case Context::multiline_literal:
        if (starts_with(text, i, "'''")) {
          context = Context::code;
          i += 2;
          while (i + 1 < text.size() && text[i + 1] == '\'') ++i;
        }
        break;
    }
  }
}

std::string read_toml_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  check_toml_text(s, path);
  return s;
}

}  // namespace larmor::io
