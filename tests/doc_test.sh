#!/usr/bin/env bash
# The documentation against the code: `layerwise --help`, the man page
# layerwise(1) and the option table (src/cli_options.c) agree; every option
# the parser in src/cli.c accepts, every command it dispatches and every
# environment variable src/ and ui/ read is in the table; every link and
# image in README.md and data/doc/*.md points to a file (and heading) that
# exists.
#
#   LW=build/layerwise DOC=build/layerwise-doc MAN=build/layerwise.1 bash tests/doc_test.sh
#   (what `make doc-tests` runs)
#
# Prints "ok - ..." or "FAIL - ..." per check and "N passed, M failed";
# exits non-zero if any check failed.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LW=${LW:-build/layerwise}
DOC=${DOC:-build/layerwise-doc}
MAN=${MAN:-build/layerwise.1}
cd "$ROOT" || exit 1

NAME=doc . "$ROOT/tests/sh_lib.sh"
# check DESCRIPTION MISSING: ok when MISSING (a list) is empty
check() { if [ -z "$2" ]; then ok "$1"; else notok "$1: missing$2"; fi; }

for f in "$LW" "$DOC" "$MAN"; do
    [ -s "$f" ] || { notok "$f exists (make $LW $DOC $MAN)"; finish; }
done

"$LW" --help >"$TMP/help" 2>&1 || notok "layerwise --help exits 0"
"$DOC" --usage >"$TMP/usage" && "$DOC" --options >"$TMP/options" && "$DOC" --commands >"$TMP/commands" &&
    "$DOC" --environment >"$TMP/env" || { notok "the generator lists its tables"; finish; }
"$DOC" --man | cmp -s - "$MAN" && ok "the man page is the generator's output" ||
    notok "$MAN differs from '$DOC --man' (make $MAN)"
cmp -s "$TMP/help" "$TMP/usage" && ok "--help is the table's usage text, byte for byte" ||
    notok "--help differs from the table's usage text" "$(diff "$TMP/usage" "$TMP/help")"

# ---- the man page's sections, in order
sections=$(grep -E '^\.SH ' "$MAN" | sed 's/^\.SH //; s/"//g' | tr '\n' '|')
want="NAME|SYNOPSIS|DESCRIPTION|COMMANDS|OPTIONS|FILES|ENVIRONMENT|EXIT STATUS|EXAMPLES|SEE ALSO|"
[ "$sections" = "$want" ] && ok "the man page has its sections in order" ||
    notok "man page sections" "got:  $sections"$'\n'"want: $want"

# roff TEXT: TEXT as the man page writes it (hyphens escaped)
roff() { printf '%s' "$1" | sed 's/-/\\-/g'; }

# ---- options: table -> --help and man page; parser <-> table
missing_help=""
missing_man=""
spellings=""
while IFS=$'\t' read -r short long arg cmds; do
    spellings="$spellings $long"
    [ "$short" != "-" ] && spellings="$spellings $short"
    left="$long"
    [ "$short" != "-" ] && left="$short, $long"
    [ "$arg" != "-" ] && left="$left $arg"
    grep -qF -- "  $left " "$TMP/help" || grep -qE -- "^ +$(printf '%s' "$left" | sed 's/[][|.{}]/\\&/g')\$" "$TMP/help" ||
        missing_help="$missing_help [$left]"
    head="\\fB$(roff "$long")\\fR"
    [ "$short" != "-" ] && head="\\fB$(roff "$short")\\fR, $head"
    [ "$arg" != "-" ] && head="$head \\fI$(roff "$arg")\\fR"
    grep -A1 -x '\.TP' "$MAN" | grep -qxF -- "$head" || missing_man="$missing_man [$left]"
    if [ "$cmds" != all ] && [ "$cmds" != cli ]; then
        for c in $cmds; do grep -qx "$c" "$TMP/commands" || missing_man="$missing_man [$long takes unknown command $c]"; done
    fi
done <"$TMP/options"
check "--help describes every option of the table" "$missing_help"
check "the man page describes every option of the table" "$missing_man"

