// Internals shared by the Pulseq reader's source files: the tokenised rows of
// a section and the error/number helpers that know the file, line and section.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "formats/pulseq/pulseq_events.hpp"
#include "formats/pulseq/pulseq_file.hpp"

namespace larmor::formats::pulseq::detail {

struct Row {
  int line = 0;
  std::vector<std::string> tokens;
};

struct Section {
  std::string name;  // without brackets, e.g. "RF"
  int header_line = 0;
  std::vector<Row> rows;
};

class Context {
 public:
  Context(std::string path, std::vector<std::string>* warnings)
      : path_(std::move(path)), warnings_(warnings) {}

  [[noreturn]] void fail(int line, const std::string& section, const std::string& what) const;
  void warn(int line, const std::string& section, const std::string& what) const;

  // Whole-token numbers; anything else (including nan/inf) is an error.
  double number(const Row& row, std::size_t column, const std::string& section) const;
  int integer(const Row& row, std::size_t column, const std::string& section) const;
  [[noreturn]] void wrong_columns(const Row& row, const std::string& section,
                                  const std::string& expected) const;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string>* warnings_;
};

bool parse_number(const std::string& token, double& value);
bool is_known_extension(const std::string& name);

// Section parsers (pulseq_sections.cpp). They fill `file` and check ids.
void parse_rf(const Context& ctx, const Section& section, PulseqFile& file);
void parse_gradients(const Context& ctx, const Section& section, PulseqFile& file);
void parse_traps(const Context& ctx, const Section& section, PulseqFile& file);
void parse_adc(const Context& ctx, const Section& section, PulseqFile& file);
void parse_delays(const Context& ctx, const Section& section, PulseqFile& file);
void parse_shapes(const Context& ctx, const Section& section, PulseqFile& file);
void parse_extensions(const Context& ctx, const Section& section, PulseqFile& file);

// Translation (pulseq_moments.cpp): quantises the moment of every gap between
// the instants (sorted by time; `moments` is the moment vector at each, in
// 1/m) and assembles the canonical description.
sequence::Description quantise_gaps(const PulseqFile& file, const std::vector<double>& times,
                                    const std::vector<int>& block_ids,
                                    const std::vector<sequence::Event>& events,
                                    const std::vector<std::array<double, 3>>& moments,
                                    double end_time, const std::array<double, 3>& end_moment,
                                    const TranslateOptions& options, TranslationReport& report);

}  // namespace larmor::formats::pulseq::detail
