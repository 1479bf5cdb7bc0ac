#!/usr/bin/env bash
# One fault-injection case (tests/faults/CMakeLists.txt): runs larmor the way a
# user's mistake or an interruption would, then checks the exit status, the
# message and that no file is left behind or overwritten.
# Usage: fault_case.sh CASE LARMOR MPIEXEC SOURCE_DIR WORK_DIR SEAMED
# SEAMED is larmor_fault_seams: larmor whose finished temporary file waits
# LARMOR_FAULT_PAUSE_BEFORE_RENAME_S seconds before its rename.
set -u
case_name=$1 larmor=$2 mpiexec=$3 src=$4 work=$5/$1 seamed=$6
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
# Each case its own Open MPI temporary folder: processes started without
# mpirun share one job id, and one that finishes removes the folder where
# another maps its shared file pointers (which then warns).
mpi_tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$mpi_tmp"' EXIT
export OMPI_MCA_orte_tmpdir_base="$mpi_tmp" OMPI_MCA_prte_tmpdir_base="$mpi_tmp"
grid=$src/tests/drivers/grid.toml
fail() { echo "FAIL ($case_name): $*"; exit 1; }
leftovers() { find "$work" -name '*.tmp-*' | head -5; }
# Runs larmor in the background, signals it once the temporary file exists,
# and returns its exit status in $status.
interrupt_during_write() {
  local sig=$1; shift
  # With job control, as from a terminal: a background job of a shell
  # without it is started with SIGINT ignored, and keeps it ignored.
  set -m
  LARMOR_FAULT_PAUSE_BEFORE_RENAME_S=20 "$@" > run.log 2>&1 &
  set +m
  local pid=$! waited=0
  until [ -n "$(leftovers)" ] || [ $waited -ge 600 ]; do sleep 0.1; waited=$((waited + 1)); done
  [ -n "$(leftovers)" ] || fail "no temporary file appeared: $(cat run.log)"
  kill -s "$sig" "$pid"
  wait "$pid"; status=$?
}

# A dictionary fit of a 32-echo CPMG over 40 T2 values, of the data file $1.
dictionary_deck() {
  printf '[sequence]\nbuilder = "mese"\nechoes = 32\n[tissue]\n'
  printf 't2_ms = { from = 20.0, to = 400.0, count = 40, spacing = "log" }\n'
  printf '[data]\nfile = "%s"\n[estimator]\nmethod = "dictionary"\n[output]\npath = "maps.h5"\n' "$1"
}

