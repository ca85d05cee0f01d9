# The steps every libFuzzer script shares; sourced by fuzz-netpbm.sh and fuzz-cube.sh.
#
#   fuzz_setup DIR BINARY "$@"  parse [SECONDS] [libFuzzer flags...]; set root, work
#                             (.build/DIR), binary (work/BINARY), corpus, artifacts,
#                             logs, seconds and the remaining flags in fuzz_flags
#   fuzz_build MODULE HARNESS SOURCE...
#                             build the harness with the sources into one sanitised module
#   fuzz_run DICT HINT        run for SECONDS, report new artifacts (HINT: where to add
#                             the regression test); exits 0, 1 on a finding, 2 on an error
# Outside SwiftPM, whose manifest cannot ask for sanitizer flags without unsafeFlags.

fuzz_setup() {
    local name="$1" binary_name="$2"
    shift 2
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    seconds="${1:-600}"
    if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
        echo "usage: $0 [SECONDS] [extra libFuzzer flags...]   (SECONDS defaults to 600)" >&2
        exit 2
    fi
    shift $(($# > 0 ? 1 : 0))
    fuzz_flags=("$@")
    swiftc="${SWIFTC:-$(command -v swiftc || true)}"
    if [[ -z "$swiftc" ]]; then
        echo "error: swiftc not found on PATH (or set SWIFTC=/path/to/swiftc)" >&2
        exit 2
    fi
    toolchain_bin="$(dirname "$(readlink -f "$swiftc")")"
    work_relative=".build/$name"
    work="$root/$work_relative"
    binary="$work/$binary_name"
    corpus="$work/corpus"
    artifacts="$work/artifacts"
    logs="$work/logs"
    mkdir -p "$corpus" "$artifacts" "$logs"
}

fuzz_build() {
    local module="$1" harness="$2"
    shift 2
    # One module holds the code under test and the harness, so the harness imports
    # nothing. lld avoids gold's flood of "Cannot export local symbol" warnings.
    echo "== building $binary"
    if ! "$swiftc" -sanitize=fuzzer,address -use-ld=lld -parse-as-library -O -swift-version 6 \
        -module-name "$module" "$@" "$harness" -o "$binary.tmp"; then
        echo "error: building the fuzzer failed (see the compiler output above)" >&2
        exit 2
    fi
    mv -f "$binary.tmp" "$binary"
}

fuzz_run() {
    local dict="$1" hint="$2"
    local stamp log before status=0
    stamp="$(date -u +%Y%m%dT%H%M%SZ)"
    log="$logs/fuzz-$stamp.log"
    list_artifacts() { find "$artifacts" -maxdepth 1 -type f -printf '%f\n' | sort; }
    before="$(list_artifacts)"
    export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$toolchain_bin/llvm-symbolizer}"
    echo "== fuzzing for $seconds s (log: $log)"
    # One process, one thread (libFuzzer's default; -jobs/-workers stay at 1 on a 2-core
    # machine). Relative artifact prefix as documented; run from the repository root.
    cd "$root"
    "$binary" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=5 -max_len=65536 \
        -dict="$dict" -artifact_prefix="$work_relative/artifacts/" -print_final_stats=1 \
        "${fuzz_flags[@]}" "$corpus" 2>&1 | tee "$log" || status=$?

    local new_artifacts=() name
    while IFS= read -r name; do
        case "$name" in
            crash-* | timeout-* | oom-* | leak-*) new_artifacts+=("$work_relative/artifacts/$name") ;;
        esac
    done < <(comm -13 <(printf '%s\n' "$before") <(list_artifacts))

    echo
    echo "== summary"
    grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true
    grep -E '^Done [0-9]+ runs' "$log" | tail -n 1 || true

    if ((${#new_artifacts[@]} > 0)); then
        echo "FINDING: the fuzzer left ${#new_artifacts[@]} artifact(s):" >&2
        local artifact
        for artifact in "${new_artifacts[@]}"; do echo "  $artifact" >&2; done
        cat >&2 <<EOT

Reproduce (from $root):
  $work_relative/$(basename "$binary") ${new_artifacts[0]}
Minimise a crash:
  $work_relative/$(basename "$binary") -minimize_crash=1 -max_total_time=60 -artifact_prefix=$work_relative/artifacts/minimized- ${new_artifacts[0]}
Show the bytes:
  od -A d -c ${new_artifacts[0]} | head -n 20
Then $hint
EOT
        exit 1
    fi
    if ((status != 0)); then
        echo "error: the fuzzer exited with status $status but left no artifact; see $log" >&2
        exit 2
    fi
    echo "OK: no crash, timeout, out-of-memory or leak in $seconds s."
}
