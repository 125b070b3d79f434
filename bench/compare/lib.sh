# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# bench/compare/lib.sh: what run.sh and echo.sh share, sourced by both (it
# runs nothing by itself): the Debian packages each peer needs and their
# check, build_step, and the builds of the Go and Rust peers.
#
# Sourcing it sets the shell options both scripts run with, HERE
# (bench/compare) and ROOT (the repository). The sourcing script sets,
# before calling any function here:
#   PROG     its name, for messages          BUILD   the build directory
#   BIN      where programs go
#   LOG      the build log                   INSTALL 1: apt-get may install
#   GO, CARGO  the toolchains                SKIP    an associative array,
#                                                    peer -> why it cannot run

set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

# Debian packages the peers need, by what they provide. run.sh extends the
# C peers' list with bench/compare/c/packages.txt when that file exists.
PKGS_BASE="make python3 gnuplot-nox"
PKGS_C="gcc g++ clang libomp-dev libtbb-dev libssl-dev"
PKGS_GO="golang-go"
PKGS_JAVA="openjdk-17-jdk-headless"
PKGS_RUST="librust-rayon-dev librust-sha1-dev"   # cargo + rustc added if no cargo
PKGS_TOKIO="librust-tokio-dev librust-libc-dev"  # the same
PKGS_UV="libuv1-dev"                             # echo.sh's libuv server

note() { echo "$PROG: $*" >&2; }
die() { note "$*"; exit 2; }

# common_option ARGS...: the options both scripts take, with one meaning:
# --out, --build-dir, --no-install, --no-build (BUILD_PEERS=0), -h/--help;
# anything else is an unknown option. Returns how many words it used, for
# the caller's option loop: *) common_option "$@"; shift $(($? - 1)) ;;
common_option() {
    case "$1" in
    --out) OUT="${2:?}"; return 2 ;;
    --build-dir) BUILD="${2:?}"; return 2 ;;
    --no-install) INSTALL=0; return 1 ;;
    --no-build) BUILD_PEERS=0; return 1 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
    esac
}

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# install_missing PKG...: installs the packages that are not installed yet
# (as root, unless INSTALL=0); otherwise says how to.
install_missing() {
    local missing="" p
    command -v dpkg-query >/dev/null 2>&1 || { note "no dpkg: not checking packages"; return; }
    for p in "$@"; do have_pkg "$p" || missing="$missing $p"; done
    [ -z "$missing" ] && return
    if [ "$INSTALL" = 1 ] && [ "$(id -u)" = 0 ]; then
        note "installing:$missing"
        { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing; } \
            >>"$LOG" 2>&1 || note "apt-get failed (see $LOG); peers that need$missing will be skipped"
    else
        note "missing Debian packages:$missing"
        note "install them with: sudo apt-get update && sudo apt-get install$missing"
    fi
}

# build_step NAME CMD...: runs CMD with output in build.log; on failure prints
# the tail and returns 1.
build_step() {
    local name="$1"; shift
    echo "== build $name: $*" >>"$LOG"
    if "$@" >>"$LOG" 2>&1; then
        note "built $name"
        return 0
    fi
    note "BUILD FAILED: $name (last lines of $LOG follow)"
    tail -n 15 "$LOG" | sed 's/^/    /' >&2
    return 1
}

# The Go peer, bench/compare/go, as $BIN/go (workloads, and `go echo`).
build_go() {
    command -v "$GO" >/dev/null 2>&1 || { SKIP[go]="no go toolchain (apt-get install golang-go)"; return; }
    # A private cache keeps the build independent of HOME; GOPROXY=off makes
    # sure nothing is fetched (the module has no dependencies).
    build_step go env GOCACHE="${GOCACHE:-$BUILD/go-cache}" GOPROXY=off GOFLAGS=-buildvcs=false \
        GOTOOLCHAIN=local sh -c "cd '$HERE/go' && '$GO' build -trimpath -o '$BIN/go' ." \
        || SKIP[go]="build failed (see build.log)"
}

# build_cargo PEER DIR "CRATES" "PACKAGES" "BINARIES": builds the crate in
# bench/compare/DIR offline against Debian's crates and copies BINARIES
# into $BIN. It builds a copy, $BUILD/DIR-src, so the source tree gets no
# Cargo.lock; the copy's .cargo/config.toml points crates-io at Debian's
# crate directory.
build_cargo() {
    local peer="$1" dir="$2" crates="$3" pkgs="$4" bins="$5" crate b
    command -v "$CARGO" >/dev/null 2>&1 || { SKIP[$peer]="no cargo (apt-get install cargo rustc)"; return; }
    for crate in $crates; do
        compgen -G "/usr/share/cargo/registry/$crate-[0-9]*" >/dev/null \
            || { SKIP[$peer]="no $crate crate in /usr/share/cargo/registry (apt-get install $pkgs)"; return; }
    done
    local src="$BUILD/$dir-src"
    rm -rf "$src" && mkdir -p "$src" && cp -r "$HERE/$dir/Cargo.toml" "$HERE/$dir/src" "$HERE/$dir/.cargo" "$src/"
    for b in $bins; do rm -f "${BIN:?}/$b"; done
    if build_step "$peer" env CARGO_HOME="${CARGO_HOME:-$BUILD/cargo-home}" sh -c \
        "cd '$src' && '$CARGO' build --release --offline --target-dir '$BUILD/$dir-target'"; then
        for b in $bins; do cp "$BUILD/$dir-target/release/$b" "$BIN/$b"; done
    else
        SKIP[$peer]="build failed (see build.log)"
    fi
}

# The Tokio crate: the tokio peer's workloads and echo.sh's tokio-echo.
build_tokio() { build_cargo tokio tokio "tokio libc" "$PKGS_TOKIO" "tokio tokio-echo"; }
