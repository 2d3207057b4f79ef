#!/usr/bin/env python3
"""Package an already-built mcpspec binary for the package managers: a Python wheel, the
npm packages, a release archive with its sha256. Standard library only, no compiler: the
release workflow runs it on each platform's release binary and the test suite runs it on
the binary `cargo test` built (tests/packaging.rs), so both take the one same path.

    package.py wheel   --binary PATH --target TRIPLE [--out DIR] [--tag TAG]
    package.py npm     --binary PATH --target TRIPLE [--out DIR]   (both package tarballs)
    package.py archive --binary PATH --target TRIPLE [--out DIR]
    package.py version --binary PATH
    package.py repository

The version is the binary's own (`mcpspec --version` prints Cargo.toml's version and the
commit), the repository Cargo.toml's `repository`: Cargo.toml is the one source of truth,
nothing here repeats it. Each command prints the paths it wrote, one a line.

The binary's own file mode does not matter: every package sets the executable bit in the
package itself (wheel and zip entries, tar headers), so a binary that came back from a CI
artifact as mode 644 packages the same as the one the build wrote.
"""

import argparse
import base64
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAME = "mcpspec"
SUMMARY = "Declarative YAML test engine for MCP servers: scenarios, both protocol eras, JUnit reports"
LICENSE = "Apache-2.0"
NPM_SCOPE = "@mcpspec"

# The release targets: one row per platform, the one table every package format reads.
# Linux binaries are statically linked (scripts/build-static), so one wheel serves glibc
# (manylinux) and musl (musllinux) systems alike.
TARGETS = {
    "x86_64-unknown-linux-gnu": {
        "wheel": "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64",
        "os": "linux", "cpu": "x64", "archive": "tar.gz",
    },
    "aarch64-unknown-linux-gnu": {
        "wheel": "manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64",
        "os": "linux", "cpu": "arm64", "archive": "tar.gz",
    },
    "x86_64-apple-darwin": {
        "wheel": "macosx_10_12_x86_64", "os": "darwin", "cpu": "x64", "archive": "tar.gz",
    },
    "aarch64-apple-darwin": {
        "wheel": "macosx_11_0_arm64", "os": "darwin", "cpu": "arm64", "archive": "tar.gz",
    },
    "x86_64-pc-windows-msvc": {
        "wheel": "win_amd64", "os": "win32", "cpu": "x64", "archive": "zip",
    },
}


def fail(msg):
    sys.exit(f"package.py: {msg}")


def repository():
    """`repository` of Cargo.toml's [package]: the project's address (`https://github.com/O/N`)."""
    text = (ROOT / "Cargo.toml").read_text()
    package = re.search(r"^\[package\]\n(.*?)(?=^\[)", text, re.M | re.S)
    m = package and re.search(r'^repository\s*=\s*"(https://github\.com/[^/"]+/[^/"]+)"\s*$', package.group(1), re.M)
    if not m:
        fail("Cargo.toml's [package] has no `repository = \"https://github.com/<owner>/<name>\"`")
    return m.group(1)


def version_of(binary):
    """(version, commit) from `BINARY --version`: `mcpspec X.Y.Z (commit 1a2b3c4d5e6f)`.
    A binary without its executable bit (a downloaded CI artifact) runs from a copy."""
    if os.name != "nt" and not os.access(binary, os.X_OK):
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "mcpspec"
            shutil.copyfile(binary, copy)
            copy.chmod(0o755)
            return version_of(copy)
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True).stdout
    m = re.fullmatch(r"mcpspec (\S+) \(commit (\S+)\)\s*", out)
    if not m:
        fail(f"{binary} --version printed {out!r}, not `mcpspec VERSION (commit COMMIT)`")
    return m.group(1), m.group(2)


def exe_name(target):
    return NAME + (".exe" if TARGETS[target]["os"] == "win32" else "")


def schemas():
    """The JSON Schemas of the files mcpspec reads (editors validate with them)."""
    return sorted((ROOT / "schema").glob("*.schema.json"))


def readme_text():
    return (ROOT / "packaging" / "README.md").read_text()


