//! `mcpspec pack update [NAME]` and `mcpspec pack build DIR`, and the remote-pack
//! resolver that `run`, `validate` and `list` hand to the dsl.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::face::cli::{PackCommand, exit};
use crate::face::config::Config;
use crate::ground::load_error::{LoadError, LoadErrors};
use crate::ground::source::Pos;
use crate::language::dsl;
use crate::language::dsl::pack::{check_import_fields, check_range};
use crate::language::dsl::params::RemoteImports;
use crate::run::packs::lock::{Entry, Lock};
use crate::run::packs::{Mode, Sources};

/// The resolver of `run`, `validate` and `list`: exactly the revisions in mcpspec.lock.
pub(super) fn sources(offline: bool) -> Result<Arc<Sources>, LoadErrors> {
    Sources::new(Mode::Locked, offline)
}

/// A load that failed: exit 4 when a remote pack could not be reached (its URL is in the
/// errors printed), else `code`.
pub(super) fn unreachable_or(sources: &Sources, code: i32) -> i32 {
    if sources.unreachable().is_empty() {
        code
    } else {
        exit::UNREACHABLE
    }
}

/// `imports:` of mcpspec.yaml as pack folders to load (errors printed; exit 2, or 4 when a
/// remote could not be reached).
pub(super) fn project_paths(config: &Config, offline: bool) -> Result<Vec<PathBuf>, i32> {
    let sources = sources(offline).map_err(|errors| {
        errln!("{}", errors.render());
        exit::INVALID_INPUT
    })?;
    project_imports(config, &sources).map_err(|errors| {
        errln!("{}", errors.render());
        unreachable_or(&sources, exit::INVALID_INPUT)
    })
}

