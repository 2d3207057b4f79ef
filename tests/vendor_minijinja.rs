//! The vendored minijinja is the crates.io release plus exactly the patches in
//! `vendor/minijinja/patches/` (vendor/minijinja/PATCHED.md): undoing them, in reverse
//! order, gives back every file of the release byte for byte (`patches/ORIGINAL.sha256`,
//! the sha256 of each file of `minijinja-3.1.0.crate`, less the two files of cargo's own
//! packaging metadata that the vendored copy leaves out). A change to the vendored copy
//! that is not in a patch file fails here, and so does a patch file that is not what the
//! copy holds: the patches stay ready to send upstream.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

const VENDORED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/vendor/minijinja");
/// mcpspec's own files in the vendored folder, not the release's.
const OURS: &[&str] = &["PATCHED.md", "patches"];
/// Every change is marked in the source, so a reader of the vendored copy sees it.
const MARKER: &str = "mcpspec patch";

fn patches() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(Path::new(VENDORED).join("patches"))
        .expect("vendor/minijinja/patches")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "patch"))
        .collect();
    found.sort();
    found
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if from == Path::new(VENDORED) && OURS.iter().any(|o| name == *o) {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn digests(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            digests(root, &path, out);
        } else {
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let sum = Sha256::digest(std::fs::read(&path).unwrap());
            let hex: String = sum.iter().map(|b| format!("{b:02x}")).collect();
            out.insert(format!("./{rel}"), hex);
        }
    }
}

#[test]
fn the_vendored_copy_is_the_release_plus_its_patch_files() {
    let patches = patches();
    assert_eq!(
        patches.len(),
        2,
        "PATCHED.md names two patches: {patches:?}"
    );
    for patch in &patches {
        let text = std::fs::read_to_string(patch).unwrap();
        let marked = text
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .any(|l| l.contains(MARKER));
        assert!(marked, "{} adds no line saying `{MARKER}`", patch.display());
    }

    let work = tempfile::tempdir().unwrap();
    let tree = work.path().join("minijinja");
    copy_tree(Path::new(VENDORED), &tree);
    for patch in patches.iter().rev() {
        let out = Command::new("git")
            .args(["apply", "--reverse", "--whitespace=nowarn"])
            .arg(patch)
            .current_dir(&tree)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "{} does not undo cleanly on the vendored copy (it is not what the copy holds): {}",
            patch.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let mut got = BTreeMap::new();
    digests(&tree, &tree, &mut got);
    let manifest = std::fs::read_to_string(Path::new(VENDORED).join("patches/ORIGINAL.sha256"))
        .expect("patches/ORIGINAL.sha256");
    let want: BTreeMap<String, String> = manifest
        .lines()
        .filter_map(|l| l.split_once("  "))
        .map(|(sum, path)| (path.to_string(), sum.to_string()))
        .collect();
    assert!(want.len() > 40, "the manifest lists the release's files");
    let differ: std::collections::BTreeSet<&String> = want
        .keys()
        .chain(got.keys())
        .filter(|k| want.get(*k) != got.get(*k))
        .collect();
    assert!(
        differ.is_empty(),
        "with its patches undone, the vendored copy differs from minijinja 3.1.0 in: {differ:?} \
         (a change outside vendor/minijinja/patches/*.patch)"
    );
}
