//! Packs: a folder with a `pack.yaml` (name, semver version, typed parameters,
//! requirements, imports, reusable step groups) and its scenarios.
//!
//! Resolution walks the import graph depth-first from the packs named on the command line,
//! loading each pack once (by folder, and by name: a pack reached by two paths runs once),
//! and reports cycles, version conflicts and parameter mistakes with their positions.
//! Parameter values are resolved here, once per pack, in this precedence: `--set` >
//! `parameters:` of mcpspec.yaml > `MCPSPEC_PARAM_<NAME>` > the importer's `with:` > the
//! declared default. They become the scenario's template variables (the same map `--set`
//! feeds), so a parameter left unset stays undefined.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use regex::Regex;
use serde_json::Value;

use super::compile;
use super::discover::MANIFEST;
use super::document::{ImportDoc, PackDoc, ParamDecl};
use super::params::ParamInputs;
use super::scenario::Scenario;
use super::scope::{Groups, Scope};
use crate::ground::load_error::{LoadError, LoadErrors};
use crate::ground::source::{Pos, SourceFile};
use crate::ground::yaml::value::At;

mod files;
mod imports;
mod parameters;

pub use imports::{check_import_fields, check_range};
use imports::{describe_import, lexical_join};

use parameters::describe_requirement;

static NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[a-z0-9]+(-[a-z0-9]+)*$").unwrap());

/// A loaded pack, as `mcpspec list` shows it.
#[derive(Debug, Clone)]
pub struct PackInfo {
    pub name: String,
    pub version: String,
    pub description: Option<String>,
    /// The manifest's file name (a path, or `builtin:NAME/pack.yaml`).
    pub manifest: String,
    pub parameters: Vec<(String, ParamDecl)>,
    pub requires: Option<String>,
    pub imports: Vec<String>,
    /// Where a remote pack came from (`git URL@rev (commit …)`, `archive URL`); `None` for
    /// local and built-in packs.
    pub origin: Option<String>,
    /// Group names with their parameter names.
    pub groups: Vec<(String, Vec<String>)>,
}

/// Where a pack comes from: identity for loading it once.
#[derive(Debug, Clone)]
enum Source {
    Dir(PathBuf),
    Builtin(&'static str),
}

impl Source {
    fn key(&self) -> String {
        match self {
            Source::Dir(d) => std::fs::canonicalize(d)
                .unwrap_or_else(|_| d.clone())
                .display()
                .to_string(),
            Source::Builtin(name) => format!("builtin:{name}"),
        }
    }
}

/// How a pack was reached: from the command line, or by an import.
struct ImportCtx<'a> {
    /// The manifest holding the import.
    file: &'a Arc<SourceFile>,
    importer: &'a str,
    doc: &'a ImportDoc,
    /// Where errors about the import point: what it names (`pack:`, `git:`, `archive:`).
    pos: Pos,
}

/// `rel` (a `pack:` folder) joined to the folder `base` of a repository or archive
/// (`""`: its root), `.` and `..` resolved: `None` when it leaves the root.
pub fn join_inside(base: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = base
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    for part in rel.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

struct Loaded {
    name: String,
    version: semver::Version,
    manifest: String,
    /// `with:` of the first import (empty when named on the command line).
    with: Vec<(String, Value)>,
    first: Option<Pos>,
}

/// Loads packs and their imports, once each, collecting every error.
pub struct Resolver<'i> {
    inputs: &'i ParamInputs,
    loaded: HashMap<String, Loaded>,
    /// Pack name → key of the folder it was loaded from.
    by_name: HashMap<String, String>,
    /// The import chain being loaded: (key, pack name, import position).
    stack: Vec<(String, String, Option<Pos>)>,
    pub errors: LoadErrors,
    pub scenarios: Vec<Scenario>,
    pub packs: Vec<PackInfo>,
    /// Values of `secret: true` parameters, to redact.
    pub secrets: Vec<String>,
}

impl<'i> Resolver<'i> {
    pub fn new(inputs: &'i ParamInputs) -> Self {
        Resolver {
            inputs,
            loaded: HashMap::new(),
            by_name: HashMap::new(),
            stack: Vec::new(),
            errors: LoadErrors::default(),
            scenarios: Vec::new(),
            packs: Vec::new(),
            secrets: Vec::new(),
        }
    }

    /// A pack named on the command line: a folder holding `pack.yaml`.
    pub fn load_dir(&mut self, dir: &Path) {
        self.load(Source::Dir(dir.to_path_buf()), None);
    }

    /// A built-in pack named on the command line.
    pub fn load_builtin(&mut self, name: &'static str) {
        self.load(Source::Builtin(name), None);
    }

