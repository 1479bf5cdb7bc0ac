// Pulseq reader: tokenising, [VERSION], [DEFINITIONS], [BLOCKS], [SIGNATURE]
// and the order in which sections are parsed (events need shapes first,
// blocks need everything).
#include "io/pulseq/pulseq_file.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "io/pulseq/pulseq_detail.hpp"

namespace larmor::io::pulseq {
namespace detail {

void Context::fail(int line, const std::string& section, const std::string& what) const {
  throw PulseqError(path_ + ":" + std::to_string(line) + ": [" + section + "] " + what);
}

void Context::warn(int line, const std::string& section, const std::string& what) const {
  if (warnings_ != nullptr) {
    warnings_->push_back(path_ + ":" + std::to_string(line) + ": [" + section + "] " + what);
  }
}

void Context::wrong_columns(const Row& row, const std::string& section,
                            const std::string& expected) const {
  fail(row.line, section,
       "expected " + expected + " columns, found " + std::to_string(row.tokens.size()));
}

bool parse_number(const std::string& token, double& value) {
  if (token.empty()) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtod(token.c_str(), &end);
  return end == token.c_str() + token.size() && errno != ERANGE && std::isfinite(value);
}

double Context::number(const Row& row, std::size_t column, const std::string& section) const {
  if (column >= row.tokens.size()) {
    fail(row.line, section, "missing column " + std::to_string(column + 1));
  }
  double value = 0.0;
  if (!parse_number(row.tokens[column], value)) {
    fail(row.line, section,
         "non-numeric field '" + row.tokens[column] + "' in column " + std::to_string(column + 1));
  }
  return value;
}

int Context::integer(const Row& row, std::size_t column, const std::string& section) const {
  const double value = number(row, column, section);
  if (value != std::floor(value) || std::fabs(value) > 2147483647.0) {
    fail(row.line, section,
         "expected an integer, found '" + row.tokens[column] + "' in column " +
             std::to_string(column + 1));
  }
  return static_cast<int>(value);
}

bool is_known_extension(const std::string& name) {
  static const std::set<std::string> known = {"TRIGGERS", "LABELSET",  "LABELINC",
                                              "DELAYS",   "ROTATIONS", "RF_SHIMS"};
  return known.count(name) != 0;
}

namespace {

const std::set<std::string> kSectionNames = {"VERSION",   "DEFINITIONS", "BLOCKS",   "RF",
                                             "GRADIENTS", "TRAP",        "ADC",      "DELAYS",
                                             "SHAPES",    "EXTENSIONS",  "SIGNATURE"};

struct Tokenised {
  std::map<std::string, Section> sections;
  std::size_t signature_offset = std::string::npos;  // where [SIGNATURE] starts
};

Tokenised tokenise(const Context& ctx, const std::string& content) {
  Tokenised result;
  Section* current = nullptr;
  std::size_t start = 0;
  int line_number = 0;
  while (start < content.size()) {
    std::size_t end = content.find('\n', start);
    if (end == std::string::npos) end = content.size();
    ++line_number;
    std::string text = content.substr(start, end - start);
    const std::size_t line_start = start;
    start = end + 1;
    const std::size_t hash = text.find('#');
    if (hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);  // splits on spaces, tabs and a stray '\r'
    Row row{line_number, {}};
    for (std::string word; words >> word;) row.tokens.push_back(word);
    if (row.tokens.empty()) continue;
    const std::string& first = row.tokens[0];
    if (first.front() == '[') {
      if (row.tokens.size() != 1 || first.size() < 3 || first.back() != ']') {
        ctx.fail(line_number, first, "malformed section header");
      }
      const std::string name = first.substr(1, first.size() - 2);
      if (kSectionNames.count(name) == 0) ctx.fail(line_number, name, "unknown section");
      current = &result.sections[name];
      if (current->name.empty()) {
        current->name = name;
        current->header_line = line_number;
      }
      if (name == "SIGNATURE" && result.signature_offset == std::string::npos) {
        result.signature_offset = line_start;
      }
      continue;
    }
    if (current == nullptr) ctx.fail(line_number, "none", "row before any section header");
    current->rows.push_back(std::move(row));
  }
  // An empty section is legitimate (pypulseq writes an empty [GRADIENTS]),
  // except as the last thing in the file: that is what a file cut short looks like.
  const Section* last = nullptr;
  for (const auto& entry : result.sections) {
    if (last == nullptr || entry.second.header_line > last->header_line) last = &entry.second;
  }
  if (last != nullptr && last->rows.empty()) {
    ctx.fail(last->header_line, last->name, "section has no rows and ends the file (truncated?)");
  }
  return result;
}

std::string rest_of_row(const Row& row) {
  std::string text;
  for (std::size_t i = 1; i < row.tokens.size(); ++i) text += (i > 1 ? " " : "") + row.tokens[i];
  return text;
}

void parse_version(const Context& ctx, const Section& section, Version& version) {
  bool have_major = false, have_minor = false;
  for (const Row& row : section.rows) {
    const std::string& key = row.tokens[0];
    if (row.tokens.size() != 2) ctx.wrong_columns(row, section.name, "2");
    if (key == "major") {
      version.major = ctx.integer(row, 1, section.name);
      have_major = true;
    } else if (key == "minor") {
      version.minor = ctx.integer(row, 1, section.name);
      have_minor = true;
    } else if (key == "revision") {
      version.revision = row.tokens[1];  // may be "1post1"
    } else {
      ctx.fail(row.line, section.name, "unknown key '" + key + "'");
    }
  }
  if (!have_major || !have_minor)
    ctx.fail(section.header_line, section.name, "needs major and minor");
  if (version.major != 1 || version.minor < 2 || version.minor > 5) {
    ctx.fail(section.header_line, section.name,
             "unsupported version " + std::to_string(version.major) + "." +
                 std::to_string(version.minor) + " (1.2 to 1.5 are read)");
  }
}

// Some writers store `Name` as space-separated character codes.
std::string decode_name(const Row& row) {
  if (row.tokens.size() < 3) return rest_of_row(row);
  std::string decoded;
  for (std::size_t i = 1; i < row.tokens.size(); ++i) {
    double code = 0.0;
    if (!parse_number(row.tokens[i], code) || code != std::floor(code) || code < 32 || code > 126) {
      return rest_of_row(row);
    }
    decoded.push_back(static_cast<char>(code));
  }
  return decoded;
}

void parse_definitions(const Context& ctx, const Section& section, const Version& version,
                       Definitions& definitions) {
  std::map<std::string, const Row*> rows;
  for (const Row& row : section.rows) {
    const std::string& key = row.tokens[0];
    if (!rows.emplace(key, &row).second) ctx.fail(row.line, section.name, "duplicate " + key);
    definitions.values[key] = key == "Name" ? decode_name(row) : rest_of_row(row);
  }
  definitions.name = definitions.values.count("Name") ? definitions.values["Name"] : "";
  const std::pair<const char*, double*> rasters[] = {
      {"GradientRasterTime", &definitions.gradient_raster_s},
      {"RadiofrequencyRasterTime", &definitions.rf_raster_s},
      {"AdcRasterTime", &definitions.adc_raster_s},
      {"BlockDurationRaster", &definitions.block_duration_raster_s}};
  for (const auto& [key, target] : rasters) {
    const auto it = rows.find(key);
    if (it == rows.end()) {
      if (version.at_least(1, 4)) {
        ctx.warn(section.header_line, section.name,
                 std::string(key) + " missing; using the pre-1.4 default");
      }
      continue;
    }
    if (it->second->tokens.size() != 2) ctx.wrong_columns(*it->second, section.name, "2");
    *target = ctx.number(*it->second, 1, section.name);
    if (*target <= 0) ctx.fail(it->second->line, section.name, std::string(key) + " must be > 0");
  }
  const auto required = rows.find("RequiredExtensions");
  if (required != rows.end()) {
    const auto& tokens = required->second->tokens;
    definitions.required_extensions.assign(tokens.begin() + 1, tokens.end());
  }
}

void parse_blocks(const Context& ctx, const Section& section, PulseqFile& file) {
  const std::string& name = section.name;
  const bool with_duration = file.version.at_least(1, 4);
  std::set<int> ids;
  for (const Row& row : section.rows) {
    const std::size_t n = row.tokens.size();
    if (with_duration ? n != 8 : (n != 7 && n != 8)) {
      ctx.wrong_columns(row, name, with_duration ? "8" : "7 or 8");
    }
    Block block;
    block.id = ctx.integer(row, 0, name);
    if (with_duration) {
      const int ticks = ctx.integer(row, 1, name);
      if (ticks < 0) ctx.fail(row.line, name, "negative block duration");
      block.duration_s = ticks * file.definitions.block_duration_raster_s;
    } else {
      block.delay_id = ctx.integer(row, 1, name);
    }
    block.rf = ctx.integer(row, 2, name);
    block.gx = ctx.integer(row, 3, name);
    block.gy = ctx.integer(row, 4, name);
    block.gz = ctx.integer(row, 5, name);
    block.adc = ctx.integer(row, 6, name);
    if (n == 8) block.ext = ctx.integer(row, 7, name);
    if (!ids.insert(block.id).second)
      ctx.fail(row.line, name, "duplicate id " + std::to_string(block.id));

    auto require = [&](int id, bool exists, const char* what) {
      if (id != 0 && !exists) {
        ctx.fail(row.line, name,
                 std::string("block ") + std::to_string(block.id) + " refers to " + what + " " +
                     std::to_string(id) + ", which is not defined");
      }
    };
    require(block.delay_id, file.delays.count(block.delay_id) != 0, "delay");
    require(block.rf, file.rf.count(block.rf) != 0, "RF");
    for (const int gradient : {block.gx, block.gy, block.gz}) {
      require(gradient, file.gradients.count(gradient) + file.traps.count(gradient) != 0,
              "gradient");
    }
    require(block.adc, file.adc.count(block.adc) != 0, "ADC");
    require(block.ext, file.extensions.count(block.ext) != 0, "extension");
    file.blocks.push_back(block);
  }
}

void check_signature(const Context& ctx, const Section& section, const std::string& content,
                     std::size_t signature_offset, Signature& signature) {
  for (const Row& row : section.rows) {
    if (row.tokens.size() != 2) ctx.wrong_columns(row, section.name, "2");
    if (row.tokens[0] == "Type") {
      signature.type = row.tokens[1];
    } else if (row.tokens[0] == "Hash") {
      signature.hash = row.tokens[1];
    } else {
      ctx.fail(row.line, section.name, "unknown key '" + row.tokens[0] + "'");
    }
  }
  signature.present = true;
  std::string expected = signature.hash;
  for (char& c : expected) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (signature.type != "md5") {
    ctx.warn(section.header_line, section.name,
             "signature type '" + signature.type + "' not checked");
    return;
  }
  std::string signed_bytes = content.substr(0, signature_offset);
  signature.matches = md5_hex(signed_bytes) == expected;
  // Writers disagree on whether the newline before [SIGNATURE] is signed.
  if (!signature.matches && !signed_bytes.empty() && signed_bytes.back() == '\n') {
    signed_bytes.pop_back();
    if (!signed_bytes.empty() && signed_bytes.back() == '\r') signed_bytes.pop_back();
    signature.matches = md5_hex(signed_bytes) == expected;
  }
  if (!signature.matches) {
    ctx.warn(section.header_line, section.name, "MD5 signature does not match the file's content");
  }
}

}  // namespace
}  // namespace detail

PulseqFile PulseqFile::read(const std::string& path, std::vector<std::string>* warnings) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) throw PulseqError(path + ":0: [file] cannot open for reading");
  std::ostringstream buffer;
  buffer << stream.rdbuf();
  if (stream.bad()) throw PulseqError(path + ":0: [file] read error");
  return parse(buffer.str(), path, warnings);
}