/// `imports:` of mcpspec.yaml: local ones relative to the file (or built-in names), remote
/// ones fetched or found in the cache by `sources`, each checked against its `version:`.
fn project_imports(config: &Config, sources: &Sources) -> Result<Vec<PathBuf>, LoadErrors> {
    let file = &config.file;
    let mut out = Vec::new();
    let mut errors = LoadErrors::default();
    for imp in &config.doc.imports {
        let (line, col) = imp
            .target()
            .map_or((imp.line, imp.col), |t| (t.line, t.col));
        if let Err(e) = check_import_fields(file, imp, &Pos::new(file, line, col)) {
            errors.push(e);
            continue;
        }
        if let Some(v) = imp.with.values().next() {
            errors.push(
                LoadError::at(
                    Pos::new(file, v.line, v.col),
                    "`with:` is for imports in a pack",
                )
                .with_help(format!(
                    "give the project's values in `parameters:` of {}",
                    crate::face::config::DEFAULT_FILE
                )),
            );
            continue;
        }
        let dir = match &imp.pack {
            Some(p) => config.resolve(p),
            None => match sources.fetch(file, imp) {
                Ok(f) => f.dir,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            },
        };
        if imp.version.is_some()
            && dir.join(dsl::discover::MANIFEST).is_file()
            && let Ok((name, version)) = crate::run::packs::manifest_identity(&dir)
            && let Ok(version) = semver::Version::parse(&version)
            && let Some(e) = check_range(
                file,
                imp,
                crate::face::config::DEFAULT_FILE,
                &name,
                &version,
            )
        {
            errors.push(e);
        }
        out.push(dir);
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

pub(super) fn main(command: PackCommand) -> i32 {
    match command {
        PackCommand::Update { name, paths } => update(name, paths),
        PackCommand::Build { dir, out } => build(&dir, out),
    }
}

/// The paths whose imports `pack update` resolves: the given ones, else mcpspec.yaml's.
fn update_paths(paths: Vec<PathBuf>, sources: &Sources) -> Result<Vec<PathBuf>, i32> {
    if !paths.is_empty() {
        return Ok(paths);
    }
    match crate::face::config::Config::find(None) {
        Ok(Some(config)) if !config.doc.paths.is_empty() || !config.doc.imports.is_empty() => {
            let mut paths = config.paths();
            match project_imports(&config, sources) {
                Ok(more) => paths.extend(more),
                Err(errors) => {
                    errln!("{}", errors.render());
                    return Err(unreachable_or(sources, exit::INVALID_INPUT));
                }
            }
            Ok(paths)
        }
        Ok(_) => {
            errln!(
                "error: nothing to update: give `--path` pack folders, or `paths:`/`imports:` in {}",
                crate::face::config::DEFAULT_FILE
            );
            Err(exit::INVALID_INPUT)
        }
        Err(errors) => {
            errln!("{}", errors.render());
            Err(exit::INVALID_INPUT)
        }
    }
}

fn update(name: Option<String>, paths: Vec<PathBuf>) -> i32 {
    let sources = match Sources::new(Mode::Update { only: name.clone() }, false) {
        Ok(s) => s,
        Err(errors) => {
            errln!("{}", errors.render());
            return exit::INVALID_INPUT;
        }
    };
    let paths = match update_paths(paths, &sources) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let inputs = dsl::params::ParamInputs {
        release_steps: true,
        remote: Some(sources.clone()),
        ..Default::default()
    };
    if let Err(errors) = dsl::load::load_all(&paths, &inputs) {
        errln!("{}", errors.render());
        return unreachable_or(&sources, exit::INVALID_INPUT);
    }
    if let Some(name) = &name
        && !sources.matched()
    {
        errln!(
            "error: no remote pack named `{name}` is imported (from {})",
            show(&paths)
        );
        return exit::INVALID_INPUT;
    }
    let new = sources.new_lock();
    let old = sources.old_lock().cloned().unwrap_or_default();
    if let Err(e) = new.write(&Lock::path()) {
        errln!("error: cannot write {}: {e}", crate::run::packs::lock::FILE);
        return exit::INVALID_INPUT;
    }
    report_changes(&old, &new);
    exit::OK
}

fn show(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per locked pack: unchanged, updated (old → new) or added; then the removed.
fn report_changes(old: &Lock, new: &Lock) {
    let mut shown: Vec<&Entry> = new.entries.iter().collect();
    shown.sort_by(|a, b| (&a.name, &a.key).cmp(&(&b.name, &b.key)));
    shown.dedup();
    // An archive is named by its pin (the `sha256:` the import writes and `pack build`
    // printed), never by the digest of its unpacked files, which the reader never wrote.
    let rev = |e: &Entry| match (&e.key, e.commit.as_deref()) {
        (crate::run::packs::lock::Key::Archive { sha256, .. }, _) => format!("sha256 {sha256}"),
        (_, Some(c)) => format!("commit {}", crate::run::packs::short_commit(c)),
        (_, None) => e.digest.clone(),
    };
    for e in &shown {
        let what = match old.find(&e.key) {
            Some(o) if o.digest == e.digest && o.commit == e.commit => "locked ".to_string(),
            Some(o) => format!("updated {} ({}) →", o.version, rev(o)),
            None => "added  ".to_string(),
        };
        outln!(
            "{what} {} {} ({})  {}",
            e.name,
            e.version,
            rev(e),
            e.key.label()
        );
    }
    for o in &old.entries {
        if new.find(&o.key).is_none() {
            outln!("removed {} {}  {}", o.name, o.version, o.key.label());
        }
    }
    outln!(
        "wrote {} ({} pack(s))",
        crate::run::packs::lock::FILE,
        shown.len()
    );
}

fn build(dir: &Path, out: Option<PathBuf>) -> i32 {
    let manifest = dir.join(dsl::discover::MANIFEST);
    if !manifest.is_file() {
        errln!(
            "error: `{}` holds no {}: `pack build` takes a pack folder",
            dir.display(),
            dsl::discover::MANIFEST
        );
        return exit::INVALID_INPUT;
    }
    // Validate first: a broken pack is not published.
    let sources = match sources(false) {
        Ok(s) => s,
        Err(errors) => {
            errln!("{}", errors.render());
            return exit::INVALID_INPUT;
        }
    };
    let inputs = dsl::params::ParamInputs {
        release_steps: true,
        remote: Some(sources.clone()),
        ..Default::default()
    };
    let loaded = match dsl::load::load_all(&[dir.to_path_buf()], &inputs) {
        Ok(l) => l,
        Err(errors) => {
            errln!("{}", errors.render());
            return unreachable_or(&sources, exit::INVALID_INPUT);
        }
    };
    let manifest_name = manifest.display().to_string();
    let Some(info) = loaded
        .packs
        .iter()
        .find(|p| p.manifest == manifest_name)
        .or(loaded.packs.last())
    else {
        errln!("error: `{}` loads no pack", dir.display());
        return exit::INVALID_INPUT;
    };
    if let Err(errors) = crate::run::packs::build::outside_imports(dir) {
        errln!("{}", errors.render());
        return exit::INVALID_INPUT;
    }
    let (bytes, files) = match crate::run::packs::build::archive(dir) {
        Ok(b) => b,
        Err(e) => {
            errln!(
                "error: cannot build the archive of `{}`: {e}",
                dir.display()
            );
            return exit::INVALID_INPUT;
        }
    };
    let out =
        out.unwrap_or_else(|| PathBuf::from(format!("{}-{}.tar.gz", info.name, info.version)));
    let sha = crate::run::packs::cache::sha256_hex(&bytes);
    let file_name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let sum = out.with_file_name(format!("{file_name}.sha256"));
    let written = std::fs::write(&out, &bytes)
        .and_then(|()| std::fs::write(&sum, format!("{sha}  {file_name}\n")));
    if let Err(e) = written {
        errln!("error: cannot write {}: {e}", out.display());
        return exit::INVALID_INPUT;
    }
    outln!(
        "built {} {}: {} ({files} file(s), {} bytes)",
        info.name,
        info.version,
        out.display(),
        bytes.len()
    );
    outln!("sha256 {sha}  (also in {})", sum.display());
    outln!("import it with:\n  - archive: https://YOUR-HOST/{file_name}\n    sha256: {sha}");
    exit::OK
}
