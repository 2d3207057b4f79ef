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

use indexmap::IndexMap;
use regex::Regex;
use serde_json::{Map, Value};

use super::error::{LoadError, LoadErrors, did_you_mean};
use super::load::{self, Scope};
use super::model::{GroupDoc, ImportDoc, PackDoc, ParamDecl, ParamType};
use super::scenario::{PackRequirement, Scenario};
use super::value::At;
use crate::era::EraSelector;
use crate::source::{Pos, SourceFile};

/// The manifest file name that makes a folder a pack.
pub const MANIFEST: &str = "pack.yaml";

static NAME: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[a-z0-9]+(-[a-z0-9]+)*$").unwrap());

/// A parameter value given from outside the packs (`--set` or mcpspec.yaml).
#[derive(Debug, Clone)]
pub struct Given {
    pub value: Value,
    /// Where it was given: a position in mcpspec.yaml, or `None` for the command line.
    pub pos: Option<Pos>,
    /// A text value (command line, environment): converted to the declared type.
    pub from_text: bool,
}

/// Parameter values from outside the packs, and how strictly to check them.
#[derive(Debug, Default, Clone)]
pub struct ParamInputs {
    /// `--set` over mcpspec.yaml `parameters:` (already merged, the flag winning).
    pub given: IndexMap<String, Given>,
    /// Read `MCPSPEC_PARAM_<NAME>` for declared parameters.
    pub env: bool,
    /// Unset `required` parameters are errors (runs; `validate` and `list` do not need values).
    pub check_required: bool,
    /// Drop each scenario's compiled steps once it has been validated (runs): the engine
    /// compiles them again when the scenario's turn comes, so memory does not grow with
    /// the number of scenarios loaded ([`super::scenario::Released`]).
    pub release_steps: bool,
    /// With `release_steps`: how many scenarios keep their compiled steps all the same, so
    /// that small runs (and one huge scenario) are not compiled twice; memory stays bounded
    /// past this count.
    pub keep_compiled: usize,
    /// Fetches `git:` and `archive:` imports (none: such imports are errors).
    pub remote: Option<Arc<dyn RemoteImports>>,
}

impl ParamInputs {
    /// Whether the scenario loaded after `loaded` others drops its compiled steps.
    pub fn releases(&self, loaded: usize) -> bool {
        self.release_steps && loaded >= self.keep_compiled
    }

    /// Names defined in every scenario's templates.
    pub fn names(&self) -> Vec<String> {
        self.given.keys().cloned().collect()
    }
}

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

/// The step groups of one pack, with the manifest they point into.
#[derive(Debug)]
pub struct Groups {
    pub pack: String,
    pub file: Arc<SourceFile>,
    pub groups: IndexMap<String, At<GroupDoc>>,
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

/// Fetching is not the dsl's job: the caller hands the resolver one of these (in
/// [`ParamInputs::remote`]), which turns a `git:` or `archive:` import into a local folder.
pub trait RemoteImports: std::fmt::Debug + Send + Sync {
    /// The folder of the pack the import names, or the error at the import.
    fn fetch(&self, file: &Arc<SourceFile>, import: &ImportDoc) -> Result<Fetched, LoadError>;

