// larmor export DECK.toml -o FILE.seq: the deck's sequence as a Pulseq 1.4
// file (src/io/pulseq/pulseq_writer.hpp), which `builder = "pulseq"`
// reads back to the same events. Rank 0 writes, atomically.
#include <cstdio>

#include "app/deck.hpp"
#include "cli/checks.hpp"
#include "commands.hpp"
#include "io/pulseq/pulseq_writer.hpp"
#include "io/temporary_files.hpp"

namespace larmor::drivers {

void add_export(CLI::App& app, ExportArgs& args) {
  CLI::App* cmd =
      app.add_subcommand("export", "Write a deck's sequence as a Pulseq file (.seq, version 1.4)");
  cmd->add_option("deck", args.deck, "Input deck (TOML); only [sequence] is used")->required();
  cmd->add_option("-o,--output", args.output, "The Pulseq file to write")->required();
  cmd->add_option("--crusher-moment", args.crusher_moment_per_m,
                  "Moment of one shift along z, 1/m, declared in the file (default: the deck's "
                  "crusher_moment_per_m, else 1000; another than the deck's is refused)")
      ->check(cli::finite_number(0.0, false, 1e9, "cycles per metre"));
}

int run_export(const ExportArgs& args, const parallel::Communicator& comm) {
  const app::Deck deck = app::read_deck(args.deck);
  app::require_epg(deck, "larmor export");
  io::refuse_output_over_inputs(args.output, deck.input_files, "-o: the output");
  if (comm.is_root()) {
    io::pulseq::WriteOptions options;
    options.crusher_moment_per_m = args.crusher_moment_per_m;
    io::pulseq::write_pulseq(args.output, deck.sequence, options);
    std::printf("larmor export: %s (%zu events, %d samples) -> %s\n", deck.sequence.name.c_str(),
                deck.sequence.events.size(), deck.sequence.sample_count(), args.output.c_str());
  }
  return 0;
}

}  // namespace larmor::drivers
