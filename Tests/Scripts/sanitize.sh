#!/usr/bin/env bash
# Runs the whole test suite under AddressSanitizer and/or ThreadSanitizer.
#
#   Tests/Scripts/sanitize.sh [address|thread|all] [extra `swift test` arguments...]
#
# Options set here come first in ASAN_OPTIONS / LSAN_OPTIONS / TSAN_OPTIONS, so values
# you export yourself are appended and win.
#
# Each sanitizer builds in its own scratch directory (.build/asan, .build/tsan), so the
# normal .build/debug and .build/release builds are left alone. Output goes to the terminal
# and to .build/sanitize-logs/. Extra arguments are passed to `swift test`
# (e.g. `--filter NetpbmTests`).
#
# Exits 0 when every requested run passes with no sanitizer report, 1 otherwise,
# 2 on a usage error. See docs/testing.md.
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$script_dir/../.." && pwd)"

mode="${1:-all}"
shift $(($# > 0 ? 1 : 0))
case "$mode" in
    address) sanitizers=(address) ;;
    thread) sanitizers=(thread) ;;
    all) sanitizers=(address thread) ;;
    *)
        echo "usage: $0 [address|thread|all] [extra swift test arguments...]" >&2
        exit 2
        ;;
esac

if ! command -v swift >/dev/null 2>&1; then
    echo "error: swift not found on PATH" >&2
    exit 2
fi

logs="$root/.build/sanitize-logs"
mkdir -p "$logs"

# The sanitizer runtimes print symbolized stacks when they find llvm-symbolizer.
toolchain_bin="$(dirname "$(readlink -f "$(command -v swift)")")"
if [[ -x "$toolchain_bin/llvm-symbolizer" ]]; then
    export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$toolchain_bin/llvm-symbolizer}"
    export TSAN_SYMBOLIZER_PATH="${TSAN_SYMBOLIZER_PATH:-$toolchain_bin/llvm-symbolizer}"
fi

# A sanitizer report fails the run even if a test runner were to swallow the exit code.
report_pattern='ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer|SUMMARY: (Address|Thread|Leak)Sanitizer'

linker_noise="ld.gold: warning: Cannot export local symbol '__asan"

failed=()
for sanitizer in "${sanitizers[@]}"; do
    case "$sanitizer" in
        address)
            scratch="$root/.build/asan"
            # The defaults (halt on the first error, leak checking on), plus use-after-return
            # detection for stack memory escaping through unsafe pointers.
            export ASAN_OPTIONS="detect_stack_use_after_return=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
            # Leak checking stays on; lsan.supp lists the toolchain leaks it ignores, each
            # with its reason. Child processes (the CLI and benchmark tests run the built
            # executables) inherit these variables, so the table of used suppressions is
            # not printed: it would land in the stderr those tests inspect. To see it, run
            # with LSAN_OPTIONS=print_suppressions=1.
            export LSAN_OPTIONS="suppressions=$script_dir/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
            ;;
        thread)
            scratch="$root/.build/tsan"
            # Report every race (not just the first), and exit non-zero if there was one.
            export TSAN_OPTIONS="halt_on_error=0:exitcode=66:second_deadlock_stack=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
            ;;
    esac
    log="$logs/$sanitizer-$(date -u +%Y%m%dT%H%M%SZ).log"
    echo "== swift test --sanitize=$sanitizer --scratch-path ${scratch#"$root"/} $* (log: ${log#"$root"/})"
    start=$SECONDS
    # The full output goes to the log; the terminal is spared gold's harmless
    # "Cannot export local symbol '__asan_check_...'" linker warnings (hundreds of lines).
    set +e
    swift test --package-path "$root" --scratch-path "$scratch" --sanitize="$sanitizer" "$@" 2>&1 \
        | tee "$log" | { grep --line-buffered -v "$linker_noise" || true; }
    status=${PIPESTATUS[0]}
    set -e
    elapsed=$((SECONDS - start))
    if ((status != 0)); then
        echo "FAILED: $sanitizer run exited with status $status after ${elapsed}s (log: $log)" >&2
        failed+=("$sanitizer")
    elif grep -Eq "$report_pattern" "$log"; then
        echo "FAILED: $sanitizer run passed but the sanitizer reported a problem (log: $log)" >&2
        grep -En "$report_pattern" "$log" | head -n 20 >&2
        failed+=("$sanitizer")
    else
        echo "OK: $sanitizer run clean in ${elapsed}s"
    fi
done

echo
if ((${#failed[@]} > 0)); then
    echo "sanitize.sh: failed: ${failed[*]}" >&2
    exit 1
fi
echo "sanitize.sh: clean: ${sanitizers[*]}"