# The literals the parser compares arguments with ("--network", "-n") in
# src/cli.c, and in src/netgen.c the size options of `net` (the table cli.c
# parses them by): each must be a spelling in the table, and each spelling a
# literal there, so an option added without documentation (or documented and
# gone) fails here.
cat src/cli.c src/netgen.c | grep -oE '"-(-[a-z][a-z0-9-]*|[a-zA-Z])"' | tr -d '"' | sort -u >"$TMP/literals"
[ -s "$TMP/literals" ] || notok "found the option literals of src/cli.c"
undocumented=""
while read -r lit; do
    case " $spellings " in *" $lit "*) ;; *) undocumented="$undocumented $lit" ;; esac
done <"$TMP/literals"
check "every option src/cli.c accepts is in the option table" "$undocumented"
stale=""
for s in $spellings; do grep -qxF -- "$s" "$TMP/literals" || stale="$stale $s"; done
check "every option of the table is one src/cli.c accepts" "$stale"

# ---- commands: the dispatcher in src/cli.c <-> table -> --help and man page
{
    grep -oE '\{"[a-z]+", cmd_[a-z_]+\}' src/cli.c | sed -E 's/\{"([a-z]+)".*/\1/'
    grep -oE 'strcmp\(o\.cmd, "[a-z]+"\)' src/cli.c | sed -E 's/.*"([a-z]+)".*/\1/'
    echo
} | sort -u >"$TMP/dispatched"
[ "$(wc -l <"$TMP/dispatched")" -gt 5 ] || notok "found the commands src/cli.c dispatches"
sort -u "$TMP/commands" | diff "$TMP/dispatched" - >"$TMP/cmddiff" && ok "the table's commands are those src/cli.c dispatches" ||
    notok "commands: src/cli.c (<) against the table (>)" "$(cat "$TMP/cmddiff")"
missing_help=""
missing_man=""
while read -r c; do
    if [ -n "$c" ] && [ "$c" != help ]; then grep -qE "^  layerwise +$c( |$)" "$TMP/help" || missing_help="$missing_help $c"; fi
    grep -qxF ".B layerwise${c:+ $c}" "$MAN" || missing_man="$missing_man ${c:-(none)}"
    grep -qE "^\\\\fBlayerwise${c:+ $c}\\\\fR" "$MAN" || missing_man="$missing_man ${c:-(none)}(synopsis)"
done <"$TMP/commands"
check "--help lists every command of the table" "$missing_help"
check "the man page's SYNOPSIS and COMMANDS list every command of the table" "$missing_man"

# ---- environment: every getenv in src/ and ui/ <-> the table -> man page
grep -rhoE 'getenv\("[A-Za-z_0-9]+"\)' src ui | sed -E 's/getenv\("(.*)"\)/\1/' | sort -u >"$TMP/getenv"
[ -s "$TMP/getenv" ] || notok "found the getenv calls of src/ and ui/"
sort -u "$TMP/env" | diff "$TMP/getenv" - >"$TMP/envdiff" && ok "the environment table lists every variable src/ and ui/ read" ||
    notok "environment: read by src/ and ui/ (<) against the table (>)" "$(cat "$TMP/envdiff")"
missing=""
env_section=$(sed -n '/^\.SH ENVIRONMENT/,/^\.SH /p' "$MAN")
while read -r v; do printf '%s\n' "$env_section" | grep -qxF ".B $v" || missing="$missing $v"; done <"$TMP/env"
check "the man page's ENVIRONMENT describes every variable" "$missing"

# ---- exit statuses: every code an error carries is in EXIT STATUS
codes=$(grep -rhoE 'lw_fail\([^,]+, *[0-9]+' src ui | sed -E 's/.*, *//' | sort -u)
exit_section=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH /p' "$MAN")
missing=""
for c in 0 $codes; do printf '%s\n' "$exit_section" | grep -qxF ".B $c" || missing="$missing $c"; done
if grep -q 'return 128 + sig' ui/tui.c; then printf '%s\n' "$exit_section" | grep -qxF '.B 128+N' || missing="$missing 128+N"; fi
check "EXIT STATUS names every status the code uses (0 $(echo $codes))" "$missing"