def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def zip_write(zf, name, data, mode=0o644):
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = (stat.S_IFREG | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


def wheel(args):
    """A wheel with no Python code: the binary under `.data/scripts/` (pip, pipx and uv put
    it on PATH as it is, the way maturin's `bin` wheels do) and the schemas under
    `.data/data/share/mcpspec/schema/`."""
    version, _ = version_of(args.binary)
    tag = args.tag or TARGETS[args.target]["wheel"]
    dist = f"{NAME}-{version}"
    files = [
        (f"{dist}.data/scripts/{exe_name(args.target)}", Path(args.binary).read_bytes(), 0o755),
    ]
    for schema in schemas():
        files.append((f"{dist}.data/data/share/{NAME}/schema/{schema.name}", schema.read_bytes(), 0o644))
    metadata = (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\nVersion: {version}\nSummary: {SUMMARY}\n"
        f"License: {LICENSE}\nHome-page: {repository()}\n"
        "Requires-Python: >=3.7\n"
        "Description-Content-Type: text/markdown\n\n" + readme_text()
    )
    wheel_file = (
        "Wheel-Version: 1.0\nGenerator: mcpspec packaging/package.py\nRoot-Is-Purelib: false\n"
        + "".join(f"Tag: py3-none-{t}\n" for t in tag.split("."))
    )
    files.append((f"{dist}.dist-info/METADATA", metadata.encode(), 0o644))
    files.append((f"{dist}.dist-info/WHEEL", wheel_file.encode(), 0o644))
    record = "".join(f"{n},{record_hash(d)},{len(d)}\n" for n, d, _ in files)
    record += f"{dist}.dist-info/RECORD,,\n"
    files.append((f"{dist}.dist-info/RECORD", record.encode(), 0o644))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{dist}-py3-none-{tag}.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data, mode in files:
            zip_write(zf, name, data, mode)
    print(path)


def npm_platform_name(target):
    t = TARGETS[target]
    return f"{NPM_SCOPE}/{t['os']}-{t['cpu']}"


def npm_tarball(path, files):
    """An npm package tarball as `npm pack` writes it: every file under `package/`, gzip.
    The modes are the ones given here, whatever the files' modes on disk."""
    with open(path, "wb") as raw:
        # mtime 0 in the gzip header and the tar headers: the same input, the same bytes.
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tf:
                for name, data, mode in files:
                    info = tarfile.TarInfo(f"package/{name}")
                    info.size, info.mode, info.mtime = len(data), mode, 499162500
                    tf.addfile(info, io.BytesIO(data))


def npm(args):
    """The esbuild/biome pattern: a wrapper package `mcpspec` whose `bin` is a small Node
    launcher, and one package per os/cpu holding the binary, listed as the wrapper's
    optionalDependencies so npm installs only the one whose `os`/`cpu` match. No install
    script, no download at install time.

    Written as the tarballs `npm publish` takes (`mcpspec-VERSION.tgz`,
    `mcpspec-OS-CPU-VERSION.tgz`), not as folders: the binary's executable bit is in the
    tarball's header, so it survives a CI artifact (which drops file modes) on its way to
    the publishing job. A folder packed there would publish a binary `npx` cannot run."""
    version, _ = version_of(args.binary)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t = TARGETS[args.target]
    home = repository()
    common = {
        "version": version,
        "description": SUMMARY,
        "license": LICENSE,
        "homepage": home,
        "repository": {"type": "git", "url": f"git+{home}.git"},
    }
    # The platform package: the binary alone.
    platform_pkg = {
        "name": npm_platform_name(args.target),
        **common,
        "description": f"The mcpspec binary for {t['os']} {t['cpu']} (installed by the `mcpspec` package)",
        "os": [t["os"]],
        "cpu": [t["cpu"]],
        "files": ["bin/"],
        "preferUnplugged": True,
    }
    platform_files = [
        ("package.json", (json.dumps(platform_pkg, indent=2) + "\n").encode(), 0o644),
        ("README.md", f"The `mcpspec` binary for {t['os']} {t['cpu']}. Install `mcpspec`, not this package.\n".encode(), 0o644),
        (f"bin/{exe_name(args.target)}", Path(args.binary).read_bytes(), 0o755),
    ]
    # The wrapper: every platform package as an optional dependency, pinned to this version.
    wrapper_pkg = {
        "name": NAME,
        **common,
        "bin": {NAME: "bin/mcpspec.js"},
        "files": ["bin/", "schema/"],
        "engines": {"node": ">=18"},
        "optionalDependencies": {npm_platform_name(tr): version for tr in TARGETS},
    }
    wrapper_files = [
        ("package.json", (json.dumps(wrapper_pkg, indent=2) + "\n").encode(), 0o644),
        ("README.md", readme_text().encode(), 0o644),
        ("bin/mcpspec.js", (ROOT / "packaging" / "npm" / "mcpspec.js").read_bytes(), 0o755),
    ]
    wrapper_files += [(f"schema/{s.name}", s.read_bytes(), 0o644) for s in schemas()]
    wrapper = out / f"{NAME}-{version}.tgz"
    platform = out / f"{NAME}-{t['os']}-{t['cpu']}-{version}.tgz"
    npm_tarball(wrapper, wrapper_files)
    npm_tarball(platform, platform_files)
    print(wrapper)
    print(platform)


def archive(args):
    """`mcpspec-VERSION-TARGET.tar.gz` (`.zip` on Windows) holding `mcpspec-VERSION-TARGET/`
    with the binary and the schemas, and `ARCHIVE.sha256` in `sha256sum` format."""
    version, _ = version_of(args.binary)
    t = TARGETS[args.target]
    stem = f"{NAME}-{version}-{args.target}"
    entries = [(f"{stem}/{exe_name(args.target)}", Path(args.binary).read_bytes(), 0o755)]
    entries += [(f"{stem}/schema/{s.name}", s.read_bytes(), 0o644) for s in schemas()]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{stem}.{t['archive']}"
    if t["archive"] == "zip":
        with zipfile.ZipFile(path, "w") as zf:
            for name, data, mode in entries:
                zip_write(zf, name, data, mode)
    else:
        with tarfile.open(path, "w:gz") as tf:
            for name, data, mode in entries:
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), mode, 1577836800
                tf.addfile(info, io.BytesIO(data))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    sums = path.with_name(path.name + ".sha256")
    sums.write_text(f"{digest}  {path.name}\n")
    print(path)
    print(sums)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name, fn in (("wheel", wheel), ("npm", npm), ("archive", archive)):
        s = sub.add_parser(name)
        s.add_argument("--binary", required=True)
        s.add_argument("--target", required=True, choices=sorted(TARGETS))
        s.add_argument("--out", default="dist")
        if name == "wheel":
            s.add_argument("--tag", help="platform tag instead of the target's (a local test wheel)")
        s.set_defaults(fn=fn)
    s = sub.add_parser("version")
    s.add_argument("--binary", required=True)
    s.set_defaults(fn=lambda a: print(version_of(a.binary)[0]))
    s = sub.add_parser("repository", help="Cargo.toml's `repository` (https://github.com/<owner>/<name>)")
    s.set_defaults(fn=lambda a: print(repository()))
    args = p.parse_args()
    if getattr(args, "binary", None) and not Path(args.binary).is_file():
        fail(f"{args.binary}: no such file")
    args.fn(args)


if __name__ == "__main__":
    main()
