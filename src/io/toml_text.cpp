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

bool is_non_ascii(char ch) { return static_cast<unsigned char>(ch) >= 0x80; }

// One pass over the text, byte by byte, tracking what toml++ would be reading.
class TomlScanner {
 public:
  TomlScanner(const std::string& text, const std::string& path) : text_(text), path_(path) {}

  void run() {
    for (std::size_t i = 0; i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        end_line(i);
      } else if (context_ == Context::code) {
        i = code(i);
      } else if (context_ != Context::comment) {
        i = string_byte(i);
      }
    }
  }

 private:
  void new_line_at(std::size_t i) {
    ++line_;
    line_start_ = i + 1;
  }

  // Single-line strings and comments end at the line; an unterminated string
  // is toml++'s to report.
  void end_line(std::size_t i) {
    new_line_at(i);
    if (context_ == Context::multiline_basic || context_ == Context::multiline_literal) return;
    context_ = Context::code;
    last_code_ = '\n';
    value_expected_ = in_array();
    in_bare_value_ = false;
  }

  bool in_array() const { return !nesting_.empty() && nesting_.back() == '['; }

  bool string_may_hold_non_ascii() const {
    if (opened_in_bare_value_) return false;
    return opened_after_ == '\n' || opened_after_ == '=' || opened_after_ == '[' ||
           opened_after_ == ',' || opened_after_ == '{' || opened_after_ == '.';
  }

  [[noreturn]] void refuse(std::size_t at, const char* why) const {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", unsigned(static_cast<unsigned char>(text_[at])));
    throw std::invalid_argument(path_ + ":" + std::to_string(line_) + ":" +
                                std::to_string(at - line_start_ + 1) + ": non-ASCII byte " + byte +
                                " " + why);
  }

  // A byte of code: where values start and end, then whether a string or
  // comment opens. Returns the last byte consumed.
  std::size_t code(std::size_t i) {
    const char ch = text_[i];
    if (is_non_ascii(ch)) {
      refuse(i,
             "outside a string or comment (TOML allows non-ASCII text only in strings and "
             "comments)");
    }
    if (ch == '"' || ch == '\'') {
      opened_after_ = last_code_;
      opened_in_bare_value_ = in_bare_value_;
    }
    track_values(ch);
    if (ch != ' ' && ch != '\t' && ch != '\r') last_code_ = ch;
    if (ch == '#') {
      context_ = Context::comment;
    } else if (starts_with(text_, i, "\"\"\"")) {
      context_ = Context::multiline_basic;
      return i + 2;
    } else if (starts_with(text_, i, "'''")) {
      context_ = Context::multiline_literal;
      return i + 2;
    } else if (ch == '"') {
      context_ = Context::basic;
    } else if (ch == '\'') {
      context_ = Context::literal;
    }
    return i;
  }

  // A bare value (a number, a boolean, a date) runs from its first character
  // in value position to a space, comma, bracket, brace, comment or line end;
  // `=`, `[` and `{` inside it do not end it (`8['...'`), so a string opened
  // there is glued to the value. `nesting_`: the arrays ('[') and inline
  // tables ('{') open in values; a comma in an array expects a value, in an
  // inline table a key.
  void track_values(char ch) {
    if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '#') {
      value_expected_ = value_expected_ && !in_bare_value_;
      in_bare_value_ = false;
    } else if (ch == ',') {
      value_expected_ = in_array();
      in_bare_value_ = false;
    } else if (ch == ']' || ch == '}') {
      if (!nesting_.empty() && nesting_.back() == (ch == ']' ? '[' : '{')) nesting_.pop_back();
      value_expected_ = false;
      in_bare_value_ = false;
    } else if (!in_bare_value_ && ch == '=') {
      value_expected_ = true;
    } else if (!in_bare_value_ && value_expected_ && (ch == '[' || ch == '{')) {
      nesting_.push_back(ch);
      value_expected_ = ch == '[';
    } else if (!in_bare_value_ && value_expected_ && ch != '"' && ch != '\'') {
      in_bare_value_ = true;
    }
  }

  // A byte inside a string: the check, then the string's escapes and end.
  std::size_t string_byte(std::size_t i) {
    const char ch = text_[i];
    if (is_non_ascii(ch) && !string_may_hold_non_ascii()) {
      refuse(i,
             "in a string that directly follows a value (write a space, comma or newline "
             "between them)");
    }
    switch (context_) {
      case Context::basic:
        if (ch == '\\' && i + 1 < text_.size() && text_[i + 1] != '\n') return i + 1;
        if (ch == '"') context_ = Context::code;
        return i;
      case Context::literal:
        if (ch == '\'') context_ = Context::code;
        return i;
      case Context::multiline_basic:
        if (ch == '\\') return multiline_backslash(i);
        return multiline_end(i, "\"\"\"");
      case Context::multiline_literal:
        return multiline_end(i, "'''");
      default:
        return i;
    }
  }

  // The closing delimiter; up to two more quotes belong to the string (TOML 1.0).
  std::size_t multiline_end(std::size_t i, const char* delimiter) {
    if (!starts_with(text_, i, delimiter)) return i;
    context_ = Context::code;
    i += 2;
    while (i + 1 < text_.size() && text_[i + 1] == delimiter[0]) ++i;
    return i;
  }

  // A line-ending backslash trims the whitespace up to the next character,
  // which toml++ classifies as it goes; any other is an escape.
  std::size_t multiline_backslash(std::size_t i) {
    std::size_t j = i + 1;
    while (j < text_.size() && (text_[j] == ' ' || text_[j] == '\t' || text_[j] == '\r')) ++j;
    if (j < text_.size() && text_[j] == '\n') {
      while (j < text_.size() &&
             (text_[j] == ' ' || text_[j] == '\t' || text_[j] == '\r' || text_[j] == '\n')) {
        if (text_[j] == '\n') new_line_at(j);
        ++j;
      }
      if (j < text_.size() && is_non_ascii(text_[j])) {
        refuse(j, "right after a line-ending backslash (start the line with an ASCII character)");
      }
      return j - 1;
    }
    if (j < text_.size() && is_non_ascii(text_[j])) {
      refuse(j, "after a backslash in a multi-line string (not an escape TOML knows)");
    }
    return i + 1;  // an escape: the next character is its
  }

  const std::string& text_;
  const std::string& path_;
  Context context_ = Context::code;
  int line_ = 1;
  std::size_t line_start_ = 0;
  // The last character of code before a string opened, spaces aside ('\n' at
  // a line's start). toml++ reads a bare value up to the next space or
  // comment before it classifies it, so a string glued to one (`11"...`,
  // `120."..."`) is read as part of that value, through the same whitespace
  // test; a '.' before a string outside a value is a dotted key's.
  char last_code_ = '\n', opened_after_ = '\n';
  bool value_expected_ = false, in_bare_value_ = false, opened_in_bare_value_ = false;
  std::string nesting_;
};

}  // namespace

void check_toml_text(const std::string& text, const std::string& path) {
  TomlScanner(text, path).run();
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
