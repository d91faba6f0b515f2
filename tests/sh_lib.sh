# The shell tests' shared preamble (cli_test.sh, doc_test.sh,
# install_test.sh): a temporary directory removed on exit, and the tally
# their "ok - ..." / "FAIL - ..." lines keep.
#
#   NAME=cli . "$(dirname "$0")/sh_lib.sh"
#
# Sets TMP (a fresh directory, "${TMPDIR:-/tmp}/lw-$NAME.XXXXXX") and
# pass/fail; defines ok DESCRIPTION, notok DESCRIPTION [DETAIL] (the first
# 15 lines of DETAIL, indented) and finish (prints "N passed, M failed" and
# exits non-zero if any check failed).

TMP=$(mktemp -d "${TMPDIR:-/tmp}/lw-${NAME:-test}.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

pass=0
fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
notok() {
    echo "FAIL - $1"
    fail=$((fail + 1))
    if [ -n "${2:-}" ]; then printf '%s\n' "$2" | head -n 15 | sed 's/^/    /'; fi
}
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
    exit
}
