#!/usr/bin/env bash
# A bounded soak of larmor simulate: RUNS decks made by mutating a valid one
# (keys dropped, numbers replaced by nan, negatives, zeros and huge values,
# lines cut short) and maps files cut at random lengths, from a fixed seed.
# Every run must end with status 0 or 1 (no crash, no hang past the limit),
# a run that succeeds must leave a result, and none may leave a temporary
# file or change its inputs.
# Usage: soak.sh LARMOR SOURCE_DIR WORK_DIR RUNS SEED
set -u
larmor=$1 src=$2 work=$3/soak runs=$4
RANDOM=$5
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
"$larmor" simulate "$src/tests/drivers/grid.toml" -o maps.h5 --quiet > /dev/null 2>&1 || exit 2
base=$(cat <<'DECK'
[sequence]
builder = "mese"
echoes = 12
echo_spacing_ms = 9.0
refocusing_deg = 160.0

[tissue]
t1_ms = [700.0, 1100.0, 1500.0]
t2_ms = { from = 20.0, to = 400.0, count = 5, spacing = "log" }
b1 = [0.8, 1.0, 1.2]

[simulation]
max_order = 15

[output]
path = "out.h5"
DECK
)
numbers=(nan -1 0 1e308 -1e308 inf 3 0.5 1e-300 99999999999)
mutate() {  # one deck, one to three mutations
  local deck=$1 n=$((1 + RANDOM % 3))
  for _ in $(seq $n); do
    local lines pick
    lines=$(printf '%s\n' "$deck" | wc -l)
    pick=$((1 + RANDOM % lines))
    case $((RANDOM % 5)) in
      0) deck=$(printf '%s\n' "$deck" | sed "${pick}d") ;;                      # drop a line
      1) deck=$(printf '%s\n' "$deck" | sed "${pick}s/[0-9][0-9.]*/${numbers[RANDOM % ${#numbers[@]}]}/") ;;
      2) deck=$(printf '%s\n' "$deck" | sed "${pick}s/\(.\{$((RANDOM % 20))\}\).*/\1/") ;;  # cut a line
      3) deck=$(printf '%s\n' "$deck" | sed "${pick}s/mese/spgr/;${pick}s/log/linear/") ;;
      4) head -c $((RANDOM % $(stat -c %s maps.h5))) maps.h5 > cut.h5
         deck=$(printf '%s\n' "$deck" | sed 's/^t2_ms = .*/t2_ms = "\/tissue\/t2_ms"\nmaps = "cut.h5"/') ;;
    esac
  done
  printf '%s\n' "$deck"
}
failures=0
for run in $(seq "$runs"); do
  mutate "$base" > deck.toml
  cp deck.toml deck.before
  timeout 60 "$larmor" simulate deck.toml -o out.h5 --quiet > run.log 2>&1
  status=$?
  problem=""
  if [ "$status" -ne 0 ] && [ "$status" -ne 1 ]; then problem="exit status $status"; fi
  if [ "$status" -eq 0 ] && [ ! -s out.h5 ]; then problem="success without a result"; fi
  if [ "$status" -eq 1 ] && ! grep -q "error:" run.log; then problem="failure without a message"; fi
  if [ -n "$(find . -name '*.tmp-*')" ]; then problem="left $(find . -name '*.tmp-*')"; fi
  cmp -s deck.toml deck.before || problem="the deck changed"
  if [ -n "$problem" ]; then
    failures=$((failures + 1))
    echo "run $run: $problem"; sed 's/^/    /' deck.toml; sed 's/^/    | /' run.log | head -5
  fi
  rm -f out.h5
done
echo "soak: $runs runs, $failures failed"
[ "$failures" -eq 0 ] && echo "PASS (soak)"