case $case_name in
  output_is_the_deck)
    cp "$grid" deck.toml && before=$(md5sum < deck.toml)
    "$larmor" simulate deck.toml -o deck.toml > run.log 2>&1 && fail "accepted"
    grep -q "the output deck.toml is the run's input deck.toml" run.log || fail "$(cat run.log)"
    [ "$(md5sum < deck.toml)" = "$before" ] || fail "the deck was changed"
    ;;
  output_is_the_deck_through_a_link)
    cp "$grid" deck.toml && ln -s deck.toml alias.h5 && before=$(md5sum < deck.toml)
    "$larmor" simulate deck.toml -o alias.h5 > run.log 2>&1 && fail "accepted"
    grep -q "is the run's input" run.log || fail "$(cat run.log)"
    [ "$(md5sum < deck.toml)" = "$before" ] || fail "the deck was changed"
    ;;
  output_is_the_maps_file)
    "$larmor" simulate "$grid" -o maps.h5 --quiet > run.log 2>&1 || fail "setup: $(cat run.log)"
    printf '[sequence]\nbuilder = "mese"\n[tissue]\nmaps = "maps.h5"\nt2_ms = "/tissue/t2_ms"\n' > maps.toml
    before=$(md5sum < maps.h5)
    "$larmor" simulate maps.toml -o maps.h5 > run.log 2>&1 && fail "accepted"
    grep -q "is the run's input .*maps.h5" run.log || fail "$(cat run.log)"
    [ "$(md5sum < maps.h5)" = "$before" ] || fail "the maps file was changed"
    ;;
  sigterm_during_write|sigint_during_write)
    sig=TERM; [ "$case_name" = sigint_during_write ] && sig=INT
    interrupt_during_write "$sig" "$seamed" simulate "$grid" -o result.h5 --quiet
    want=143; [ "$sig" = INT ] && want=130
    [ "$status" -eq "$want" ] || fail "exit status $status, wanted $want: $(cat run.log)"
    [ -z "$(leftovers)" ] || fail "left $(leftovers)"
    [ ! -e result.h5 ] || fail "an interrupted run left a result"
    ;;
  killed_rank_under_mpirun)
    # One rank of three dies (SIGKILL: no handler runs in it); mpirun then
    # ends the others with SIGTERM, and they remove the shared temporary file.
    # The output's absolute path singles out this case's ranks among other
    # tests running at the same time.
    LARMOR_FAULT_PAUSE_BEFORE_RENAME_S=20 "$mpiexec" -np 3 --oversubscribe "$seamed" simulate \
      "$grid" -o "$work/result.h5" --quiet > run.log 2>&1 &
    runner=$!
    for _ in $(seq 600); do [ -n "$(leftovers)" ] && break; sleep 0.1; done
    [ -n "$(leftovers)" ] || fail "no temporary file appeared: $(cat run.log)"
    rank=$(pgrep -n -f "simulate $grid -o $work/result.h5") || fail "no rank found"
    kill -KILL "$rank"
    wait "$runner"; status=$?
    [ "$status" -ne 0 ] || fail "mpirun reported success after a rank died"
    for _ in $(seq 50); do [ -z "$(leftovers)" ] && break; sleep 0.2; done
    [ -z "$(leftovers)" ] || fail "left $(leftovers)"
    [ ! -e result.h5 ] || fail "a result was written without one of its ranks"
    ;;
  leftover_of_a_killed_run_is_removed)
    # A temporary file whose process no longer exists, as kill -9 leaves one.
    sleep 0 & dead=$!; wait $dead
    echo partial > "result.h5.tmp-$dead"
    "$larmor" simulate "$grid" -o result.h5 --quiet > run.log 2>&1 || fail "$(cat run.log)"
    grep -q "removed .*result.h5.tmp-$dead, left by an interrupted run" run.log || fail "$(cat run.log)"
    [ -z "$(leftovers)" ] || fail "left $(leftovers)"
    [ -s result.h5 ] || fail "no result"
    ;;
  full_file_system)
    # A 64 KiB file system for the output: the write fails part way.
    mkdir small
    mount -t tmpfs -o size=64k tmpfs small 2> /dev/null || { echo "SKIP: cannot mount a tmpfs"; exit 77; }
    trap 'umount "$work/small"' EXIT
    # 3000 voxels x 32 samples: 768 KiB of signals.
    printf '[sequence]\nbuilder = "mese"\n[tissue]\nt2_ms = { from = 10.0, to = 500.0, count = 100 }\nb1 = { from = 0.7, to = 1.3, count = 30 }\n' > big.toml
    "$larmor" simulate big.toml -o small/result.h5 --quiet > run.log 2>&1
    status=$?
    [ "$status" -eq 1 ] || fail "exit status $status, wanted 1: $(cat run.log)"
    grep -q "small/result.h5" run.log || fail "the message names no file: $(cat run.log)"
    [ -z "$(ls -A small)" ] || fail "left $(ls -A small)"
    ;;
  mistyped_command)
    "$larmor" simulat "$grid" > run.log 2>&1; status=$?
    [ "$status" -eq 2 ] || fail "exit status $status, wanted 2"
    grep -q "unknown command 'simulat'; did you mean 'simulate'?" run.log || fail "$(cat run.log)"
    ;;
  help_is_larmors_alone)
    "$larmor" --help > run.log 2>&1 || fail "$(cat run.log)"
    grep -q "larmor: extended phase graph" run.log || fail "$(cat run.log)"
    ! grep -qi "kokkos" run.log || fail "Kokkos' help is printed: $(head -3 run.log)"
    env -u OMP_PROC_BIND "$larmor" simulate "$grid" -o quiet.h5 > run.log 2>&1 || fail "$(cat run.log)"
    ! grep -q "OMP_PROC_BIND" run.log || fail "every run warns about OMP_PROC_BIND"
    ;;
  bad_numbers_on_the_command_line)
    for args in "inspect $src/inputs/mese.seq --rows 0" "inspect $src/inputs/mese.seq --rows -5" \
                "inspect $src/inputs/mese.seq --b0 nan" "phantom -o x.h5 --sequence $grid --noise 1e999" \
                "fit $grid --truth-tolerance -1" "export $grid -o x.seq --crusher-moment inf"; do
      "$larmor" $args > run.log 2>&1 && fail "accepted: $args"
      grep -qE "must be|not a finite number" run.log || fail "$args: $(cat run.log)"
      ! grep -q "179769" run.log || fail "$args prints the largest double: $(cat run.log)"
    done
    ;;
  deck_is_a_folder)
    mkdir folder.toml
    "$larmor" simulate folder.toml > run.log 2>&1 && fail "accepted"
    grep -q "folder.toml: is a folder, not a deck file" run.log || fail "$(cat run.log)"
    ;;
  sequence_without_samples)
    # The shipped CPMG file with every ADC taken out of its blocks.
    awk '/^\[/ { blocks = ($1 == "[BLOCKS]") } blocks && $1 ~ /^[0-9]+$/ { $7 = 0 } { print }' \
      "$src/inputs/mese.seq" > noadc.seq
    printf '[sequence]\nbuilder = "pulseq"\nfile = "noadc.seq"\n[tissue]\nt2_ms = 50.0\n' > nosamples.toml
    "$larmor" simulate nosamples.toml -o none.h5 > run.log 2>&1 && fail "accepted"
    grep -q "noadc.seq: blocks 1-[0-9]*: the file has no ADC" run.log || fail "$(cat run.log)"
    [ ! -e none.h5 ] || fail "a result was written"
    ;;
  implausible_tissue_warns)
    printf '[sequence]\nbuilder = "mese"\n[tissue]\nt1_ms = 100.0\nt2_ms = [50.0, 200.0]\nb1 = [0.2, 1.0]\n' > odd.toml
    "$larmor" simulate odd.toml -o odd.h5 > run.log 2>&1 || fail "a warning stopped the run: $(cat run.log)"
    grep -q "warning: 2 voxel(s) have T2 above T1" run.log || fail "$(cat run.log)"
    grep -q "warning: 2 voxel(s) have B1 outside 0.3-2" run.log || fail "$(cat run.log)"
    # The shipped file's 20 us hard pulses have a half bandwidth near 30 kHz.
    printf '[sequence]\nbuilder = "pulseq"\nfile = "%s"\n[tissue]\nt2_ms = 50.0\noff_resonance_hz = [0.0, 50000.0]\n' \
      "$src/inputs/mese.seq" > offres.toml
    "$larmor" simulate offres.toml -o offres.h5 > run.log 2>&1 || fail "$(cat run.log)"
    grep -q "warning: off-resonance up to 50000.0 Hz exceeds half the bandwidth of the narrowest RF pulse" run.log || fail "$(cat run.log)"
    [ "$(grep -c 'off-resonance up to' run.log)" -eq 1 ] || fail "warned more than once"
    ;;
  fit_nan_sample|fit_all_zero_voxel|fit_duplicate_voxel|fit_nan_model_weight|fit_deck_with_tissue)
    # The damaged inputs come from make_bad_inputs (in the folder above).
    data=good.h5 model="" tissue=""
    case $case_name in
      fit_nan_sample) data=bad_nan.h5; want="bad_nan.h5: voxel 2 of the volume has non-finite signals" ;;
      fit_all_zero_voxel) data=bad_zero.h5; want="bad_zero.h5: voxel 1 of the volume has all-zero signals" ;;
      fit_duplicate_voxel) data=bad_duplicate.h5; want="bad_duplicate.h5: voxel 3 appears twice \(rows 2 and 3\)" ;;
      fit_nan_model_weight) model='model = "../bad_model.h5"'; want="bad_model.h5: the PERK model's /perk/weights is not finite at entry 1" ;;
      fit_deck_with_tissue) tissue='[tissue]
