#!/bin/sh
# Installs ask-user @VERSION@ from a release archive: picks this machine's archive
# (ask-user-<target>.tar.xz, as cargo-dist names them), checks it against its .sha256, and puts
# the `ask-user` binary in $ASK_USER_INSTALL_DIR (default ~/.local/bin). No Rust toolchain.
#
# Where the archives are: $ASK_USER_DOWNLOAD_URL (a URL or a directory), else the directory this
# script is in (scripts/dist writes them side by side). Needs sh, tar with xz, sha256sum or
# shasum, and curl or wget for a URL.
set -eu

say() { printf 'ask-user installer: %s\n' "$1" >&2; }
fail() { say "$1"; exit 1; }

case "$(uname -s)-$(uname -m)" in
    Linux-x86_64 | Linux-amd64) target=x86_64-unknown-linux-gnu ;;
    Linux-aarch64 | Linux-arm64) target=aarch64-unknown-linux-gnu ;;
    Darwin-x86_64) target=x86_64-apple-darwin ;;
    Darwin-arm64) target=aarch64-apple-darwin ;;
    *) fail "no ask-user build for $(uname -s) $(uname -m)" ;;
esac
archive="ask-user-$target.tar.xz"

source="${ASK_USER_DOWNLOAD_URL:-$(cd "$(dirname "$0")" && pwd)}"
install_dir="${ASK_USER_INSTALL_DIR:-$HOME/.local/bin}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT INT TERM

fetch() {
    case "$source" in
        http://* | https://*)
            if command -v curl >/dev/null 2>&1; then
                curl --proto '=https,http' -fsSL "$source/$1" -o "$work/$1"
            elif command -v wget >/dev/null 2>&1; then
                wget -q "$source/$1" -O "$work/$1"
            else
                fail "needs curl or wget to download $source/$1"
            fi ;;
        *) cp "$source/$1" "$work/$1" ;;
    esac || fail "cannot get $1 from $source"
}

fetch "$archive"
fetch "$archive.sha256"
expected="$(cut -d ' ' -f 1 < "$work/$archive.sha256")"
if command -v sha256sum >/dev/null 2>&1; then
    actual="$(sha256sum "$work/$archive" | cut -d ' ' -f 1)"
else
    actual="$(shasum -a 256 "$work/$archive" | cut -d ' ' -f 1)"
fi
[ "$expected" = "$actual" ] || fail "$archive does not match its checksum ($actual, expected $expected)"

tar -C "$work" -xJf "$work/$archive"
mkdir -p "$install_dir"
# A new file moved over the old one: a running ask-user keeps its own copy.
cp "$work/ask-user-$target/ask-user" "$install_dir/.ask-user.new"
chmod 755 "$install_dir/.ask-user.new"
mv -f "$install_dir/.ask-user.new" "$install_dir/ask-user"
say "installed $install_dir/ask-user ($("$install_dir/ask-user" --version))"
case ":$PATH:" in
    *":$install_dir:"*) ;;
    *) say "add $install_dir to PATH, e.g. in ~/.profile: export PATH=\"$install_dir:\$PATH\"" ;;
esac