PulseqFile PulseqFile::parse(const std::string& content, const std::string& path,
                             std::vector<std::string>* warnings) {
  using namespace detail;
  const Context ctx(path, warnings);

  // A UTF-8 byte-order mark (some Windows editors add one) is not content.
  const std::string text = content.rfind("\xEF\xBB\xBF", 0) == 0 ? content.substr(3) : content;
  Tokenised tokenised = tokenise(ctx, text);
  auto& sections = tokenised.sections;
  auto section = [&](const char* name) -> const Section* {
    const auto it = sections.find(name);
    return it == sections.end() ? nullptr : &it->second;
  };

  PulseqFile file;
  file.path = path;
  if (section("VERSION") == nullptr) {
    ctx.fail(1, "VERSION",
             "section missing: files written before Pulseq 1.2 (which had none) are not read; "
             "write the sequence again with a current Pulseq or pypulseq");
  }
  parse_version(ctx, *section("VERSION"), file.version);
  if (const Section* s = section("DEFINITIONS")) {
    parse_definitions(ctx, *s, file.version, file.definitions);
  } else if (file.version.at_least(1, 4)) {
    ctx.warn(1, "DEFINITIONS", "section missing; using the pre-1.4 rasters");
  }
  if (const Section* s = section("DELAYS")) {
    if (file.version.at_least(1, 4)) ctx.fail(s->header_line, "DELAYS", "not part of 1.4+ files");
    parse_delays(ctx, *s, file);
  }
  // Shapes before the events that name them; events before the blocks.
  if (const Section* s = section("SHAPES")) parse_shapes(ctx, *s, file);
  if (const Section* s = section("RF")) parse_rf(ctx, *s, file);
  if (const Section* s = section("GRADIENTS")) parse_gradients(ctx, *s, file);
  if (const Section* s = section("TRAP")) parse_traps(ctx, *s, file);
  if (const Section* s = section("ADC")) parse_adc(ctx, *s, file);
  if (const Section* s = section("EXTENSIONS")) parse_extensions(ctx, *s, file);
  const Section* blocks = section("BLOCKS");
  if (blocks == nullptr) {
    int last_line = 1;
    for (const auto& entry : sections) {
      if (!entry.second.rows.empty())
        last_line = std::max(last_line, entry.second.rows.back().line);
    }
    ctx.fail(last_line, "BLOCKS", "section missing (truncated file?)");
  }
  parse_blocks(ctx, *blocks, file);
  if (const Section* s = section("SIGNATURE")) {
    check_signature(ctx, *s, text, tokenised.signature_offset, file.signature);
  }
  return file;
}

const ExtensionSpec* PulseqFile::find_extension(const std::string& name) const {
  for (const auto& entry : extension_specs) {
    if (entry.second.name == name) return &entry.second;
  }
  return nullptr;
}

}  // namespace larmor::io::pulseq