t2_ms = 50.0'; want="fit.toml:[0-9]+: \[tissue\] is read only by method = \"dictionary\"" ;;
    esac
    cat > fit.toml <<DECK
[sequence]
builder = "mese"
echoes = 32
[data]
file = "../$data"
[estimator]
estimate = { t2_ms = { from = 20.0, to = 400.0, spacing = "log" } }
known = { b1 = { from = 0.6, to = 1.4, map = "/b1" } }
samples = 500
features = 50
$model
$tissue
[output]
path = "maps.h5"
DECK
    "$larmor" fit fit.toml --no-truth > run.log 2>&1 && fail "accepted"
    grep -qE "$want" run.log || fail "$(cat run.log)"
    [ ! -e maps.h5 ] || fail "maps were written"
    ;;
  fit_dictionary_bad_voxels)
    # Dictionary matching checks the signals as it reads them chunk by chunk:
    # the same refusal as the other methods, on one rank and on two (the bad
    # voxels on different ranks: no rank is left waiting).
    for np in 1 2; do
      for bad in "bad_zero.h5:voxel 1 of the volume has all-zero signals" \
                 "bad_nan.h5:voxel 2 of the volume has non-finite signals"; do
        data=${bad%%:*}
        dictionary_deck "../$data" > fit.toml
        "$mpiexec" -np $np --oversubscribe "$larmor" fit fit.toml --no-truth > run.log 2>&1 && fail "accepted $data on $np rank(s)"
        grep -q "$data: ${bad#*:}; .* (1 such voxel(s) in all)" run.log || fail "$np rank(s): $(cat run.log)"
        [ ! -e maps.h5 ] || fail "maps were written"
      done
    done
    sed 's/bad_nan.h5/good.h5/' fit.toml > good.toml
    "$mpiexec" -np 2 --oversubscribe "$larmor" fit good.toml --no-truth > run.log 2>&1 || fail "good.h5: $(cat run.log)"
    [ -e maps.h5 ] || fail "no maps from good.h5"
    ;;
  grid_too_large_for_memory)
    printf '[sequence]\nbuilder = "mese"\n[tissue]\nt1_ms = { from = 500.0, to = 3000.0, count = 1000 }\nt2_ms = { from = 10.0, to = 500.0, count = 1000 }\nb1 = { from = 0.5, to = 1.5, count = 1000 }\n' > huge.toml
    start=$(date +%s)
    "$larmor" simulate huge.toml -o huge.h5 > run.log 2>&1 && fail "accepted"
    [ $(( $(date +%s) - start )) -lt 20 ] || fail "refused only after $(( $(date +%s) - start )) s"
    grep -qE "1000000000 voxels x 32 samples need [0-9.]+ GB, more than the [0-9.]+ [GMT]B of memory available: use more ranks" run.log || fail "$(cat run.log)"
    ;;
  error_said_once_under_mpirun)
    "$mpiexec" -np 3 --oversubscribe "$larmor" simulate "$src/tests/drivers/bad_tissue.toml" -o x.h5 > run.log 2>&1 && fail "accepted"
    [ "$(grep -c 'error:' run.log)" -eq 1 ] || fail "said $(grep -c 'error:' run.log) times: $(grep error: run.log)"
    mkdir -p sub && "$mpiexec" -np 3 --oversubscribe "$larmor" simulate sub > run.log 2>&1 && fail "accepted"
    [ "$(grep -c 'error:' run.log)" -eq 1 ] || fail "a deck error was said $(grep -c 'error:' run.log) times"
    ;;
  maps_file_not_hdf5_or_truncated)
    "$larmor" simulate "$grid" -o whole.h5 --quiet > run.log 2>&1 || fail "setup: $(cat run.log)"
    head -c 3000 whole.h5 > cut.h5 && echo "not an HDF5 file" > text.h5
    for f in cut text; do
      printf '[sequence]\nbuilder = "mese"\n[tissue]\nmaps = "%s.h5"\nt2_ms = "/tissue/t2_ms"\n' $f > $f.toml
      "$larmor" simulate $f.toml -o out.h5 > run.log 2>&1 && fail "accepted $f.h5"
      [ "$(grep -c . run.log)" -eq 1 ] || fail "more than one line: $(cat run.log)"
    done
    grep -q "cut.h5: is truncated" <("$larmor" simulate cut.toml -o out.h5 2>&1) || fail "truncation not named"
    grep -q "text.h5: is not an HDF5 file" <("$larmor" simulate text.toml -o out.h5 2>&1) || fail "not named"
    ;;
  fit_no_voxel)
    # No voxel is refused before any training: an empty data file, and a
    # NIfTI mask that selects nothing.
    for data in empty.h5 series.nii; do
      mask=""; [ $data = series.nii ] && mask='mask = "../empty_mask.nii"'
      [ -e ../$data ] || { echo "SKIP: no $data (a build without NIfTI)"; exit 0; }
      printf '[sequence]\nbuilder = "mese"\nechoes = 32\n[data]\nfile = "../%s"\n%s\n[estimator]\nestimate = { t2_ms = { from = 20.0, to = 400.0, spacing = "log" } }\nsamples = 500\nfeatures = 50\n[output]\npath = "maps.h5"\n' "$data" "$mask" > fit.toml
      start=$(date +%s)
      "$larmor" fit fit.toml --no-truth > run.log 2>&1 && fail "accepted $data"
      [ $(( $(date +%s) - start )) -lt 10 ] || fail "$data refused only after $(( $(date +%s) - start )) s"
      grep -qE "$data: (/signals holds no voxel|../empty_mask.nii selects no voxel .every value is 0.): nothing to fit" run.log || fail "$(cat run.log)"
      [ ! -e maps.h5 ] || fail "maps were written"
    done
    ;;
  output_is_a_fifo)
    # Nothing that is not a regular file is replaced: the FIFO stays a FIFO.
    mkfifo out.h5
    "$larmor" simulate "$grid" -o out.h5 > run.log 2>&1 && fail "accepted"
    grep -q -- "-o: the output out.h5 is a FIFO, which larmor never replaces" run.log || fail "$(cat run.log)"
    [ -p out.h5 ] || fail "the FIFO was replaced"
    [ -z "$(leftovers)" ] || fail "left $(leftovers)"
    ;;
  output_is_a_device)
    "$larmor" simulate "$grid" -o /dev/full > run.log 2>&1 && fail "accepted"
    grep -q -- "-o: the output /dev/full is a character device" run.log || fail "$(cat run.log)"
    [ -c /dev/full ] || fail "/dev/full is no longer a device"
    ;;
  output_is_a_folder)
    mkdir -p results
    "$larmor" simulate "$grid" -o results > run.log 2>&1 && fail "accepted a folder"
    grep -q -- "-o: the output results is a folder: name a file in it" run.log || fail "$(cat run.log)"
    "$larmor" simulate "$grid" -o results/ > run.log 2>&1 && fail "accepted a trailing slash"
    grep -q -- "-o: the output results/ ends in '/'" run.log || fail "$(cat run.log)"
    [ -z "$(ls -A results)" ] || fail "wrote into the folder: $(ls -A results)"
    printf '[sequence]\nbuilder = "mese"\n[tissue]\nt2_ms = 80.0\n[output]\npath = ""\n' > empty.toml
    "$larmor" simulate empty.toml > run.log 2>&1 && fail "accepted an empty path"
    grep -q "empty.toml:6: \[output\] path is empty: name the file to write" run.log || fail "$(cat run.log)"
    ;;
  output_folder_not_writable)
    [ "$(id -u)" -ne 0 ] || { echo "SKIP: root writes in any folder"; exit 0; }
    mkdir ro && chmod 555 ro
    "$larmor" simulate "$grid" -o ro/out.h5 > run.log 2>&1 && fail "accepted"
    grep -q -- "-o: the output ro/out.h5 goes to ro, where this user cannot write" run.log || fail "$(cat run.log)"
    ;;
  sigint_ignored_in_a_background_job)
    # A background job of a shell without job control starts with SIGINT
    # ignored (so a ^C at the terminal does not reach it), and keeps it so.
    LARMOR_FAULT_PAUSE_BEFORE_RENAME_S=2 "$seamed" simulate "$grid" -o result.h5 --quiet > run.log 2>&1 &
    pid=$!
    for _ in $(seq 600); do [ -n "$(leftovers)" ] && break; sleep 0.1; done
    [ -n "$(leftovers)" ] || fail "no temporary file appeared: $(cat run.log)"
    kill -INT "$pid"
    wait "$pid"; status=$?
    [ "$status" -eq 0 ] || fail "exit status $status after an ignored SIGINT: $(cat run.log)"
    [ -s result.h5 ] || fail "no result"
    ;;
  sighup_under_nohup)
    # nohup starts the run with SIGHUP ignored, and it stays ignored: the
    # hang-up of a closed terminal does not end the run.
    LARMOR_FAULT_PAUSE_BEFORE_RENAME_S=2 nohup "$seamed" simulate "$grid" -o result.h5 --quiet > run.log 2>&1 &
    pid=$!
    for _ in $(seq 600); do [ -n "$(leftovers)" ] && break; sleep 0.1; done
    [ -n "$(leftovers)" ] || fail "no temporary file appeared: $(cat run.log)"
    kill -HUP "$pid"
    wait "$pid"; status=$?
    [ "$status" -eq 0 ] || fail "exit status $status after SIGHUP under nohup: $(cat run.log)"
    [ -s result.h5 ] || fail "no result"
    [ -z "$(leftovers)" ] || fail "left $(leftovers)"
    ;;
  exit_status_by_kind)
    # 0 done, 1 refused input, 2 usage error, whatever CLI11's own code for
    # the kind of parse error (signals: sigterm_during_write).
    for args in "--version" "--help" "simulate --help"; do
      "$larmor" $args > run.log 2>&1; status=$?
      [ "$status" -eq 0 ] || fail "$args: exit status $status, wanted 0"
    done
    grep -q "Exit status: 0 done, 1 refused input or failed run, 2 usage error, 128+N signal N" \
      <("$larmor" --help) || fail "--help does not list the exit statuses"
    for args in "simulate" "simulate $grid --no-such-option" "simulate $grid extra.toml" \
                "simulate $grid --max-order x" "inspect $src/inputs/mese.seq --rows 0" \
                "inspect no-such.seq" "frobnicate" "bench -n 5"; do
      "$larmor" $args > run.log 2>&1; status=$?
      [ "$status" -eq 2 ] || fail "'$args': exit status $status, wanted 2: $(cat run.log)"
      [ -s run.log ] || fail "'$args': no message"
    done
    printf '[sequence]\nbuilder = "mese"\nechoes = -3\n[tissue]\nt2_ms = 50.0\n' > bad.toml
    "$larmor" simulate bad.toml -o out.h5 > run.log 2>&1; status=$?
    [ "$status" -eq 1 ] || fail "a refused deck: exit status $status, wanted 1"
    grep -q "bad.toml:3: \[sequence\] echoes" run.log || fail "$(cat run.log)"
    [ ! -e out.h5 ] || fail "a result was written"
    ;;
  answers_without_starting_mpi)
    # An Open MPI that cannot start (no such messaging layer): --version,
    # --help and inspect answer all the same, for they start neither MPI nor
    # Kokkos; a simulation cannot.
    export OMPI_MCA_pml=no_such_layer
    "$larmor" simulate "$grid" -o out.h5 > run.log 2>&1 &&
      { echo "SKIP: this MPI starts with OMPI_MCA_pml=no_such_layer (not Open MPI)"; exit 0; }
    "$larmor" --version > run.log 2>&1 || fail "--version: $(cat run.log)"
    grep -qx "[0-9]*\.[0-9]*\.[0-9]*" run.log || fail "--version: $(cat run.log)"
    "$larmor" --help > run.log 2>&1 || fail "--help: $(cat run.log)"
    "$larmor" inspect "$src/inputs/mese.seq" > run.log 2>&1 || fail "inspect: $(cat run.log)"
    grep -q "^events: .*translated in" run.log || fail "inspect: $(cat run.log)"
    "$larmor" inspect "$grid" > run.log 2>&1; status=$?
    [ "$status" -eq 1 ] || fail "inspect of a deck: exit status $status, wanted 1"
    [ "$(grep -c 'error:' run.log)" -eq 1 ] || fail "inspect of a deck: $(cat run.log)"
    ;;
  fit_phases_show_themselves)
    # Every phase of a dictionary fit draws its bar (LARMOR_PROGRESS=bar draws
    # from the start), and each method's summary has its own fields.
    dictionary_deck ../good.h5 > fit.toml
    LARMOR_PROGRESS=bar "$larmor" fit fit.toml --no-truth > run.log 2> bars.log || fail "$(cat run.log bars.log)"
    for phase in "dictionary" "compression (two passes)" "matching"; do
      grep -q "larmor fit: $phase \[=*\] 100% " bars.log || fail "no bar for $phase: $(cat bars.log)"
    done
    grep -qE "larmor fit: read [0-9.]+ s, dictionary [0-9.]+ s \(simulate [0-9.]+, compress [0-9.]+\), match [0-9.]+ s, write [0-9.]+ s, total [0-9.]+ s" run.log ||
      fail "dictionary summary: $(cat run.log)"
    ! grep -q "features" run.log || fail "PERK's fields in a dictionary fit's summary"
    sed -e 's/method = "dictionary"/method = "nlls"\nestimate = { t2_ms = { from = 20.0, to = 400.0, spacing = "log" } }/' \
        -e '/^\[tissue\]/,/^t2_ms/d' fit.toml > nlls.toml
    "$larmor" fit nlls.toml --no-truth > run.log 2>&1 || fail "nlls: $(cat run.log)"
    grep -qE "larmor fit: read [0-9.]+ s, fit [0-9.]+ s, write [0-9.]+ s, total [0-9.]+ s" run.log ||
      fail "NLLS summary: $(cat run.log)"
    ;;
  python_estimators_refuse_unusable_voxels)
    # Dictionary.match and fit_nlls refuse NaN or all-zero signals as the CLI
    # does, naming the voxel, rather than answering atom 0.
    pydir=$(dirname "$larmor")/python
    ls "$pydir"/larmor/_larmor*.so > /dev/null 2>&1 || { echo "SKIP: no Python module in this build"; exit 0; }
    python=$(sed -n 's/^EXECUTABLE = "\(.*\)"$/\1/p' "$pydir/larmor/_interpreter.py")
    PYTHONPATH=$pydir "$python" - > run.log 2>&1 <<'PY' || fail "$(cat run.log)"
import numpy as np, larmor
seq = larmor.build("mese", echoes=8)
atoms = larmor.Tissue(t1_ms=1000.0, t2_ms=np.geomspace(20.0, 400.0, 30))
d = larmor.Dictionary(larmor.simulate(seq, atoms), atoms)
good = larmor.simulate(seq, larmor.Tissue(t1_ms=1000.0, t2_ms=np.full(3, 80.0)))
for bad, reason in ((np.nan, "non-finite"), (0.0, "zero")):
    s = good.copy()
    s[1] = 0.0
    s[1, 2] = bad
    for name, call in (("match", lambda: d.match(s)),
                       ("fit_nlls", lambda: larmor.fit_nlls(seq, dict(t1_ms=1000.0), s,
                                                            {"t2_ms": (20.0, 400.0)}))):
        try:
            call()
        except ValueError as e:
            assert "voxel 1" in str(e) and reason in str(e), f"{name}: {e}"
        else:
            raise SystemExit(f"{name} accepted a voxel with {reason} signals")
print("refused")
PY
    grep -qx refused run.log || fail "$(cat run.log)"
    ;;
  *) fail "unknown case" ;;
esac
echo "PASS ($case_name)"
