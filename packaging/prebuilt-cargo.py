#!/usr/bin/env python3
"""Stands in for cargo while maturin packages a binary that is already built.

maturin (`bindings = "bin"`) runs `$CARGO rustc … --message-format json… --bin NAME` and puts
the executable that cargo's `compiler-artifact` message names into the wheel. With `CARGO`
pointing here, that build step answers with the binary in $PREBUILT_BINARY instead of
compiling (scripts/dist builds it once, with cargo-zigbuild for glibc 2.17, and packages the
same file for npm, PyPI and the archives). Every other cargo command (`cargo metadata`) runs
the real cargo, $PREBUILT_REAL_CARGO.
"""

import json
import os
import subprocess
import sys


def main() -> None:
    real = os.environ["PREBUILT_REAL_CARGO"]
    args = sys.argv[1:]
    if not args or args[0] not in ("rustc", "build"):
        os.execv(real, [real, *args])
    binary = os.path.abspath(os.environ["PREBUILT_BINARY"])
    manifest = os.path.realpath(args[args.index("--manifest-path") + 1])
    name = args[args.index("--bin") + 1]
    metadata = json.loads(
        subprocess.run(
            [real, "metadata", "--format-version", "1", "--no-deps", "--manifest-path", manifest],
            check=True,
            stdout=subprocess.PIPE,
        ).stdout
    )
    package = next(p for p in metadata["packages"] if p["manifest_path"] == manifest)
    target = next(t for t in package["targets"] if t["name"] == name and "bin" in t["kind"])
    artifact = {
        "reason": "compiler-artifact",
        "package_id": package["id"],
        "manifest_path": manifest,
        "target": {key: target[key] for key in ("kind", "crate_types", "name", "src_path", "edition", "doc", "doctest", "test")},
        "profile": {"opt_level": "3", "debuginfo": 0, "debug_assertions": False, "overflow_checks": False, "test": False},
        "features": [],
        "filenames": [binary],
        "executable": binary,
        "fresh": True,
    }
    print(json.dumps(artifact))
    print(json.dumps({"reason": "build-finished", "success": True}))


if __name__ == "__main__":
    main()
