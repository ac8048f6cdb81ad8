#!/bin/sh
# gemmshim, the command (tools/gemmshim.c): its arguments and exit
# statuses, the environment it gives CMD, and what record and run say at
# the end. No GPU: CMD is a shell, or tests/cmd/gemm_caller, which calls
# cublasSgemm_v2 through the shim in front of the fake libcublas
# ($GS_FAKE_DIR). Every check names itself when it fails, with the output.
set -u
LC_ALL=C
# fresh heap is not zeroed: a field the command forgets to set shows
MALLOC_PERTURB_=165
export LC_ALL MALLOC_PERTURB_
for v in GS_SHIM GS_FAKE_DIR GS_BUILDDIR; do
  eval "val=\${$v:-}"
  [ -n "$val" ] || { echo "FAIL: test_cmd: $v is not set (the Makefile sets it)"; exit 1; }
done
GS=$GS_BUILDDIR/tools/gemmshim
CALLER=$GS_BUILDDIR/tests/cmd/gemm_caller
for f in "$GS" "$CALLER" "$GS_SHIM" "$GS_FAKE_DIR/libcublas.so.13" "$GS_FAKE_DIR/libcublasLt.so.13"; do
  [ -f "$f" ] || { echo "FAIL: test_cmd: $f not built"; exit 1; }
done
VERSION=$(sed -n 's/^PACKAGE_VERSION = //p' "$GS_BUILDDIR/Makefile")
[ -n "$VERSION" ] || { echo "FAIL: test_cmd: no PACKAGE_VERSION in $GS_BUILDDIR/Makefile"; exit 1; }
# the library as gemmshim names it (realpath)
SHIM=$(cd -P "$(dirname "$GS_SHIM")" && pwd -P)/$(basename "$GS_SHIM")