# ---- FILES names every format
missing=""
for fmt in net cluster strategy profile costs sim; do
    sed -n '/^\.SH FILES/,/^\.SH /p' "$MAN" | grep -qF "layerwise\\-$fmt/1" || missing="$missing layerwise-$fmt/1"
done
sed -n '/^\.SH FILES/,/^\.SH /p' "$MAN" | grep -qi "trace" || missing="$missing trace"
check "FILES describes every file format" "$missing"

# ---- every page of the manual the man page names is in data/doc
missing=""
for f in $(sed 's/\\-/-/g' "$MAN" | grep -oE '[a-z-]+\.md' | sort -u); do [ -f "data/doc/$f" ] || missing="$missing $f"; done
check "the pages the man page names are in data/doc" "$missing"

# ---- the page renders: groff without warnings, man -l (where installed)
if command -v groff >/dev/null; then
    out=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
    [ -z "$out" ] && ok "groff -man -ww renders the page without a warning" || notok "groff warns" "$out"
else
    ok "groff -man -ww renders the page (skipped: no groff)"
fi
if command -v man >/dev/null; then
    out=$(MANWIDTH=80 man -l "$MAN" 2>&1)
    printf '%s' "$out" | grep -q "EXIT STATUS" && ok "man -l $MAN shows the page" || notok "man -l $MAN" "$out"
else
    ok "man -l shows the page (skipped: no man)"
fi

# ---- the Markdown pages: the README's synopsis names every command, the
# command-line page every option (by one of its spellings) and every
# environment variable
missing=""
while read -r c; do
    [ -z "$c" ] || [ "$c" = help ] || grep -qE "^    layerwise +$c( |$)" README.md || missing="$missing $c"
done <"$TMP/commands"
check "README.md's synopsis lists every command" "$missing"
missing=""
while IFS=$'\t' read -r short long arg cmds; do
    grep -qF -- "$long" data/doc/cli.md || { [ "$short" != "-" ] && grep -qE -- "(^|[^a-z-])$short([^a-z-]|$)" data/doc/cli.md; } ||
        missing="$missing $long"
done <"$TMP/options"
while read -r v; do grep -qF "| \`$v\` |" data/doc/cli.md || missing="$missing $v"; done <"$TMP/env"
check "data/doc/cli.md names every option and environment variable" "$missing"

# ---- links and images in the Markdown documentation
if command -v python3 >/dev/null; then
    if out=$(python3 - <<'EOF' 2>&1
import glob, os, re, sys

def slug(h):
    # GitHub's anchors: lower case, punctuation dropped, spaces to hyphens
    h = re.sub(r"[`*_]", "", h.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")

def anchors(path):
    out, seen = set(), {}
    fence = False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"#{1,6} +(.*?) *#*$", line.rstrip("\n"))
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else "%s-%d" % (s, n))
    return out

bad = []
count = 0
for md in ["README.md"] + sorted(glob.glob("data/doc/*.md")):
    text = open(md, encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for m in re.finditer(r"!?\[[^\]]*\]\(([^)\s]+)(?: \"[^\"]*\")?\)", text):
        target = m.group(1)
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        count += 1
        path, _, frag = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
        if not os.path.exists(full):
            bad.append("%s: %s (no file %s)" % (md, target, full))
        elif frag and full.endswith(".md") and frag not in anchors(full):
            bad.append("%s: %s (no heading #%s in %s)" % (md, target, frag, full))
if count < 10:
    bad.append("only %d links found" % count)
if bad:
    print("\n".join(bad))
    sys.exit(1)
print(count)
EOF
    ); then ok "every link and image in README.md and data/doc/*.md resolves ($out)"; else
        notok "links in the Markdown documentation" "$out"
    fi
else
    notok "python3 is installed (make deps)"
fi

finish