    /// Every parameter name declared by a loaded pack.
    pub fn declared(&self) -> BTreeSet<String> {
        self.packs
            .iter()
            .flat_map(|p| p.parameters.iter().map(|(n, _)| n.clone()))
            .collect()
    }

    fn load(&mut self, source: Source, import: Option<ImportCtx<'_>>) {
        let key = source.key();
        let import_pos = import.as_ref().map(|i| i.pos.clone());
        if let Some(at) = self.stack.iter().position(|(k, _, _)| *k == key) {
            self.cycle(at, import_pos);
            return;
        }
        if let Some(done) = self.loaded.get(&key) {
            self.reuse(done.name.clone(), &key, import.as_ref());
            return;
        }
        let Some((file, dir)) = self.manifest(&source, import_pos.clone()) else {
            return;
        };
        // A remote pack's files are named by the pack and its path, not the cache folder.
        let shown = dir
            .as_deref()
            .zip(self.inputs.remote.as_ref())
            .and_then(|(d, r)| r.shown_of(d));
        let shown_in_pack = |f: Arc<SourceFile>| match (&shown, dir.as_deref()) {
            (Some(prefix), Some(d)) => {
                let path = Path::new(&f.name);
                let rel = path.strip_prefix(d).unwrap_or(path).display().to_string();
                f.shown_as(format!("{prefix}{rel}"))
            }
            _ => f,
        };
        let file = shown_in_pack(file);
        let doc: PackDoc = match crate::ground::yaml::parse(&file) {
            Ok(d) => d,
            Err(e) => {
                self.errors.0.extend(e.0);
                return;
            }
        };
        let at = |a: &At<String>| Pos::new(&file, a.line, a.col);
        if !NAME.is_match(&doc.name) {
            self.errors.push(
                LoadError::at(at(&doc.name), format!("invalid pack name `{}`", *doc.name))
                    .with_help(
                        "pack names are lowercase letters, digits and `-`, e.g. `acme-notes`",
                    ),
            );
            return;
        }
        let version = match semver::Version::parse(&doc.version) {
            Ok(v) => v,
            Err(e) => {
                self.errors.push(
                    LoadError::at(
                        at(&doc.version),
                        format!("invalid version `{}`: {e}", *doc.version),
                    )
                    .with_help("versions are semantic versions such as `1.4.0`"),
                );
                return;
            }
        };
        let name = doc.name.value.clone();
        // A pack importing itself through another copy (another repository's revision of
        // it, fetched into the cache) is a cycle too, whatever the copy's version.
        if let Some(at) = self.stack.iter().position(|(_, n, _)| *n == name) {
            self.cycle(at, import_pos);
            return;
        }
        // The same pack name from another folder: one version only, loaded once.
        if let Some(other) = self.by_name.get(&name).cloned() {
            let first = &self.loaded[&other];
            if first.version != version {
                let message = format!(
                    "version conflict: pack `{name}` {version} ({}) and {} ({})",
                    file.name, first.version, first.manifest
                );
                let pos = import_pos.unwrap_or_else(|| at(&doc.version));
                let help = match &first.first {
                    Some(p) => format!(
                        "the other version is imported at {p}; import one version of a pack"
                    ),
                    None => "import one version of a pack".to_string(),
                };
                self.errors
                    .push(LoadError::at(pos, message).with_help(help));
            } else {
                self.reuse(name, &other, import.as_ref());
            }
            return;
        }
        if let Some(i) = &import {
            self.check_version(i, &name, &version);
        }
        let with: Vec<(String, Value)> = import
            .as_ref()
            .map(|i| {
                i.doc
                    .with
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect()
            })
            .unwrap_or_default();
        self.loaded.insert(
            key.clone(),
            Loaded {
                name: name.clone(),
                version: version.clone(),
                manifest: file.name.clone(),
                with,
                first: import_pos.clone(),
            },
        );
        self.by_name.insert(name.clone(), key.clone());
        let values = self.parameters(&doc, &file, import.as_ref());
        let requirement = self.requirement(&doc, &file);

        self.stack.push((key.clone(), name.clone(), import_pos));
        let mut imports = Vec::new();
        for imp in &doc.imports {
            imports.push(describe_import(imp));
            let (line, col) = imp
                .target()
                .map_or((imp.line, imp.col), |t| (t.line, t.col));
            let ctx = ImportCtx {
                file: &file,
                importer: &name,
                doc: &imp.value,
                pos: Pos::new(&file, line, col),
            };
            match self.import_source(&source, dir.as_deref(), &ctx) {
                Some(target) => self.load(target, Some(ctx)),
                None => continue,
            }
        }
        self.stack.pop();

        let groups = Arc::new(Groups {
            pack: name.clone(),
            file: file.clone(),
            groups: doc.groups.clone(),
        });
        let mut known: Vec<String> = doc.parameters.keys().cloned().collect();
        known.extend(self.inputs.names());
        let scope = Arc::new(Scope {
            params: known,
            groups: Some(groups),
        });
        let sources = self
            .scenario_files(&source, dir.as_deref(), &doc, &file)
            .into_iter()
            .map(|(scenario_file, text)| shown_in_pack(SourceFile::new(scenario_file, text)))
            .collect();
        let pack_client = match doc.client.clone() {
            Some(c) => match compile::compile_client(&file, c, &scope.params) {
                Ok(script) => Some(Arc::new(script)),
                Err(es) => {
                    self.errors.0.extend(es.0);
                    None
                }
            },
            None => None,
        };
        // Checked where it is written; its depth is the import chain's below this pack.
        let pack_load =
            doc.load
                .as_ref()
                .and_then(|load| match compile::compile_load_profile(&file, load) {
                    Ok((profile, budgets)) => Some(Arc::new(super::workload::PackWorkload {
                        pack: name.clone(),
                        profile,
                        budgets,
                        depth: self.stack.len(),
                    })),
                    Err(es) => {
                        self.errors.0.extend(es.0);
                        None
                    }
                });
        let first = self.scenarios.len();
        let inputs = self.inputs;
        for loaded in compile::parse_scenarios(sources, &scope, |i| inputs.releases(first + i)) {
            match loaded {
                Ok(mut s) => {
                    s.pack = Some(name.clone());
                    s.pack_version = Some(version.to_string());
                    s.params = values.clone();
                    s.pack_requires = requirement.clone();
                    s.fresh = s.fresh.or(doc.fresh);
                    s.pack_load = pack_load.clone();
                    if s.client.is_none() {
                        s.client = pack_client.clone();
                        // Without the pack's either, the project's may declare `roots`.
                        if let Some(e) = s.client.as_ref().and(s.roots_undeclared()) {
                            self.errors.0.push(e);
                            continue;
                        }
                    }
                    self.scenarios.push(s);
                }
                Err(es) => self.errors.0.extend(es.0),
            }
        }
        self.packs.push(PackInfo {
            name,
            version: version.to_string(),
            description: doc.description.clone(),
            manifest: file.name.clone(),
            parameters: doc
                .parameters
                .iter()
                .map(|(n, d)| (n.clone(), d.value.clone()))
                .collect(),
            requires: requirement.as_ref().map(|r| describe_requirement(r)),
            imports,
            origin: dir
                .as_deref()
                .zip(self.inputs.remote.as_ref())
                .and_then(|(d, r)| r.origin_of(d)),
            groups: doc
                .groups
                .iter()
                .map(|(n, g)| (n.clone(), g.parameters.keys().cloned().collect()))
                .collect(),
        });
    }