# Nothing of the caller's: no preload, no GEMMSHIM_* setting.
unset LD_PRELOAD
for v in $(env | sed -n 's/^\(GEMMSHIM_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
# in the build tree, where programs may be executed (/tmp may be noexec)
parent=$GS_BUILDDIR/tests
[ -d "$parent" ] && [ -w "$parent" ] || parent=${TMPDIR:-/tmp}
T=$(mktemp -d "$parent/test_cmd.tmp.XXXXXX") || { echo "FAIL: test_cmd: mktemp in $parent"; exit 1; }
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
trap 'exit 1' HUP INT PIPE TERM
T=$(cd -P "$T" && pwd -P)
W=$T/work                      # the current directory of every command
mkdir "$W" "$T/tmp" "$T/cache"
export TMPDIR=$T/tmp           # run's temporary logs
export XDG_CACHE_HOME=$T/cache # no route table of the user's
export GS_FAKE_DIR             # gemm_caller loads the fake from there
cd "$W" || exit 1

fail=0 checks=0 name=
# gs ARGS...: run gemmshim; stdout, stderr and the status in $T/out,
# $T/err and $rc. Every check below asserts on the last one.
gs() { "$GS" "$@" >"$T/out" 2>"$T/err"; rc=$?; }
# genv NAME=VALUE... -- ARGS...: the same with those set for gemmshim alone
# (through env: an assignment before a function call may outlive it)
genv() {
  n=$# k=0 seen=
  while [ $k -lt $n ]; do
    a=$1; shift; k=$((k + 1))
    if [ "$a" = -- ] && [ -z "$seen" ]; then seen=1; set -- "$@" "$GS"; else set -- "$@" "$a"; fi
  done
  env "$@" >"$T/out" 2>"$T/err"; rc=$?
}
check() { name=$1; checks=$((checks + 1)); rm -f "$W/ran"; }
bad() {
  echo "FAIL: $name: $*"
  echo "--- exit status $rc; stdout:"; cat "$T/out"
  echo "--- stderr:"; cat "$T/err"
  echo "---"
  fail=1
}
expect_rc() { [ "$rc" -eq "$1" ] || bad "exit status $rc, expected $1"; }
# expect_is out|err TEXT: the whole stream is TEXT (a final newline aside)
expect_is() {
  [ "$(cat "$T/$1")" = "$2" ] || bad "std$1 is not exactly:
$2"
}
# expect_line out|err TEXT: some line of the stream is TEXT
expect_line() { grep -qxF -- "$2" "$T/$1" || bad "std$1 has no line: $2"; }
# expect_first out|err TEXT: the first line is TEXT
expect_first() { [ "$(sed -n 1p "$T/$1")" = "$2" ] || bad "std$1's first line is not: $2"; }
expect_empty() { [ ! -s "$T/$1" ] || bad "std$1 is not empty"; }
expect_not_ran() { [ ! -e "$W/ran" ] || bad "CMD ran"; }
expect_file_lines() { [ "$(wc -l <"$2" | tr -d ' ')" = "$1" ] || bad "$2 has $(wc -l <"$2") lines, expected $1"; }

USAGE='usage: gemmshim [--verbose] [--lib PATH] COMMAND [ARGS]'
RUN_USAGE='usage: gemmshim [OPTIONS] run [--table TABLE] [--] CMD [ARGS]'
RECORD_USAGE='usage: gemmshim [OPTIONS] record [-o FILE] [--] CMD [ARGS]'

# ---- 1. the command line ----------------------------------------------------
check "no arguments"
gs
expect_rc 2
expect_empty out
expect_first err 'gemmshim: no command given (record, run, tune or report)'
expect_line err "$USAGE"

check "an unknown command"
gs frob
expect_rc 2
expect_first err "gemmshim: unknown command 'frob' (record, run, tune or report)"
expect_line err "$USAGE"

check "run with no CMD"
gs run
expect_rc 2
expect_is err "gemmshim: run: no command given
$RUN_USAGE"

check "run -- with no CMD"
gs run --
expect_rc 2
expect_is err "gemmshim: run: no command given
$RUN_USAGE"

check "record with no CMD"
gs record -o "$W/never.csv"
expect_rc 2
expect_is err "gemmshim: record: no command given
$RECORD_USAGE"
[ ! -e "$W/never.csv" ] || bad "the log was created"

check "an unknown option before the command"
gs --bogus run -- touch "$W/ran"
expect_rc 2
expect_first err "gemmshim: unknown option '--bogus'"
expect_line err "$USAGE"
expect_not_ran

check "an unknown option of run"
gs run --bogus -- touch "$W/ran"
expect_rc 2
expect_is err "gemmshim: run: unknown option '--bogus'
$RUN_USAGE"
expect_not_ran

check "an option of run given to record"
gs record --table x -- touch "$W/ran"
expect_rc 2
expect_is err "gemmshim: record: unknown option '--table'
$RECORD_USAGE"
expect_not_ran

check "--help"
gs --help
expect_rc 0
expect_empty err
expect_first out "$USAGE"
expect_line out "exit status: CMD's (128+N when signal N ended it); 2 bad usage or input;"
expect_line out "126 CMD cannot be executed; 127 CMD not found"

check "-h"
gs -h
expect_rc 0
expect_first out "$USAGE"

check "run --help"
gs run --help
expect_rc 0
expect_is out "$RUN_USAGE"
expect_empty err

check "record --help"
gs record --help
expect_rc 0
expect_is out "$RECORD_USAGE"

check "--version"
gs --version
expect_rc 0
expect_is out "gemmshim $VERSION"
expect_empty err

check "--lib naming nothing"
gs --lib /nonexistent/libgemmshim.so run -- touch "$W/ran"
expect_rc 2
expect_is err 'gemmshim: --lib /nonexistent/libgemmshim.so: No such file or directory'
expect_not_ran

check "--lib=PATH naming nothing, for record"
gs --lib=/nonexistent/libgemmshim.so record -o "$W/never.csv" -- touch "$W/ran"
expect_rc 2
expect_is err 'gemmshim: --lib /nonexistent/libgemmshim.so: No such file or directory'
expect_not_ran
[ ! -e "$W/never.csv" ] || bad "the log was created"

check "--lib after the command name"
gs run --lib /nonexistent/libgemmshim.so -- touch "$W/ran"
expect_rc 2
expect_is err 'gemmshim: --lib /nonexistent/libgemmshim.so: No such file or directory'
expect_not_ran

check "--lib naming a directory"
gs --lib "$T" run -- touch "$W/ran"
expect_rc 2
expect_is err "gemmshim: --lib $T: not a regular file"
expect_not_ran

check "--lib naming a file that is not a shared library"
printf 'not ELF\n' > "$W/notelf.so"
gs --lib "$W/notelf.so" run -- touch "$W/ran"
expect_rc 2
expect_is err "gemmshim: --lib $W/notelf.so: not a shared library (no ELF header)"
expect_not_ran

check "--lib without its value"
gs --lib
expect_rc 2
expect_is err 'gemmshim: --lib needs a value'

check "GEMMSHIM_LIB naming nothing"
genv GEMMSHIM_LIB=/nonexistent/libgemmshim.so -- run -- touch "$W/ran"
expect_rc 2
expect_is err 'gemmshim: $GEMMSHIM_LIB /nonexistent/libgemmshim.so: No such file or directory'
expect_not_ran

check "--lib before GEMMSHIM_LIB"
genv GEMMSHIM_LIB=/nonexistent/libgemmshim.so -- --verbose --lib "$GS_SHIM" run -- true
expect_rc 0
expect_first err "gemmshim: library $SHIM (--lib)"

check "GEMMSHIM_LIB naming the library"
genv GEMMSHIM_LIB=$GS_SHIM -- --verbose run -- true
expect_rc 0
expect_first err "gemmshim: library $SHIM (\$GEMMSHIM_LIB)"

check "GEMMSHIM_LIB empty: the build tree's"
genv GEMMSHIM_LIB= -- --verbose run -- true
expect_rc 0
expect_first err "gemmshim: library $SHIM (the build tree)"

# A copy of the command elsewhere: a library beside it is used, and with
# none there (nor installed) it says where it looked.
mkdir -p "$T/a/b"
cp "$GS" "$T/a/b/gemmshim"
check "no library to be found"
"$T/a/b/gemmshim" run -- touch "$W/ran" >"$T/out" 2>"$T/err"; rc=$?
installed=$(sed -n "s|^gemmshim: cannot find libgemmshim.so; searched: $T/a/b/libgemmshim.so $T/a/b/../libgemmshim.so ||p" "$T/err")
if [ $rc -eq 0 ] && grep -q '^gemmshim: no GEMM call seen$' "$T/err"; then
  echo "SKIP: $name: a libgemmshim.so is installed"
  rm -f "$W/ran"
else
  expect_rc 2
  case $installed in
    /*/libgemmshim.so) ;;
    *) bad "the first line does not list $T/a/b/libgemmshim.so, $T/a/b/../libgemmshim.so and the installed path" ;;
  esac
  expect_line err 'gemmshim: name it with --lib PATH or GEMMSHIM_LIB=PATH'
  expect_not_ran
fi
cp "$GS_SHIM" "$T/a/b/libgemmshim.so"
check "the library beside the command"
"$T/a/b/gemmshim" --verbose run -- true >"$T/out" 2>"$T/err"; rc=$?
expect_rc 0
expect_first err "gemmshim: library $T/a/b/libgemmshim.so (the build tree)"

# (a PATH of one empty directory: execvp gives EACCES, not ENOENT, when a
# directory of PATH cannot be searched)
mkdir "$T/nobin"
check "a CMD not found in PATH"
genv PATH=$T/nobin -- run -- gemmshim-no-such-command
expect_rc 127
expect_is err 'gemmshim: gemmshim-no-such-command: No such file or directory'

check "a CMD path that does not exist"
gs run -- "$W/no-such-file"
expect_rc 127
expect_is err "gemmshim: $W/no-such-file: No such file or directory"

check "record: a CMD not found"
genv PATH=$T/nobin -- record -o "$W/nf.csv" -- gemmshim-no-such-command
expect_rc 127
expect_is err 'gemmshim: gemmshim-no-such-command: No such file or directory'

printf '#!/bin/sh\ntouch "%s/ran"\n' "$W" >"$W/notexec"
chmod 644 "$W/notexec"
check "a CMD that is not executable"
gs run -- "$W/notexec"
expect_rc 126
expect_is err "gemmshim: $W/notexec: Permission denied"
expect_not_ran

check "record: a CMD that is not executable"
gs record -o "$W/ne.csv" -- "$W/notexec"
expect_rc 126
expect_is err "gemmshim: $W/notexec: Permission denied"
expect_not_ran

check "a directory as CMD"
gs run -- "$T"
expect_rc 126
expect_is err "gemmshim: $T: Permission denied"

# ---- 2. CMD's exit status ---------------------------------------------------
check "run: CMD's exit status"
gs run -- sh -c 'exit 7'
expect_rc 7
expect_is err 'gemmshim: no GEMM call seen'

# (Where SIGTERM is ignored already, as under some runners, CMD inherits
# that and cannot be ended by it: those checks are skipped.)
term_ignored=
sh -c 'trap "exit 9" TERM; kill -TERM $$; exit 1' 2>/dev/null
[ $? -eq 9 ] || term_ignored=1

check "run: CMD ended by SIGTERM gives 128+15"
if [ -n "$term_ignored" ]; then
  echo "SKIP: $name: SIGTERM is ignored here"
else
  gs run -- sh -c 'kill -TERM $$'
  expect_rc 143
  expect_is err 'gemmshim: no GEMM call seen'
fi

check "run: CMD ended by SIGKILL gives 128+9"
gs run -- sh -c 'kill -KILL $$'
expect_rc 137

check "record: CMD's exit status"
gs record -o "$W/st.csv" -- sh -c 'exit 5'
expect_rc 5
expect_is err "gemmshim: sh made no GEMM call: nothing recorded ($W/st.csv is empty)"

check "record: CMD ended by a signal"
gs record -o st2.csv -- sh -c 'kill -KILL $$'
expect_rc 137
expect_is err 'gemmshim: sh made no GEMM call: nothing recorded (st2.csv is empty)'

# SIGINT sent with kill is passed on to CMD (the terminal's reaches CMD by
# its process group), and gemmshim waits on for CMD's status.
int_ignored=
if sh -c 'kill -INT $$; exit 3' 2>/dev/null; [ $? -eq 3 ]; then int_ignored=1; fi
check "SIGINT sent to gemmshim is passed on to CMD"
if [ -n "$int_ignored" ]; then
  echo "SKIP: $name: SIGINT is ignored here"
else
  gs run -- sh -c 'trap "echo got INT; exit 3" INT; kill -INT $PPID
    i=0; while [ $i -lt 10 ]; do sleep 1; i=$((i + 1)); done; exit 1'
  expect_rc 3
  expect_is out 'got INT'
fi

# CMD ended by SIGINT (Ctrl-C): gemmshim ends by SIGINT too, after its
# summary, so that a calling script stops as it would without gemmshim.
check "CMD ended by SIGINT: gemmshim ends by SIGINT"
if [ -n "$int_ignored" ]; then
  echo "SKIP: $name: SIGINT is ignored here"
else
  python3 -c 'import subprocess, sys
p = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(p.returncode); sys.stderr.write(p.stderr)' "$GS" run -- sh -c 'kill -INT $$' >"$T/out" 2>"$T/err"
  rc=0
  expect_is out '-2'
  expect_is err 'gemmshim: no GEMM call seen'
fi

# SIGCHLD ignored by whoever started gemmshim would reap CMD unseen.
check "CMD's status with SIGCHLD ignored"
(trap '' CHLD; "$GS" run -- sh -c 'exit 4' >"$T/out" 2>"$T/err"; echo $? >"$T/rc")
rc=$(cat "$T/rc")
expect_rc 4

# SIGTERM is passed on to CMD, and gemmshim gives CMD's status.
check "SIGTERM is passed on to CMD"
if [ -n "$term_ignored" ]; then
  echo "SKIP: $name: SIGTERM is ignored here"
else
  gs run -- sh -c 'trap "echo got TERM; exit 9" TERM; kill -TERM $PPID
    i=0; while [ $i -lt 10 ]; do sleep 1; i=$((i + 1)); done; exit 1'
  expect_rc 9
  expect_is out 'got TERM'
fi

# ---- 3. the environment CMD gets ------------------------------------------
OLD=$GS_FAKE_DIR/libcublasLt.so.13    # a real shared object, to preload
ECHO_PRELOAD='printf "%s\n" "$LD_PRELOAD"'

check "LD_PRELOAD: the library alone"
gs run -- sh -c "$ECHO_PRELOAD"
expect_rc 0
expect_is out "$SHIM"
expect_is err 'gemmshim: no GEMM call seen'

check "LD_PRELOAD: the library first, the old value after it"
genv LD_PRELOAD=$OLD -- run -- sh -c "$ECHO_PRELOAD"
expect_rc 0
expect_is out "$SHIM:$OLD"
expect_is err 'gemmshim: no GEMM call seen'

check "LD_PRELOAD: record prepends too"
genv LD_PRELOAD=$OLD -- record -o pre.csv -- sh -c "$ECHO_PRELOAD"
expect_rc 0
expect_is out "$SHIM:$OLD"

check "LD_PRELOAD: the library later in the list is not moved"
genv LD_PRELOAD="$OLD:$GS_SHIM" -- run -- sh -c "$ECHO_PRELOAD"
expect_is out "$SHIM:$OLD:$GS_SHIM"

check "LD_PRELOAD: left as it is when the library is first"
genv LD_PRELOAD="$GS_SHIM $OLD" -- --verbose run -- sh -c "$ECHO_PRELOAD"
expect_rc 0
expect_is out "$GS_SHIM $OLD"
expect_line err "gemmshim: LD_PRELOAD=$GS_SHIM $OLD (already first)"

check "--verbose: the library, from the build tree, and what is set"
genv LD_PRELOAD=$OLD -- --verbose run -- sh -c "$ECHO_PRELOAD"
expect_rc 0
expect_is out "$SHIM:$OLD"
expect_first err "gemmshim: library $SHIM (the build tree)"
expect_line err "gemmshim: LD_PRELOAD=$SHIM:$OLD"
sed -n 3p "$T/err" >"$T/line"
case $(cat "$T/line") in
  "gemmshim: GEMMSHIM_LOG=$T/tmp/gemmshim-run."??????) ;;
  *) bad "the third line does not name the temporary log in \$TMPDIR" ;;
esac
expect_line err 'gemmshim: no GEMM call seen'

check "run: the temporary log is removed"
gs run -- sh -c 'test -f "$GEMMSHIM_LOG" && echo "$GEMMSHIM_LOG"'
expect_rc 0
case $(cat "$T/out") in
  "$T/tmp/gemmshim-run."??????) ;;
  *) bad "CMD did not see a log file in \$TMPDIR" ;;
esac
[ -z "$(ls "$T/tmp")" ] || bad "left in \$TMPDIR: $(ls "$T/tmp")"

check "run: routing stays on"
gs run -- sh -c 'echo "${GEMMSHIM_ROUTE-unset}"'
expect_is out 'unset'

check "record: routing off, the log's absolute path"
gs --verbose record -o rel.csv -- sh -c 'echo "$GEMMSHIM_ROUTE $GEMMSHIM_LOG"'
expect_rc 0
expect_is out "0 $W/rel.csv"
expect_line err 'gemmshim: GEMMSHIM_ROUTE=0'
expect_line err "gemmshim: GEMMSHIM_LOG=$W/rel.csv"

check "GEMMSHIM_DISABLE is said"
genv GEMMSHIM_DISABLE=1 -- run -- true
expect_rc 0
expect_is err 'gemmshim: GEMMSHIM_DISABLE=1: the shim passes every call through and logs nothing
gemmshim: no GEMM call seen'

# ---- 4. record --------------------------------------------------------------
HEAD='pid,entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,route,reason,count,device,entry_class,'
ROW64=',cublasSgemm_v2,f32,f32,f32,-,NN,-,64,64,64,1,cublas,routing_off,2,-1,gemm,'
ROW128=',cublasSgemm_v2,f32,f32,f32,-,NN,-,128,128,128,1,cublas,routing_off,3,-1,gemm,'

check "gemm_caller needs the shim"
"$CALLER" 8 8 8 1 >"$T/out" 2>"$T/err"; rc=$?
expect_rc 4

check "record: the log of a program's GEMM calls"
gs record -o rec.csv -- "$CALLER" 64 64 64 2 128 128 128 3
expect_rc 0
expect_is err 'gemmshim: recorded 2 distinct calls (5 calls) in rec.csv'
[ "$(sed -n 1p rec.csv)" = '# gemmshim log v4' ] || bad "rec.csv's first line is not '# gemmshim log v4'"
case $(sed -n 2p rec.csv) in "$HEAD"*) ;; *) bad "rec.csv's second line is not the header $HEAD..." ;; esac
expect_file_lines 4 rec.csv
grep -qF -- "$ROW64" rec.csv || bad "rec.csv has no row $ROW64"
grep -qF -- "$ROW128" rec.csv || bad "rec.csv has no row $ROW128"
# every row: routing_off, served by cublas
[ "$(awk -F, 'NR > 2 && !($13 == "cublas" && $14 == "routing_off") { n++ } END { print n + 0 }' rec.csv)" = 0 ] ||
  bad "rec.csv has a row whose route,reason is not cublas,routing_off"

check "record: the log is emptied first"
gs record -o rec.csv -- "$CALLER" 8 8 8 1
expect_rc 0
expect_is err 'gemmshim: recorded 1 distinct call (1 call) in rec.csv'
expect_file_lines 3 rec.csv

check "record: the default file"
mkdir "$W/d" && cd "$W/d" || exit 1
gs record -- "$CALLER" 8 8 8 1
cd "$W" || exit 1
expect_rc 0
expect_is err 'gemmshim: recorded 1 distinct call (1 call) in ./gemmshim-record.csv'
[ -f "$W/d/gemmshim-record.csv" ] && expect_file_lines 3 "$W/d/gemmshim-record.csv" ||
  bad "no ./gemmshim-record.csv"

check "record: a relative -o, CMD changing directory"
gs record -o rel2.csv -- sh -c "cd / && exec '$CALLER' 8 8 8 1"
expect_rc 0
expect_is err 'gemmshim: recorded 1 distinct call (1 call) in rel2.csv'
[ -f rel2.csv ] && expect_file_lines 3 rel2.csv || bad "no $W/rel2.csv"

check "record: two processes, one log"
gs record -o mp.csv -- sh -c "'$CALLER' 8 8 8 1 && '$CALLER' 16 16 16 2"
expect_rc 0
expect_is err 'gemmshim: recorded 2 distinct calls (3 calls) in mp.csv'
[ "$(grep -c '^# gemmshim log v' mp.csv)" = 1 ] || bad "mp.csv does not hold one version line"

check "record: CMD's status, with calls made"
gs record -o st3.csv -- sh -c "'$CALLER' 8 8 8 1; exit 5"
expect_rc 5
expect_is err 'gemmshim: recorded 1 distinct call (1 call) in st3.csv'

check "record: -o with '%' is refused"
gs record -o 'x.%p.csv' -- touch "$W/ran"
expect_rc 2
expect_is err "gemmshim: record: x.%p.csv: one file for every process: no '%' in it"
expect_not_ran
[ -z "$(ls | grep '^x\.')" ] || bad "a log was created: $(ls | grep '^x\.')"

check "record: --output= with '%' is refused"
gs record --output=y%%.csv -- touch "$W/ran"
expect_rc 2
expect_is err "gemmshim: record: y%%.csv: one file for every process: no '%' in it"
expect_not_ran

check "record: an empty -o"
gs record -o '' -- touch "$W/ran"
expect_rc 2
expect_is err 'gemmshim: record: -o needs a file name'
expect_not_ran

check "record: -o in a directory that does not exist"
gs record -o /nonexistent/dir/log.csv -- touch "$W/ran"
expect_rc 2
expect_is err 'gemmshim: record: cannot create /nonexistent/dir/log.csv: No such file or directory'
expect_not_ran

check "record: GEMMSHIM_DISABLE"
genv GEMMSHIM_DISABLE=yes -- record -o dis.csv -- "$CALLER" 8 8 8 1
expect_rc 0
expect_is err "gemmshim: GEMMSHIM_DISABLE=yes: the shim passes every call through and logs nothing
gemmshim: $CALLER made no GEMM call: nothing recorded (dis.csv is empty)"

# ---- 5. run: the summary, the route table -----------------------------------
check "run: the calls and who served their FLOPs"
gs run -- "$CALLER" 64 64 64 2 128 128 128 3
expect_rc 0
expect_empty out
expect_is err 'gemmshim: 5 GEMM calls; share of GEMM FLOPs: cublas 100.0%'

check "run: one call"
gs run -- "$CALLER" 8 8 8 1
expect_is err 'gemmshim: 1 GEMM call; share of GEMM FLOPs: cublas 100.0%'

check "run: two processes"
gs run -- sh -c "'$CALLER' 8 8 8 1; '$CALLER' 8 8 8 1"
expect_rc 0
expect_is err 'gemmshim: 2 GEMM calls in 2 processes; share of GEMM FLOPs: cublas 100.0%'

check "run: the user's GEMMSHIM_LOG"
genv GEMMSHIM_LOG=$W/user.csv -- run -- "$CALLER" 8 8 8 2
expect_rc 0
expect_is err 'gemmshim: 2 GEMM calls; share of GEMM FLOPs: cublas 100.0%'
[ -f user.csv ] && expect_file_lines 3 user.csv || bad "no $W/user.csv"

check "run: the user's GEMMSHIM_LOG again: only this run's calls"
genv GEMMSHIM_LOG=$W/user.csv -- run -- "$CALLER" 16 16 16 1
expect_rc 0
expect_is err 'gemmshim: 1 GEMM call; share of GEMM FLOPs: cublas 100.0%'
expect_file_lines 4 user.csv

check "run: the user's GEMMSHIM_LOG, no call made"
genv GEMMSHIM_LOG=$W/none.csv -- run -- true
expect_rc 0
expect_is err 'gemmshim: no GEMM call seen'

check "run: a relative GEMMSHIM_LOG, CMD changing directory"
genv GEMMSHIM_LOG=rel-run.csv -- run -- sh -c "cd / && exec '$CALLER' 8 8 8 1"
expect_rc 0
expect_is err 'gemmshim: 1 GEMM call; share of GEMM FLOPs: cublas 100.0%'
[ -f rel-run.csv ] && expect_file_lines 3 rel-run.csv || bad "no $W/rel-run.csv"

# An older shim's log is left alone; the library writes PATH.v4, read there.
check "run: GEMMSHIM_LOG holding a v1 log"
printf 'pid,entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,route,reason,count,device\n' > old.csv
genv GEMMSHIM_LOG=$W/old.csv -- run -- "$CALLER" 8 8 8 2
expect_rc 0
expect_line err 'gemmshim: 2 GEMM calls; share of GEMM FLOPs: cublas 100.0%'
expect_file_lines 1 old.csv
[ -f old.csv.v4 ] && expect_file_lines 3 old.csv.v4 || bad "no $W/old.csv.v4"

check "run: GEMMSHIM_LOG holding a v3 log"
printf '# gemmshim log v3\npid,entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,route,reason,count,device\n' > old2.csv
genv GEMMSHIM_LOG=$W/old2.csv -- run -- "$CALLER" 8 8 8 1
expect_rc 0
expect_line err 'gemmshim: 1 GEMM call; share of GEMM FLOPs: cublas 100.0%'
expect_file_lines 2 old2.csv
[ -f old2.csv.v4 ] && expect_file_lines 3 old2.csv.v4 || bad "no $W/old2.csv.v4"

check "run: GEMMSHIM_LOG with per-process tokens"
genv GEMMSHIM_LOG=$W/pp.%p.csv -- run -- "$CALLER" 8 8 8 1
expect_rc 0
expect_is err "gemmshim: no summary: GEMMSHIM_LOG=$W/pp.%p.csv has per-process tokens (%)"
[ "$(ls | grep -c '^pp\.[0-9]*\.csv$')" = 1 ] || bad "not one per-process log: $(ls | grep '^pp')"

# A log that is not one fails a run that succeeded, keeps CMD's failure.
check "run: a log that cannot be read"
genv GEMMSHIM_LOG=$W/garbage.csv -- run -- sh -c 'echo garbage >"$GEMMSHIM_LOG"'
expect_rc 2
expect_is err "gemmshim: $W/garbage.csv:1: no header line (pid,entry,...): not a call log (GEMMSHIM_LOG)"

check "run: a log that cannot be read, CMD failed"
genv GEMMSHIM_LOG=$W/garbage2.csv -- run -- sh -c 'echo garbage >"$GEMMSHIM_LOG"; exit 5'
expect_rc 5
expect_line err "gemmshim: $W/garbage2.csv:1: no header line (pid,entry,...): not a call log (GEMMSHIM_LOG)"

# A log with routed calls (CMD writes it: no GPU here): shares by route,
# largest first; the estimate from the route table.
LOGHEAD="${HEAD}lda,ldb,ldc,ldd,stride_a,stride_b,stride_c,stride_d,align_a,align_b,align_c,align_d,align_lda,align_ldb,align_ldc,align_ldd,pointer_mode,math_mode,gpu_name,gpu_uuid"
TAIL16='0,0,0,0,16,16,16,16,16,16,16,16,host,0,H200,GPU-test'
cat >"$W/routed.csv" <<EOF
# gemmshim log v2
$LOGHEAD
101,cublasGemmEx,bf16,bf16,bf16,32f,TN,-,100,100,100,1,bf16_wgmma_persistent,routed,3,0,gemm,100,100,100,100,$TAIL16
102,cublasSgemm_v2,f32,f32,f32,-,NN,-,100,100,100,1,cublas,not_tuned,1,0,gemm,100,100,100,100,$TAIL16
102,(other),-,-,-,-,-,-,-1,-1,-1,-1,-,-,2,0,-,-1,-1,-1,-1,0,0,0,0,-,-,-,-,-,-,-,-,-,-,H200,GPU-test
102,cublasSgemm_v2,f32,f32,f32,-,NN,-,1,1,1,1,sgemm_simt,routed,1,0,gemm,1,1,1,1,$TAIL16
EOF
TABLE_HEAD='entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio'
printf '%s\n%s\n' "$TABLE_HEAD" 'gemm,bf16,bf16,bf16,32f,TN,-,100,100,100,1,16,bf16_wgmma_persistent,10,1.5' >"$W/table.csv"
SHARES='gemmshim: 7 GEMM calls in 2 processes (2 of unknown shape); share of GEMM FLOPs: bf16_wgmma_persistent 75.0%, cublas 25.0%, sgemm_simt <0.1%'

check "run: shares of several routes"
genv GEMMSHIM_LOG=$W/routed-run.csv -- run -- sh -c 'cat routed.csv >>"$GEMMSHIM_LOG"'
expect_rc 0
expect_is err "$SHARES"

check "run --table: the time estimate"
genv GEMMSHIM_LOG=$W/routed-run2.csv -- run --table table.csv -- sh -c 'cat routed.csv >>"$GEMMSHIM_LOG"'
expect_rc 0
expect_is err "$SHARES
gemmshim: estimated time saved: 15.0 us over 3 routed calls (the route table's times)"

check "run --table: the table's absolute path for CMD"
gs --verbose run --table table.csv -- sh -c 'echo "$GEMMSHIM_TABLE"'
expect_rc 0
expect_is out "$W/table.csv"
expect_line err "gemmshim: route table $W/table.csv: 1 rows, 0 malformed lines"
expect_line err "gemmshim: GEMMSHIM_TABLE=$W/table.csv"

check "run -t TABLE"
gs run -t table.csv -- sh -c 'echo "$GEMMSHIM_TABLE"'
expect_rc 0
expect_is out "$W/table.csv"

check "run --table=TABLE"
gs run --table=table.csv -- sh -c 'echo "$GEMMSHIM_TABLE"'
expect_rc 0
expect_is out "$W/table.csv"

printf '%s\n%s\n%s\n' "$TABLE_HEAD" 'gemm,bf16,bf16,bf16,32f,TN,-,100,100,100,1,16,bf16_wgmma_persistent,10,1.5' \
  'gemm,f32,f32,f32,-,NN,-,abc,1,1,1,16,cublas,-,-' >"$W/bad.csv"
check "run --table: a malformed line, named FILE:LINE; CMD does not run"
gs run --table bad.csv -- touch "$W/ran"
expect_rc 2
expect_is err "gemmshim: $W/bad.csv:3: m 'abc' is not a size, a range lo-hi or *; line ignored
gemmshim: run: route table bad.csv: 1 malformed line (above); fix or delete them"
expect_not_ran

printf '%s\n%s\n%s\n' 'Validator,gpu_name' "$TABLE_HEAD" 'gemm,f32,f32,f32,-,XX,-,1,1,1,1,16,cublas,-,-' >"$W/bad2.csv"
check "run --table: two malformed lines"
gs run --table "$W/bad2.csv" -- touch "$W/ran"
expect_rc 2
expect_is err "gemmshim: $W/bad2.csv:1: a validator is Validator,KEY,VALUE; line ignored
gemmshim: $W/bad2.csv:3: layout 'XX' is not NN, TN, NT, TT or *; line ignored
gemmshim: run: route table $W/bad2.csv: 2 malformed lines (above); fix or delete them"
expect_not_ran

check "run --table: a file that does not exist"
gs run --table missing.csv -- touch "$W/ran"
expect_rc 2
expect_is err 'gemmshim: run: route table missing.csv: No such file or directory'
expect_not_ran

check "run --table with an empty name"
gs run --table= -- touch "$W/ran"
expect_rc 2
expect_is err 'gemmshim: run: --table needs a file name'
expect_not_ran

check "run --table: a directory"
gs run --table "$T" -- touch "$W/ran"
expect_rc 2
expect_is err "gemmshim: run: route table $T: is a directory"
expect_not_ran

cp "$W/table.csv" "$W/noread.csv"
chmod 000 "$W/noread.csv"
check "run --table: an unreadable file"
if [ ! -r "$W/noread.csv" ]; then
  gs run --table noread.csv -- touch "$W/ran"
  expect_rc 2
  expect_is err 'gemmshim: run: route table noread.csv: Permission denied'
  expect_not_ran
elif ! head -c 1 /proc/self/mem >/dev/null 2>&1; then
  # root reads any file: one whose read fails instead
  gs run --table /proc/self/mem -- touch "$W/ran"
  expect_rc 2
  expect_is err 'gemmshim: route table /proc/self/mem: cannot be read'
  expect_not_ran
else
  echo "SKIP: $name: every file is readable here"
fi
chmod 644 "$W/noread.csv"

# ---- 6. report --------------------------------------------------------------
check "report with no arguments"
gs report
expect_rc 2
expect_empty out
expect_first err 'gemmshim report: no A/B CSV or call log given'
expect_line err 'usage: gemmshim report [--csv] [--svg FILE] [--time-svg FILE] [--summary LOG]... [AB_CSV...]'

check "report --help"
gs report --help
expect_rc 0
expect_empty err
expect_first out 'usage: gemmshim report [--csv] [--svg FILE] [--time-svg FILE] [--summary LOG]... [AB_CSV...]'

check "report: a file that does not exist"
gs report "$W/no-such.csv"
expect_rc 2
grep -qE "^gemmshim[ -]report: $W/no-such.csv: cannot open: No such file or directory\$" "$T/err" ||
  bad "stderr does not say the file cannot be opened"

if [ -n "${GS_SRCDIR:-}" ] && [ -f "$GS_SRCDIR/tests/fixtures/report/ab_basic.csv" ]; then
  check "report: gemmshim-report's output"
  "$GS_BUILDDIR/tools/gemmshim-report" "$GS_SRCDIR/tests/fixtures/report/ab_basic.csv" >"$T/expected" 2>&1
  gs report "$GS_SRCDIR/tests/fixtures/report/ab_basic.csv"
  expect_rc 0
  expect_empty err
  [ -s "$T/expected" ] && cmp -s "$T/out" "$T/expected" || bad "stdout differs from gemmshim-report's"
fi

# ---- tune: through a stand-in bench (tests/cmd/fake-bench.sh) ---------------
FAKE_BENCH=$(cd -P "${GS_SRCDIR:-$GS_BUILDDIR/..}/tests/cmd" && pwd -P)/fake-bench.sh   # as gemmshim names it
export FAKE_BENCH_LOG=$T/bench-calls
TUNE_USAGE='usage: gemmshim [OPTIONS] tune [-o TABLE] [--shapes FILE] [--device N]'
VALIDATORS='Validator,gpu_name,Fake GPU
Validator,compute_capability,9.0
Validator,sm_count,132
Validator,cublas_version,13.1.0
Validator,shim_version,0.1.0
Validator,kernel_table,0123456789abcdef
Validator,driver_version,580.159.04
Validator,power_limit_w,700'
TABLE_HEADER='entry,a_type,b_type,c_type,compute,layout,epilogue,m,n,k,batch,align,route,time_us,ratio,lt_algo,launch'

check "tune --help"
gs tune --help
expect_rc 0
expect_first out "$TUNE_USAGE"

check "tune with nothing to tune"
gs tune --bench "$FAKE_BENCH"
expect_rc 2
expect_first err "gemmshim: tune: nothing to tune: give a log of calls (gemmshim record) or --shapes FILE"

check "tune: a bad shape file, before any measurement"
printf '4096 1 4096 TN bf16\n4096 1 4096 TN bf99\n' >bad-shapes.txt
rm -f "$FAKE_BENCH_LOG"
gs tune --bench "$FAKE_BENCH" --shapes bad-shapes.txt -o t.csv
expect_rc 2
grep -q "^gemmshim: tune: bad-shapes.txt:2: expected \"m n k layout dtype\"" "$T/err" ||
  bad "stderr does not name bad-shapes.txt:2"
[ ! -e "$FAKE_BENCH_LOG" ] || bad "the bench ran"
[ ! -e t.csv ] || bad "a table was written"

check "tune: bad option values"
gs tune --bench "$FAKE_BENCH" --shapes bad-shapes.txt --budget -3
expect_rc 2
expect_first err "gemmshim: tune: --budget: expected seconds above 0, got '-3'"
gs tune --bench "$FAKE_BENCH" --shapes bad-shapes.txt --iters 0
expect_rc 2
expect_first err "gemmshim: tune: --iters: expected a whole number from 1 to 100000, got '0'"

check "tune: a shape file into a table"
printf '# two weights\n4096 8 4096 TN bf16\n1024 8 4096 TN bf16\n4096 8 4096 NN bf16\n' >shapes.txt
rm -f "$FAKE_BENCH_LOG"
gs tune --bench "$FAKE_BENCH" --shapes shapes.txt -o routes.csv --iters 25 --preheat-ms 0
expect_rc 0
expect_line err "gemmshim: tune: 3 calls measured, 0 kept from the table, 0 without a row (not measured), 0 left; 1 row routed to our kernels"
expect_line err "gemmshim: tune: table $W/routes.csv, measurements $W/measurements-routes.csv"
expect_line err "gemmshim: tune: measured with cuBLAS 13.1.0 (/fake/libcublas.so.13); a program that loads another cuBLAS will not use this table (LD_LIBRARY_PATH chooses the bench's)"
printf '%s\n%s\n%s\n%s\n%s\n' "$VALIDATORS" "$TABLE_HEADER" \
  'gemm,bf16,bf16,bf16,32f,NN,-,4096,8,4096,1,16,cublas,10.01,1.0000,-,plain' \
  'gemm,bf16,bf16,bf16,32f,TN,-,1024,8,4096,1,16,cublas,10.01,1.0000,-,plain' \
  'gemm,bf16,bf16,bf16,32f,TN,-,4096,8,4096,1,16,kern_bf16,10.00,1.1000,-,pdl' >"$T/expected"
sed 1d routes.csv >"$T/got"
cmp -s "$T/got" "$T/expected" || bad "routes.csv (less its first, comment line) is not:
$(cat "$T/expected")
but:
$(cat routes.csv)"
# each call: identity, list, then per pass cuBLAS against itself and kern_bf16
[ "$(grep -c -- '--self' "$FAKE_BENCH_LOG")" = 6 ] || bad "not 6 self measurements: $(cat "$FAKE_BENCH_LOG")"
[ "$(grep -c -- '--kernel kern_bf16 --shapes' "$FAKE_BENCH_LOG")" = 11 ] ||
  bad "not 11 bench calls naming kern_bf16 (6 self, 5 measured: NN is outside, once)"
grep -q -- '--iters 25 --preheat-ms 0 --device 0' "$FAKE_BENCH_LOG" || bad "--iters/--preheat-ms not passed on"
[ "$(grep -c -- '--after-producer' "$FAKE_BENCH_LOG")" = "$(grep -c -- '--kernel' "$FAKE_BENCH_LOG")" ] ||
  bad "not every bench run of tune timed after a producer (--after-producer)"
[ "$(grep -c ',verdict,' measurements-routes.csv)" = 3 ] || bad "measurements-routes.csv has not 3 verdicts"
grep -q '^gemm,bf16,bf16,bf16,32f,NN,-,4096,8,4096,1,16,-,kern_bf16,1,outside,' measurements-routes.csv ||
  bad "measurements-routes.csv does not say NN is outside kern_bf16's class"

check "tune: the table is read by gemmshim run as any other"
gs run --table routes.csv -- true
expect_rc 0

check "tune: an existing table is not replaced without --resume"
cp routes.csv before.csv
gs tune --bench "$FAKE_BENCH" --shapes shapes.txt -o routes.csv
expect_rc 2
expect_line err "gemmshim: tune: $W/routes.csv exists: --resume to go on with it, or remove it"
cmp -s routes.csv before.csv || bad "routes.csv changed"

check "tune --resume: more calls, the table's rows kept"
printf '2048 1 4096 TN bf16\n' >>shapes.txt
rm -f "$FAKE_BENCH_LOG"
gs tune --bench "$FAKE_BENCH" --shapes shapes.txt -o routes.csv --resume --preheat-ms 0
expect_rc 0
expect_line err "gemmshim: tune: 1 call measured, 3 kept from the table, 0 without a row (not measured), 0 left; 1 row routed to our kernels"
[ "$(grep -c -- '--shapes' "$FAKE_BENCH_LOG")" = 4 ] || bad "the kept calls were measured again"
grep -qx 'gemm,bf16,bf16,bf16,32f,TN,-,2048,1,4096,1,16,cublas,10.01,1.0000,-,plain' routes.csv ||
  bad "routes.csv has no row for 2048x1x4096"
[ "$(grep -c ',verdict,' measurements-routes.csv)" = 4 ] || bad "measurements-routes.csv lost the first run's rows"

check "tune --resume: measurements of an older gemmshim are not appended to"
cp routes.csv old-routes.csv
sed 's/,workspace,/,/' measurements-routes.csv >measurements-old-routes.csv
cp measurements-old-routes.csv old-measurements.bak
gs tune --bench "$FAKE_BENCH" --shapes shapes.txt -o old-routes.csv --resume --preheat-ms 0
expect_rc 2
expect_line err "gemmshim: tune: --resume: $W/measurements-old-routes.csv has other columns than this gemmshim writes (an older one's?): move it away to go on"
cmp -s measurements-old-routes.csv old-measurements.bak || bad "the older measurements changed"
cmp -s old-routes.csv routes.csv || bad "the table resumed changed"

check "tune --resume under GEMMSHIM_PDL=0: rows measured with PDL are refused"
cp routes.csv pdl-routes.csv
cp measurements-routes.csv measurements-pdl-routes.csv
GEMMSHIM_PDL=0 gs tune --bench "$FAKE_BENCH" --shapes shapes.txt -o pdl-routes.csv --resume --preheat-ms 0
expect_rc 2
line=$(grep -n ',pdl$' pdl-routes.csv | head -1 | cut -d: -f1)
expect_line err "gemmshim: tune: --resume: $W/pdl-routes.csv:$line: measured with programmatic dependent launch, which GEMMSHIM_PDL=0 turns off here: tune into another file, or resume without GEMMSHIM_PDL=0"
cmp -s pdl-routes.csv routes.csv || bad "the table changed"

check "tune: a bench older than tune (its CSV without the column launch) is refused"
printf '4096 8 4096 TN bf16\n' >one-shape.txt
FAKE_BENCH_OLD=1 gs tune --bench "$FAKE_BENCH" --shapes one-shape.txt -o old-bench.csv --preheat-ms 0
expect_rc 2
expect_line err "gemmshim: tune: cuBLAS could not be measured on bf16 TN 4096x8x4096 (failed): the bench's CSV has no column launch: a gemmshim-bench older than this gemmshim (use the one built with it)"
[ ! -e old-bench.csv ] || bad "a table was written"

check "tune --resume: a table of an older tune (no column launch) is refused"
sed -e 's/,lt_algo,launch$/,lt_algo/' -e 's/,plain$//' -e 's/,pdl$//' routes.csv >older-routes.csv
cp older-routes.csv older-routes.bak
gs tune --bench "$FAKE_BENCH" --shapes shapes.txt -o older-routes.csv --resume --preheat-ms 0
expect_rc 2
line=$(grep -n ',lt_algo$' older-routes.csv | cut -d: -f1)
expect_line err "gemmshim: tune: --resume: $W/older-routes.csv:$line: written by an older gemmshim tune (no column launch: its rows do not say how their kernels launched): tune into another file"
cmp -s older-routes.csv older-routes.bak || bad "the older table changed"

check "tune: a recorded log, into this GPU's table in the cache folder"
gs record -o rec-tune.csv -- "$CALLER" 64 64 64 2 4096 8 4096 1
expect_rc 0
gs tune --bench "$FAKE_BENCH" --preheat-ms 0 rec-tune.csv
expect_rc 0
CACHED=$T/cache/gemmshim/routes-GPU-fake.csv
[ -f "$CACHED" ] || bad "no $CACHED"
[ -f "$T/cache/gemmshim/measurements-routes-GPU-fake.csv" ] || bad "no measurements beside it"
grep -qx 'gemm,f32,f32,f32,-,NN,-,64,64,64,1,16,cublas,10.01,1.0000,-,plain' "$CACHED" 2>/dev/null ||
  bad "the cached table has no row for the recorded 64^3 Sgemm"
expect_line err "gemmshim: tune: 2 calls measured, 0 kept from the table, 0 without a row (not measured), 0 left; 0 rows routed to our kernels"

check "tune --fp32-tc: the opt-in kernels are candidates too"
gs tune --bench "$FAKE_BENCH" --preheat-ms 0 --fp32-tc -o tc.csv rec-tune.csv
expect_rc 0
grep -qx 'gemm,f32,f32,f32,-,NN,-,64,64,64,1,16,kern_f32_tc,10.00,2.0000,-,plain' tc.csv ||
  bad "tc.csv does not route the 64^3 Sgemm to kern_f32_tc: $(grep '^gemm,f32' tc.csv)"
grep -q ',kern_f32_tc,' "$T/cache/gemmshim/measurements-routes-GPU-fake.csv" &&
  bad "kern_f32_tc was measured without --fp32-tc"

check "tune: cuBLASLt's own algorithms are candidates, each on its own"
printf '8192 8 8192 TN bf16\n4096 8 4096 NT bf16\n' >lt-shapes.txt
rm -f "$FAKE_BENCH_LOG"
genv FAKE_BENCH_LT=1 -- tune --bench "$FAKE_BENCH" --shapes lt-shapes.txt -o lt.csv --preheat-ms 0
expect_rc 0
ALGO2='id=2;tile=20;splitk=1;reduction=0;swizzle=1;custom=0;stages=12;inner=0;cluster=0;workspace=0'
grep -qx "gemm,bf16,bf16,bf16,32f,TN,-,8192,8,8192,1,16,cublaslt,10.00,1.0800,$ALGO2,plain" lt.csv ||
  bad "lt.csv does not route 8192x8x8192 to cuBLASLt's second algorithm: $(grep '^gemm' lt.csv)"
grep -qx 'gemm,bf16,bf16,bf16,32f,NT,-,4096,8,4096,1,16,cublas,10.01,1.0000,-,plain' lt.csv ||
  bad "lt.csv routes 4096x8x4096 NT, where no algorithm won: $(grep '^gemm' lt.csv)"
# per call, one bench run a pass lists and measures the algorithms; the
# second pass measures exactly the first pass's
[ "$(grep -c -- '--kernel cublaslt .*--dtype bf16 --lt-top 8' "$FAKE_BENCH_LOG")" = 2 ] ||
  bad "not 2 first-pass runs of the route cublaslt: $(grep cublaslt "$FAKE_BENCH_LOG")"
[ "$(grep -c -- '--kernel cublaslt .*--dtype bf16 --lt-algos ' "$FAKE_BENCH_LOG")" = 2 ] ||
  bad "not 2 second-pass runs with the first pass's algorithms"
[ "$(grep -c ',cublaslt#2,' measurements-lt.csv)" = 4 ] ||
  bad "measurements-lt.csv has not both passes of algorithm #2 for both calls"
grep -q "^gemm,bf16,bf16,bf16,32f,TN,-,8192,8,8192,1,16,-,cublaslt#2,2,measured,.*,$ALGO2\$" measurements-lt.csv ||
  bad "measurements-lt.csv does not name the algorithm it measured"
gs run --table lt.csv -- true
expect_rc 0

check "tune: a cuBLASLt call is measured as the program made it"
printf '4096 8 4096 TN bf16 lt 1048576 bias\n4096 8 2048 TN bf16 lt 0\n2048 8 4096 TN f32 lt 0 bias\n' >ltcall-shapes.txt
rm -f "$FAKE_BENCH_LOG" "$FAKE_BENCH_LOG.shapes"
genv FAKE_BENCH_LT=1 -- tune --bench "$FAKE_BENCH" --shapes ltcall-shapes.txt -o ltcall.csv --preheat-ms 0
expect_rc 0
grep -qx 'lt,bf16,bf16,bf16,32f,TN,bias,4096,8,4096,1,16,kern_bf16,10.00,1.1000,-,pdl' ltcall.csv ||
  bad "ltcall.csv does not route the cuBLASLt call with bias: $(grep '^lt' ltcall.csv)"
grep -qx 'lt,bf16,bf16,bf16,32f,TN,default,4096,8,2048,1,16,kern_bf16,10.00,1.1000,-,pdl' ltcall.csv ||
  bad "ltcall.csv has no row for the cuBLASLt call without an epilogue: $(grep '^lt' ltcall.csv)"
grep -qx 'lt,f32,f32,f32,32f,TN,bias,2048,8,4096,1,16,cublas,10.01,1.0000,-,plain' ltcall.csv ||
  bad "ltcall.csv has no row for the FP32 cuBLASLt call: $(grep '^lt' ltcall.csv)"
grep -q '^2048 8 4096 TN: --kernel kern_f32 .*--lt-call 0 --epilogue bias' "$FAKE_BENCH_LOG.shapes" ||
  bad "the FP32 cuBLASLt call's bench runs do not make it as a cuBLASLt call"
# every measurement of each call (cuBLAS against itself, each kernel, the
# route cublaslt in both passes) made that call with its own workspace and
# epilogue
S="$FAKE_BENCH_LOG.shapes"
[ "$(grep -c '^4096 8 4096 TN: ' "$S")" -ge 4 ] &&
  [ "$(grep -c '^4096 8 4096 TN: .*--lt-call 1048576 --epilogue bias' "$S")" = "$(grep -c '^4096 8 4096 TN: ' "$S")" ] &&
  [ "$(grep -c '^4096 8 2048 TN: ' "$S")" -ge 4 ] &&
  [ "$(grep -c '^4096 8 2048 TN: .*--lt-call 0 --epilogue default' "$S")" = "$(grep -c '^4096 8 2048 TN: ' "$S")" ] ||
  bad "not every bench run made its cuBLASLt call with that call's workspace and epilogue: $(cat "$S")"
grep -q '^lt,bf16,bf16,bf16,32f,TN,bias,4096,8,4096,1,16,1048576,kern_bf16,1,measured,' measurements-ltcall.csv ||
  bad "measurements-ltcall.csv does not give the workspace measured with"
grep -q '^entry,.*,align,workspace,candidate,' measurements-ltcall.csv ||
  bad "measurements-ltcall.csv's header has no workspace column"

check "tune: a cuBLASLt call made with two workspaces: cuBLAS with the most, the route within the least"
{
  echo '# gemmshim log v4'
  echo "${LOGHEAD},timed,median_us,est_total_us,captured,time_dropped,workspace"
  for ws in 33554432 1048576; do
    echo "7,cublasLtMatmul,bf16,bf16,bf16,32f,TN,bias,4096,8,4096,1,cublas,routing_off,3,0,lt,4096,4096,4096,4096,$TAIL16,-,-,-,-,-,$ws"
  done
} >lt-log.csv
rm -f "$FAKE_BENCH_LOG"
genv FAKE_BENCH_LT=1 -- tune --bench "$FAKE_BENCH" -o lt-log-table.csv --preheat-ms 0 lt-log.csv
expect_rc 0
grep -qx 'lt,bf16,bf16,bf16,32f,TN,bias,4096,8,4096,1,16,kern_bf16,10.00,1.1000,-,pdl' lt-log-table.csv ||
  bad "lt-log-table.csv has no row for the call: $(grep '^lt' lt-log-table.csv)"
[ "$(grep -c -- '--kernel ' "$FAKE_BENCH_LOG")" -gt 0 ] &&
  [ "$(grep -c -- '--lt-call 33554432 --epilogue bias --lt-route-workspace 1048576' "$FAKE_BENCH_LOG")" = \
    "$(grep -c -- '--kernel ' "$FAKE_BENCH_LOG")" ] ||
  bad "not every bench run made the call with the most workspace, the route within the least: $(cat "$FAKE_BENCH_LOG")"
grep -q '^lt,bf16,bf16,bf16,32f,TN,bias,4096,8,4096,1,16,1048576\.\.33554432,kern_bf16,1,measured,' measurements-lt-log-table.csv ||
  bad "measurements-lt-log-table.csv does not give the two workspaces"

check "tune: a strided-batched call: made as the program made it; cuBLASLt's algorithms take a batch"
printf '256 256 8192 NN bf16 batched 128\n256 64 256 NT f32 batched 128\n4096 8 4096 TN bf16 batched 1\n' >batched-shapes.txt
rm -f "$FAKE_BENCH_LOG" "$FAKE_BENCH_LOG.shapes"
genv FAKE_BENCH_LT=1 -- tune --bench "$FAKE_BENCH" --shapes batched-shapes.txt -o batched.csv --preheat-ms 0
expect_rc 0
grep -qx "gemm_batched,bf16,bf16,bf16,32f,NN,-,256,256,8192,128,16,cublaslt,10.00,1.0800,$ALGO2,plain" batched.csv ||
  bad "batched.csv does not route the batch of 128 to cuBLASLt's second algorithm: $(grep '^gemm' batched.csv)"
# one item through the batched entry: our kernels take it
grep -qx 'gemm_batched,bf16,bf16,bf16,32f,TN,-,4096,8,4096,1,16,kern_bf16,10.00,1.1000,-,pdl' batched.csv ||
  bad "batched.csv does not route the batched entry's single item to kern_bf16: $(grep '^gemm' batched.csv)"
grep -q 'not measured: gemm_batched f32 NT - 256x64x256 batch 128: no candidate takes a batch of FP32' "$T/err" ||
  bad "no reason given for the FP32 batch: $(cat "$T/err")"
grep -q 'tune \[1/2, .*\] bf16 NN 256x256x8192 batch 128: cublaslt at 1.080x' "$T/err" ||
  bad "the progress line does not name the batch: $(cat "$T/err")"
grep -q '^gemm_batched,f32' batched.csv && bad "the FP32 batch got a row"
# every bench run of a batched call made the strided-batched call, with its count
S="$FAKE_BENCH_LOG.shapes"
[ "$(grep -c '^256 256 8192 NN' "$S")" -ge 4 ] &&
  [ "$(grep -c '^256 256 8192 NN x128: ' "$S")" = "$(grep -c '^256 256 8192 NN' "$S")" ] &&
  [ "$(grep -c '^4096 8 4096 TN' "$S")" -ge 4 ] &&
  [ "$(grep -c '^4096 8 4096 TN x1: ' "$S")" = "$(grep -c '^4096 8 4096 TN' "$S")" ] ||
  bad "not every bench run of a batched call made it batched: $(cat "$S")"
printf '256 256 64 NN bf16 batched 0\n' >bad-batched-shapes.txt
gs tune --bench "$FAKE_BENCH" --shapes bad-batched-shapes.txt -o none.csv
expect_rc 2
grep -q '"batched N" (items 1 .. 2^31 - 1)' "$T/err" || bad "no message naming the batched form: $(cat "$T/err")"

check "tune: a bad cuBLASLt line in a shape file"
printf '4096 8 4096 TN bf16 lt -1\n' >bad-lt-shapes.txt
gs tune --bench "$FAKE_BENCH" --shapes bad-lt-shapes.txt -o none.csv
expect_rc 2
grep -q '^gemmshim: tune: bad-lt-shapes.txt:1: expected "m n k layout dtype" .*"lt WORKSPACE \[default|bias\]"' "$T/err" ||
  bad "no message naming the cuBLASLt form: $(cat "$T/err")"
[ ! -e none.csv ] || bad "a table was written"

check "tune: no GPU: a clear message, no table"
genv FAKE_BENCH_NO_GPU=1 -- tune --bench "$FAKE_BENCH" --shapes shapes.txt -o none.csv
expect_rc 2
expect_first err "gemmshim: tune: $FAKE_BENCH --identity: gemmshim-bench: no CUDA GPU (cudaGetDeviceCount: no CUDA-capable device is detected); nothing to measure"
[ ! -e none.csv ] || bad "a table was written"

check "tune: a bench that is not there"
gs tune --bench "$W/no-bench" --shapes shapes.txt -o none.csv
expect_rc 2
expect_first err "gemmshim: tune: --bench $W/no-bench: not an executable file"

# The real bench, where this machine has no GPU: the same clear message.
REAL_BENCH=$GS_BUILDDIR/tools/gemmshim-bench
if [ -x "$REAL_BENCH" ] && ! "$REAL_BENCH" --identity >/dev/null 2>&1; then
  check "tune: the real bench on a machine without a GPU"
  gs tune --bench "$REAL_BENCH" --shapes shapes.txt -o none.csv
  expect_rc 2
  grep -q "^gemmshim: tune: .*gemmshim-bench --identity: gemmshim-bench: no CUDA GPU" "$T/err" ||
    bad "stderr does not say there is no GPU"
  [ ! -e none.csv ] || bad "a table was written"
fi

[ $fail -eq 0 ] && echo "PASS: $checks checks of gemmshim (record, run, tune, report)"
exit $fail
