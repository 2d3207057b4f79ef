//! Embeds the built-in packs (`specs/<pack>/*.yaml`) into the binary, so that
//! `mcpspec run conformance` works from any directory.

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