    /// The manifest's source file, and the pack's folder (none for built-in packs).
    fn manifest(
        &mut self,
        source: &Source,
        import_pos: Option<Pos>,
    ) -> Option<(Arc<SourceFile>, Option<PathBuf>)> {
        match source {
            Source::Builtin(name) => match super::builtin::manifest(name) {
                Some(text) => Some((
                    SourceFile::new(format!("builtin:{name}/{MANIFEST}"), text),
                    None,
                )),
                None => {
                    let message = format!("built-in pack `{name}` has no {MANIFEST}");
                    self.errors.push(match import_pos {
                        Some(p) => LoadError::at(p, message),
                        None => LoadError::file(format!("builtin:{name}"), message),
                    });
                    None
                }
            },
            Source::Dir(dir) => {
                let path = dir.join(MANIFEST);
                match crate::ground::load_error::read_source(&path) {
                    Ok(file) => Some((file, Some(dir.clone()))),
                    Err(e) => {
                        self.errors.push(match import_pos {
                            Some(p) => e.referenced_at(p, "imported pack"),
                            None => e,
                        });
                        None
                    }
                }
            }
        }
    }

    /// An import's target: a folder relative to the importing pack, else a built-in name.
    fn import_source(
        &mut self,
        importer: &Source,
        dir: Option<&Path>,
        ctx: &ImportCtx<'_>,
    ) -> Option<Source> {
        if let Err(e) = check_import_fields(ctx.file, ctx.doc, &ctx.pos) {
            self.errors.push(e);
            return None;
        }
        if ctx.doc.is_remote() {
            return self.remote_source(ctx);
        }
        let target = ctx.doc.pack.as_ref()?;
        let pos = ctx.pos.clone();
        // A folder outside a pack fetched with `git:` or `archive:` is looked up in the same
        // repository at the same commit (or archive), never beside the cache entry.
        if let Some(dir) = dir
            && join_inside("", target).is_none()
            && let Some(found) = self
                .inputs
                .remote
                .as_ref()
                .and_then(|r| r.relative(dir, ctx.file, target))
        {
            return match found {
                Ok(fetched) => Some(Source::Dir(fetched.dir)),
                Err(e) => {
                    self.errors.push(e);
                    None
                }
            };
        }
        if let Some(dir) = dir {
            let candidate = lexical_join(dir, &target.value);
            if candidate.join(MANIFEST).is_file() {
                return Some(Source::Dir(candidate));
            }
        }
        if let Some(packs) = super::builtin::resolve(target) {
            if let [one] = packs.as_slice() {
                return Some(Source::Builtin(one));
            }
            self.errors.push(
                LoadError::at(pos, format!("`{}` names several packs", target.value))
                    .with_help(format!("import each of them: {}", packs.join(", "))),
            );
            return None;
        }
        let help = match (importer, dir) {
            (Source::Dir(_), Some(dir)) => format!(
                "`{}` holds no {MANIFEST}; imports are folders relative to the importing pack, or built-in packs: {}",
                dir.join(&target.value).display(),
                super::builtin::pack_names().join(", ")
            ),
            _ => format!(
                "a built-in pack imports built-in packs only: {}",
                super::builtin::pack_names().join(", ")
            ),
        };
        self.errors
            .push(LoadError::at(pos, format!("no pack `{}`", target.value)).with_help(help));
        None
    }

