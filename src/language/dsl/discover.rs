//! Discovery: which scenario files and pack folders the paths on the command line name.
//! Reading and compiling them is [`super::compile`]'s, resolving packs [`super::pack`]'s.

use std::path::{Path, PathBuf};

use crate::ground::load_error::LoadError;

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
            && !holds_other_input(&path)
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
/// sets (`crate::run::eval::set`).
pub const EVAL_SUFFIXES: &[&str] = &[".eval.yaml", ".eval.yml"];

/// An eval set file (by its name).
pub fn is_eval_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| EVAL_SUFFIXES.iter().any(|s| n.ends_with(s)))
}

/// A YAML file that is not a scenario, told by its top-level keys.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OtherKeys {
    /// `server:`/`client:` — an expected-failures baseline.
    Baseline,
    /// `fail:`/`ignore:`/`accept:` — contract rules.
    Rules,
    /// `evalset:` — an eval set.
    EvalSet,
}

/// What a YAML text holds when it is not a scenario: no scenario key (`scenario`, `steps`)
/// and a key of another input. Read from the lines at column 0 (no parse), so a broken
/// scenario is still reported as a scenario, with its own errors.
pub fn other_keys(text: &str) -> Option<OtherKeys> {
    let keys: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with([' ', '\t', '#', '-']))
        .filter_map(|l| l.split_once(':').map(|(k, _)| k.trim()))
        .collect();
    let any = |names: &[&str]| keys.iter().any(|k| names.contains(k));
    if any(&["scenario", "steps"]) {
        None
    } else if any(&["evalset"]) {
        Some(OtherKeys::EvalSet)
    } else if any(&["server", "client"]) {
        Some(OtherKeys::Baseline)
    } else if any(&["fail", "ignore", "accept"]) {
        Some(OtherKeys::Rules)
    } else {
        None
    }
}

/// A file of a scenario folder that holds another input (the project's baseline, contract
/// rules): a folder named in `paths:` may hold them beside its scenarios (the book's layout
/// puts `expectedFailures:` in `tests/mcp/`).
fn holds_other_input(path: &Path) -> bool {
    crate::ground::source::read_text(path).is_ok_and(|t| other_keys(&t).is_some())
}
