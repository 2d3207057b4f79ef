//! Discovery: which scenario files and pack folders the paths on the command line name.
//! Reading and compiling them is [`super::compile`]'s, resolving packs [`super::pack`]'s.

use std::path::{Path, PathBuf};

use super::error::LoadError;

/// The file that makes a folder a pack.
pub const MANIFEST: &str = "pack.yaml";

/// The pack folder a path names: a folder holding `pack.yaml`, or that file itself.
pub(super) fn pack_dir(path: &Path) -> Option<PathBuf> {
    if path.is_dir() && path.join(MANIFEST).is_file() {
        return Some(path.to_path_buf());
    }
    let is_manifest = path.file_name().is_some_and(|n| n == MANIFEST) && path.is_file();
    is_manifest.then(|| match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    })
}

/// Scenario files of a path, and the pack folders found inside it (run as packs).
pub(super) fn scenario_files(path: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), LoadError> {
    let display = path.display().to_string();
    let meta = std::fs::metadata(path)
        .map_err(|e| LoadError::file(&display, format!("cannot read: {e}")))?;
    if meta.is_file() {
        return Ok((vec![path.to_path_buf()], Vec::new()));
    }
    let mut out = Vec::new();
    let mut packs = Vec::new();
    collect_yaml(path, &mut out, &mut packs)
        .map_err(|e| LoadError::file(&display, format!("cannot read folder: {e}")))?;
    out.sort();
    packs.sort();
    if out.is_empty() && packs.is_empty() {
        return Err(LoadError::file(
            &display,
            "folder holds no scenario files (*.yaml, *.yml)",
        ));
    }
    Ok((out, packs))
}

/// YAML files under `dir`, sorted by the caller; subfolders that are packs (they hold a
/// `pack.yaml`) go to `packs` instead.
pub(crate) fn collect_yaml(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    packs: &mut Vec<PathBuf>,
) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            if path.join(MANIFEST).is_file() {
                packs.push(path);
            } else {
                collect_yaml(&path, out, packs)?;
            }
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml")
            && !is_reserved_file(&path)
        {
            out.push(path);
        }
    }
    Ok(())
}

/// YAML files in a scenario folder that are not scenarios.
fn is_reserved_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    matches!(
        name,
        "pack.yaml" | "pack.yml" | "mcpspec.yaml" | "mcpspec.yml"
    ) || name.ends_with(".schema.yaml")
        || is_eval_file(path)
}

/// File name endings of eval sets: skipped by scenario loading, checked by `validate` as eval
/// sets (`crate::eval::set`).
pub const EVAL_SUFFIXES: &[&str] = &[".eval.yaml", ".eval.yml"];

/// An eval set file (by its name).
pub fn is_eval_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| EVAL_SUFFIXES.iter().any(|s| n.ends_with(s)))
}