    /// A `git:` or `archive:` import: fetched (or found in the cache) by the caller's
    /// [`RemoteImports`].
    fn remote_source(&mut self, ctx: &ImportCtx<'_>) -> Option<Source> {
        let Some(remote) = self.inputs.remote.clone() else {
            self.errors.push(LoadError::at(
                ctx.pos.clone(),
                "remote imports (`git:`, `archive:`) are not available here",
            ));
            return None;
        };
        match remote.fetch(ctx.file, ctx.doc) {
            Ok(fetched) => Some(Source::Dir(fetched.dir)),
            Err(e) => {
                self.errors.push(e);
                None
            }
        }
    }

    fn check_version(&mut self, i: &ImportCtx<'_>, name: &str, version: &semver::Version) {
        if let Some(e) = check_range(i.file, i.doc, i.importer, name, version) {
            self.errors.push(e);
        }
    }

    /// A pack loaded already: check the new import against it (version, `with:` values).
    fn reuse(&mut self, name: String, key: &str, import: Option<&ImportCtx<'_>>) {
        let Some(i) = import else { return };
        let done = &self.loaded[key];
        let version = done.version.clone();
        let (first_with, first_at) = (done.with.clone(), done.first.clone());
        self.check_version(i, &name, &version);
        let with: Vec<(String, Value)> = i
            .doc
            .with
            .iter()
            .map(|(k, v)| (k.clone(), v.to_json()))
            .collect();
        if !with.is_empty() && with != first_with {
            let pos = i.pos.clone();
            let help = match first_at {
                Some(p) => format!(
                    "it is first imported at {p}; a pack runs once, with one set of parameter values"
                ),
                None => {
                    "it is also run directly; a pack runs once, with one set of parameter values"
                        .into()
                }
            };
            self.errors.push(
                LoadError::at(
                    pos,
                    format!("pack `{name}` is imported twice with different `with:` values"),
                )
                .with_help(help),
            );
        }
    }

    fn cycle(&mut self, at: usize, import_pos: Option<Pos>) {
        let mut chain: Vec<String> = self.stack[at..].iter().map(|(_, n, _)| n.clone()).collect();
        chain.push(self.stack[at].1.clone());
        let steps: Vec<String> = self.stack[at + 1..]
            .iter()
            .filter_map(|(_, n, p)| p.as_ref().map(|p| format!("`{n}` imported at {p}")))
            .collect();
        let mut help = steps.join(", then ");
        if let Some(p) = &import_pos {
            let back = format!("`{}` imported back at {p}", self.stack[at].1);
            help = if help.is_empty() {
                back
            } else {
                format!("{help}, then {back}")
            };
        }
        let message = format!("import cycle: {}", chain.join(" → "));
        let error = match import_pos {
            Some(p) => LoadError::at(p, message),
            None => LoadError::file(&self.stack[at].1, message),
        };
        self.errors.push(error.with_help(help));
    }
}
