//! An import's fields and version range checked, and the paths it names joined to its
//! pack's folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::ground::load_error::LoadError;
use crate::ground::source::{Pos, SourceFile};
use crate::ground::yaml::value::At;
use crate::language::dsl::document::ImportDoc;

/// The import's `version:` range against the version of the pack it reached.
pub fn check_range(
    file: &Arc<SourceFile>,
    doc: &ImportDoc,
    importer: &str,
    name: &str,
    version: &semver::Version,
) -> Option<LoadError> {
    let req = doc.version.as_ref()?;
    let pos = Pos::new(file, req.line, req.col);
    match semver::VersionReq::parse(req) {
        Err(e) => Some(
            LoadError::at(
                pos,
                format!("invalid version requirement `{}`: {e}", req.value),
            )
            .with_help("use a semver range such as `^1.0`, `~1.4` or `>=1.2, <2`"),
        ),
        Ok(r) if !r.matches(version) => Some(
            LoadError::at(
                pos,
                format!(
                    "pack `{name}` is version {version}, which does not satisfy `{}`",
                    req.value
                ),
            )
            .with_help(format!(
                "`{importer}` imports it; update the requirement or the pack"
            )),
        ),
        Ok(_) => None,
    }
}

/// How `list` shows an import: the folder or name, or the remote source.
pub(super) fn describe_import(doc: &ImportDoc) -> String {
    let v = |a: &Option<At<String>>| a.as_ref().map(|a| a.value.clone());
    match (v(&doc.pack), v(&doc.git), v(&doc.archive)) {
        (Some(p), _, _) => p,
        (None, Some(g), _) => {
            let rev = v(&doc.rev).map(|r| format!("@{r}")).unwrap_or_default();
            let path = v(&doc.path)
                .map(|p| format!(" path {p}"))
                .unwrap_or_default();
            format!("git {g}{rev}{path}")
        }
        (None, None, Some(a)) => {
            let path = v(&doc.path)
                .map(|p| format!(" path {p}"))
                .unwrap_or_default();
            format!("archive {a}{path}")
        }
        _ => String::new(),
    }
}

/// An import names one pack: `pack:` (a folder or built-in name), or `git:` with `rev:`,
/// or `archive:` with `sha256:`; `path:` and `token:` go with the remote kinds only.
pub fn check_import_fields(
    file: &Arc<SourceFile>,
    doc: &ImportDoc,
    at: &Pos,
) -> Result<(), LoadError> {
    let pos = |a: &At<String>| Pos::new(file, a.line, a.col);
    let kinds = [&doc.pack, &doc.git, &doc.archive];
    let named: Vec<&At<String>> = kinds.iter().filter_map(|k| k.as_ref()).collect();
    let kinds_help = "an import is `pack: FOLDER-OR-BUILTIN`, `git: URL` with `rev:`, or `archive: URL` with `sha256:`";
    match named.as_slice() {
        [] => {
            return Err(LoadError::at(at.clone(), "the import names no pack").with_help(kinds_help));
        }
        [_] => {}
        [_, second, ..] => {
            return Err(LoadError::at(
                pos(second),
                "an import names one of `pack:`, `git:` and `archive:`",
            )
            .with_help(kinds_help));
        }
    }
    let misplaced = |field: &Option<At<String>>, name: &str, with: &str| {
        field.as_ref().map(|f| {
            LoadError::at(pos(f), format!("`{name}:` goes with `{with}:` only"))
                .with_help(kinds_help)
        })
    };
    if doc.git.is_none()
        && let Some(e) = misplaced(&doc.rev, "rev", "git")
    {
        return Err(e);
    }
    if doc.archive.is_none()
        && let Some(e) = misplaced(&doc.sha256, "sha256", "archive")
    {
        return Err(e);
    }
    if doc.pack.is_some() {
        if let Some(e) = misplaced(&doc.path, "path", "git` or `archive") {
            return Err(e);
        }
        if let Some(e) = misplaced(&doc.token, "token", "git` or `archive") {
            return Err(e);
        }
    }
    if let Some(git) = &doc.git
        && doc.rev.is_none()
    {
        return Err(
            LoadError::at(pos(git), format!("missing `rev:` for `git: {}`", git.value))
                .with_help("name a tag, branch or commit, e.g. `rev: v1.2.0`; `mcpspec.lock` pins it to a commit"),
        );
    }
    if let Some(archive) = &doc.archive {
        let Some(sha) = &doc.sha256 else {
            return Err(LoadError::at(
                pos(archive),
                format!("missing `sha256:` for `archive: {}`", archive.value),
            )
            .with_help("`mcpspec pack build` prints an archive's SHA-256 (or `sha256sum FILE`)"));
        };
        if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(LoadError::at(pos(sha), "`sha256:` is 64 hex digits"));
        }
    }
    if let Some(path) = &doc.path {
        let p = Path::new(&path.value);
        if p.is_absolute()
            || p.components().any(|c| {
                !matches!(
                    c,
                    std::path::Component::Normal(_) | std::path::Component::CurDir
                )
            })
        {
            return Err(LoadError::at(
                pos(path),
                format!(
                    "`path: {}` must stay inside the repository or archive",
                    path.value
                ),
            )
            .with_help("a relative folder without `..`, e.g. `path: packs/platform`"));
        }
    }
    if let Some(token) = &doc.token
        && !token.value.starts_with("env:")
    {
        // No snippet: the line would show the credential written in the file.
        let at = format!("{}:{}:{}", file.name, token.line, token.col);
        return Err(LoadError::file(at, "a token is read from the environment")
            .with_help("write `token: env:VAR` and set VAR; a token is never written in a file"));
    }
    Ok(())
}

/// `dir/rel` with `.` and `..` resolved lexically, so that reports show
/// `packs/shared/pack.yaml` rather than `packs/team/../shared/pack.yaml`.
pub(super) fn lexical_join(dir: &Path, rel: &str) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in dir.join(rel).components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if out
                    .components()
                    .next_back()
                    .is_some_and(|l| matches!(l, Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
