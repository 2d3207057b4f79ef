//! Embeds the built-in packs (`specs/<pack>/*.yaml`) into the binary, so that
//! `mcpspec run conformance` works from any directory; and the commit it was built from,
//! for `mcpspec --version` (the version itself is Cargo.toml's, the one source of truth).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // The manifest folder of this build, not of the build script's compilation (`env!`):
    // a build script compiled in another checkout (a copied `target/`) would embed that
    // checkout's packs.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo");
    let root = Path::new(&manifest_dir).join("specs");
    println!("cargo:rerun-if-changed=specs");
    let mut files = Vec::new();
    if let Ok(packs) = std::fs::read_dir(&root) {
        for pack in packs.flatten() {
            let dir = pack.path();
            if !dir.is_dir() {
                continue;
            }
            println!("cargo:rerun-if-changed={}", dir.display());
            collect(&dir, &root, &mut files);
        }
    }
    files.sort();
    let mut out = String::from(
        "/// Built-in pack files: (path under `specs/`, contents).\npub static BUILTIN_FILES: &[(&str, &str)] = &[\n",
    );
    for (rel, abs) in &files {
        writeln!(out, "    ({rel:?}, include_str!({abs:?})),").unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("builtin_packs.rs");
    std::fs::write(dest, out).unwrap();
    commit(Path::new(&manifest_dir));
    platform_cfg();
}

/// `MCPSPEC_COMMIT`: `$MCPSPEC_COMMIT` when set (a build from a source archive or a
/// container context without `.git`), else `git rev-parse --short=12 HEAD`, else `unknown`.
/// Re-run when HEAD moves (the HEAD file and the branch it names), not on every build.
fn commit(dir: &Path) {
    println!("cargo:rerun-if-env-changed=MCPSPEC_COMMIT");
    let git = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (out.status.success() && !text.is_empty()).then_some(text)
    };
    let commit = match std::env::var("MCPSPEC_COMMIT") {
        Ok(c) if !c.trim().is_empty() => c.trim().to_string(),
        _ => {
            // The files whose change means a new HEAD (a worktree keeps its HEAD apart
            // from the shared refs).
            if let (Some(git_dir), Some(common)) = (
                git(&["rev-parse", "--absolute-git-dir"]),
                git(&["rev-parse", "--path-format=absolute", "--git-common-dir"]),
            ) {
                // Only files that exist: a missing one would re-run this script every build.
                let mut watch = vec![format!("{git_dir}/HEAD"), format!("{common}/packed-refs")];
                if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
                    watch.push(format!("{common}/{branch}"));
                }
                for path in watch.iter().filter(|p| Path::new(p).exists()) {
                    println!("cargo:rerun-if-changed={path}");
                }
            }
            git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into())
        }
    };
    println!("cargo:rustc-env=MCPSPEC_COMMIT={commit}");
}

fn collect(dir: &Path, root: &Path, files: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(&path, root, files);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            println!("cargo:rerun-if-changed={}", path.display());
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            files.push((rel, path.to_string_lossy().into_owned()));
        }
    }
}

/// `cfg(mcpspec_linux)`: the Linux-only process handling of `src/platform` (pidfds, the
/// child subreaper, `/proc`). Off elsewhere, and on Linux when built portable
/// (`MCPSPEC_PORTABLE=1`, or `--cfg mcpspec_portable` in RUSTFLAGS), which runs the
/// macOS/BSD fallback here. An environment variable rather than RUSTFLAGS alone: it
/// rebuilds only this package, not every dependency.
fn platform_cfg() {
    println!("cargo:rustc-check-cfg=cfg(mcpspec_linux)");
    println!("cargo:rustc-check-cfg=cfg(mcpspec_portable)");
    println!("cargo:rerun-if-env-changed=MCPSPEC_PORTABLE");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    let portable = std::env::var("MCPSPEC_PORTABLE").is_ok_and(|v| !v.is_empty() && v != "0")
        || std::env::var_os("CARGO_CFG_MCPSPEC_PORTABLE").is_some();
    if linux && !portable {
        println!("cargo:rustc-cfg=mcpspec_linux");
    }
}