    /// Where the pack in `dir` came from, when it is a remote pack made local (how
    /// `mcpspec list` shows it); `None` for local folders.
    fn origin_of(&self, dir: &Path) -> Option<String>;
}

/// A remote pack made local.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub dir: PathBuf,
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
        let doc: PackDoc = match load::parse_yaml(&file) {
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
        for (scenario_file, text) in self.scenario_files(&source, dir.as_deref(), &doc, &file) {
            let release = self.inputs.releases(self.scenarios.len());
            let file = SourceFile::new(scenario_file, text);
            match load::parse_scenario_with(file, &scope, release) {
                Ok(mut s) => {
                    s.pack = Some(name.clone());
                    s.pack_version = Some(version.to_string());
                    s.params = values.clone();
                    s.pack_requires = requirement.clone();
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
                match super::error::read_source(&path) {
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

    /// Resolve every declared parameter: the value used, or unset.
    fn parameters(
        &mut self,
        doc: &PackDoc,
        file: &Arc<SourceFile>,
        import: Option<&ImportCtx<'_>>,
    ) -> Map<String, Value> {
        let mut values = Map::new();
        if let Some(i) = import {
            for (arg, v) in &i.doc.with {
                if !doc.parameters.contains_key(arg) {
                    let pos = Pos::new(i.file, v.line, v.col);
                    self.errors.push(unknown_parameter(
                        pos,
                        arg,
                        &doc.name,
                        doc.parameters.keys(),
                    ));
                }
            }
        }
        for (name, decl) in &doc.parameters {
            let decl_pos = Pos::new(file, decl.line, decl.col);
            if let Some(d) = &decl.default
                && let Err(e) = coerce(&d.to_json(), decl.type_, false)
            {
                self.errors.push(type_error(
                    Pos::new(file, d.line, d.col),
                    name,
                    "default",
                    &e,
                ));
            }
            let env_var = env_name(name);
            // (value, given as text, where from); a bad default is reported above.
            let chosen: Option<(Value, bool, Result<Pos, String>)> =
                if let Some(g) = self.inputs.given.get(name) {
                    let origin = g.pos.clone().ok_or_else(|| format!("--set {name}"));
                    Some((g.value.clone(), g.from_text, origin))
                } else if let Some(v) = self
                    .inputs
                    .env
                    .then(|| std::env::var(&env_var).ok())
                    .flatten()
                {
                    Some((Value::String(v), true, Err(env_var.clone())))
                } else if let Some(v) = import.and_then(|i| i.doc.with.get(name)) {
                    Some((
                        v.to_json(),
                        false,
                        Ok(Pos::new(import.unwrap().file, v.line, v.col)),
                    ))
                } else {
                    decl.default.as_ref().and_then(|d| {
                        let v = d.to_json();
                        coerce(&v, decl.type_, false)
                            .is_ok()
                            .then(|| (v, false, Ok(Pos::new(file, d.line, d.col))))
                    })
                };
            match chosen {
                Some((value, from_text, origin)) => match coerce(&value, decl.type_, from_text) {
                    Ok(v) => {
                        if decl.secret {
                            match &v {
                                Value::String(s) if !s.is_empty() => self.secrets.push(s.clone()),
                                Value::String(_) => {}
                                other => self.secrets.push(other.to_string()),
                            }
                        }
                        values.insert(name.clone(), v);
                    }
                    Err(e) => self.errors.push(match origin {
                        Ok(pos) => type_error(pos, name, "value", &e),
                        Err(label) => LoadError::file(
                            label,
                            format!("parameter `{name}` of pack `{}`: {e}", *doc.name),
                        )
                        .with_help(format!("declared at {decl_pos}")),
                    }),
                },
                None if decl.required && self.inputs.check_required => self.errors.push(
                    LoadError::at(
                        decl_pos,
                        format!("parameter `{name}` of pack `{}` is required and not set", *doc.name),
                    )
                    .with_help(format!(
                        "set it with `--set {name}=VALUE`, `parameters:` in mcpspec.yaml or {env_var}"
                    )),
                ),
                None => {}
            }
        }
        values
    }

    fn requirement(
        &mut self,
        doc: &PackDoc,
        file: &Arc<SourceFile>,
    ) -> Option<Arc<PackRequirement>> {
        let r = doc.requires.as_ref()?;
        let mut eras = Vec::new();
        for e in &r.eras {
            match EraSelector::parse(e) {
                Ok(sel) => eras.push(sel),
                Err(msg) => self
                    .errors
                    .push(LoadError::at(Pos::new(file, e.line, e.col), msg)),
            }
        }
        for c in &r.capabilities {
            if c.trim().is_empty() {
                self.errors.push(LoadError::at(
                    Pos::new(file, c.line, c.col),
                    "empty capability name",
                ));
            }
        }
        Some(Arc::new(PackRequirement {
            pack: doc.name.value.clone(),
            eras,
            capabilities: r.capabilities.iter().map(|c| c.value.clone()).collect(),
        }))
    }

    /// The pack's scenario files: (name, text).
    fn scenario_files(
        &mut self,
        source: &Source,
        dir: Option<&Path>,
        doc: &PackDoc,
        file: &Arc<SourceFile>,
    ) -> Vec<(String, String)> {
        let (Source::Dir(_), Some(dir)) = (source, dir) else {
            let Source::Builtin(name) = source else {
                return Vec::new();
            };
            return super::builtin::pack_files(name)
                .map(|(rel, text)| (format!("builtin:{rel}"), text.to_string()))
                .collect();
        };
        let mut paths = Vec::new();
        match &doc.scenarios {
            None => {
                if let Err(e) = load::collect_yaml(dir, &mut paths, &mut Vec::new()) {
                    self.errors.push(LoadError::file(
                        dir.display().to_string(),
                        format!("cannot read folder: {e}"),
                    ));
                }
            }
            Some(list) => {
                for entry in list {
                    let path = dir.join(&entry.value);
                    if path.is_file() {
                        paths.push(path);
                    } else if path.is_dir() {
                        let _ = load::collect_yaml(&path, &mut paths, &mut Vec::new());
                    } else {
                        self.errors.push(
                            LoadError::at(
                                Pos::new(file, entry.line, entry.col),
                                format!("no scenario file or folder `{}`", path.display()),
                            )
                            .with_help(
                                "`scenarios:` lists files and folders relative to the pack folder",
                            ),
                        );
                    }
                }
            }
        }
        paths.sort();
        paths.dedup();
        paths
            .into_iter()
            .filter_map(|p| {
                let name = p.display().to_string();
                match crate::source::read_text(&p) {
                    Ok(text) => Some((name, text)),
                    Err(e) => {
                        self.errors.push(LoadError::unreadable(&name, e));
                        None
                    }
                }
            })
            .collect()
    }
}

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
fn describe_import(doc: &ImportDoc) -> String {
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
fn lexical_join(dir: &Path, rel: &str) -> PathBuf {
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

/// Prefix of the parameters' environment variables.
pub const ENV_PREFIX: &str = "MCPSPEC_PARAM_";

/// `MCPSPEC_PARAM_<NAME>`: the environment variable of a parameter.
pub fn env_name(param: &str) -> String {
    format!(
        "{ENV_PREFIX}{}",
        param.to_ascii_uppercase().replace('-', "_")
    )
}

/// A value as the declared type. Text values (command line, environment) are parsed;
/// YAML values must already have the type.
pub fn coerce(value: &Value, ty: ParamType, from_text: bool) -> Result<Value, String> {
    let text = value.as_str().filter(|_| from_text);
    let ok = match (ty, value) {
        (ParamType::String, Value::String(_)) => Some(value.clone()),
        (ParamType::Number, Value::Number(_)) => Some(value.clone()),
        (ParamType::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => Some(value.clone()),
        (ParamType::Boolean, Value::Bool(_)) => Some(value.clone()),
        (ParamType::Number, _) => text
            .and_then(|t| t.trim().parse::<f64>().ok())
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        (ParamType::Integer, _) => text
            .and_then(|t| t.trim().parse::<i64>().ok())
            .map(Value::from),
        (ParamType::Boolean, _) => match text {
            Some("true") => Some(Value::Bool(true)),
            Some("false") => Some(Value::Bool(false)),
            _ => None,
        },
        (ParamType::String, _) => None,
    };
    ok.ok_or_else(|| {
        let shown = match value {
            Value::String(s) => format!("`{s}`"),
            other => format!("{} `{other}`", json_type(other)),
        };
        let article = if ty == ParamType::Integer { "an" } else { "a" };
        format!("expected {article} {}, got {shown}", ty.name())
    })
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "mapping",
    }
}

fn type_error(pos: Pos, name: &str, what: &str, e: &str) -> LoadError {
    LoadError::at(
        pos,
        format!("parameter `{name}`: {what} of the wrong type: {e}"),
    )
}

/// An argument or `with:` value for a parameter that is not declared.
pub fn unknown_parameter<'a>(
    pos: Pos,
    arg: &str,
    owner: &str,
    declared: impl Iterator<Item = &'a String> + Clone,
) -> LoadError {
    let names: Vec<&str> = declared.map(String::as_str).collect();
    let list = if names.is_empty() {
        "it declares none".to_string()
    } else {
        format!(
            "declared: {}",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let help = match did_you_mean(arg, names.iter().copied()) {
        Some(s) => format!("did you mean `{s}`? {list}"),
        None => list,
    };
    LoadError::at(pos, format!("unknown parameter `{arg}` for `{owner}`")).with_help(help)
}

fn describe_requirement(r: &PackRequirement) -> String {
    let mut parts = Vec::new();
    if !r.eras.is_empty() {
        let eras: Vec<String> = r.eras.iter().map(EraSelector::label).collect();
        parts.push(format!("eras [{}]", eras.join(", ")));
    }
    if !r.capabilities.is_empty() {
        parts.push(format!("capabilities [{}]", r.capabilities.join(", ")));
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_values_convert_to_the_declared_type() {
        assert_eq!(
            coerce(&json!("3"), ParamType::Integer, true).unwrap(),
            json!(3)
        );
        assert_eq!(
            coerce(&json!("2.5"), ParamType::Number, true).unwrap(),
            json!(2.5)
        );
        assert_eq!(
            coerce(&json!("true"), ParamType::Boolean, true).unwrap(),
            json!(true)
        );
        assert_eq!(
            coerce(&json!("x"), ParamType::String, true).unwrap(),
            json!("x")
        );
        assert!(coerce(&json!("three"), ParamType::Integer, true).is_err());
        // YAML values must have the type already.
        assert!(coerce(&json!("3"), ParamType::Integer, false).is_err());
        assert!(coerce(&json!(3), ParamType::String, false).is_err());
        assert!(coerce(&json!(2.5), ParamType::Integer, false).is_err());
    }

    #[test]
    fn env_names_are_upper_case() {
        assert_eq!(env_name("api_token"), "MCPSPEC_PARAM_API_TOKEN");
    }
}
