#!/usr/bin/env python3
"""The npm packages of ask-user, laid out for `npm pack` (scripts/dist).

- `ask-user`: the launcher (packaging/npm/ask-user/bin/ask-user.js) whose optionalDependencies
  name one package per target of dist-workspace.toml, at the same version;
- `@ask-user/<os>-<cpu>`: the binary for one platform, with the `os`, `cpu` (and `libc`)
  fields npm reads to install only the package that fits. Only the targets in --built are laid
  out here (their binary is --binary); the others are declared for the release pipeline.

`--list` prints the declared targets and their npm platform, one a line.
"""

import argparse
import json
import os
import shutil
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Rust target triple -> (npm `os`, npm `cpu`, npm `libc` or None, binary name).
PLATFORMS = {
    "x86_64-unknown-linux-gnu": ("linux", "x64", "glibc", "ask-user"),
    "aarch64-unknown-linux-gnu": ("linux", "arm64", "glibc", "ask-user"),
    "x86_64-apple-darwin": ("darwin", "x64", None, "ask-user"),
    "aarch64-apple-darwin": ("darwin", "arm64", None, "ask-user"),
    "x86_64-pc-windows-msvc": ("win32", "x64", None, "ask-user.exe"),
}

DESCRIPTION = "Ask the human a question from any agent: the ask-user CLI and MCP server."


def platform_package(triple: str) -> str:
    os_name, cpu, _, _ = PLATFORMS[triple]
    return f"@ask-user/{os_name}-{cpu}"


def targets(path: Path) -> list[str]:
    with open(path, "rb") as f:
        declared = tomllib.load(f)["dist"]["targets"]
    unknown = [t for t in declared if t not in PLATFORMS]
    if unknown:
        raise SystemExit(f"packages.py: no npm platform for {unknown}: add it to PLATFORMS")
    return declared


def write_json(path: Path, value: dict) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n")


def common(version: str) -> dict:
    return {"version": version, "description": DESCRIPTION, "license": "MIT"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--targets", type=Path, required=True)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--version")
    parser.add_argument("--work", type=Path)
    parser.add_argument("--binary", type=Path)
    parser.add_argument("--built", action="append", default=[])
    args = parser.parse_args()
    declared = targets(args.targets)
    if args.list:
        for triple in declared:
            print(f"{triple} ({platform_package(triple)})")
        return

    launcher = args.work / "ask-user"
    (launcher / "bin").mkdir(parents=True)
    shutil.copy(ROOT / "packaging/npm/ask-user/bin/ask-user.js", launcher / "bin/ask-user.js")
    os.chmod(launcher / "bin/ask-user.js", 0o755)
    write_json(
        launcher / "package.json",
        {
            "name": "ask-user",
            **common(args.version),
            "bin": {"ask-user": "bin/ask-user.js"},
            "files": ["bin/ask-user.js", "README.md", "LICENSE"],
            "engines": {"node": ">=18"},
            "optionalDependencies": {platform_package(t): args.version for t in declared},
        },
    )

    for triple in args.built:
        os_name, cpu, libc, exe = PLATFORMS[triple]
        package = args.work / f"{os_name}-{cpu}"
        (package / "bin").mkdir(parents=True)
        shutil.copy(args.binary, package / "bin" / exe)
        os.chmod(package / "bin" / exe, 0o755)
        manifest = {
            "name": platform_package(triple),
            **common(args.version),
            "os": [os_name],
            "cpu": [cpu],
            "files": [f"bin/{exe}", "README.md", "LICENSE"],
            "preferUnplugged": True,
        }
        if libc:
            manifest["libc"] = [libc]
        write_json(package / "package.json", manifest)

    for package in args.work.iterdir():
        shutil.copy(ROOT / "packaging/README.md", package / "README.md")
        shutil.copy(ROOT / "LICENSE", package / "LICENSE")


if __name__ == "__main__":
    main()
