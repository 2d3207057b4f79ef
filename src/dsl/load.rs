//! Loading: YAML text → typed model (with positions) → validated, compiled [`Scenario`].
//! Every problem found is reported at once, each with `file:line:col` and a snippet.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use crate::assert::path::CompiledPath;
use indexmap::IndexMap;
use regex::Regex;

use super::error::{LoadError, LoadErrors, did_you_mean};
use super::model::{self, Expectation, ScenarioDoc};
use super::pack::{Groups, MANIFEST, ParamInputs, Resolver};
use super::scenario::*;
use super::template;
use super::value::{At, TValue};
use crate::era::EraSelector;
use crate::report::model::Level;
use crate::source::{Pos, SourceFile};

/// Built-in template variables, available in every step.
pub const BUILTIN_VARS: &[&str] = &["era", "revision"];

/// Longest `within` of a `notifications` expectation.
const MAX_WITHIN: std::time::Duration = std::time::Duration::from_secs(60);

/// What a load produced: the scenarios, the packs they came from, and the values of
/// secret pack parameters (to redact from every output).
#[derive(Debug, Default)]
pub struct LoadedSet {
    pub scenarios: Vec<Scenario>,
    pub packs: Vec<super::pack::PackInfo>,
    pub secrets: Vec<String>,
}

/// Load scenarios from files and folders (folders: every `*.yaml`/`*.yml`, sorted).
pub fn load_paths(paths: &[PathBuf]) -> Result<Vec<Scenario>, LoadErrors> {
    load_all(paths, &ParamInputs::default()).map(|l| l.scenarios)
}

/// Load scenario files, folders, packs (a folder with `pack.yaml`, or that file) and
/// built-in packs by name. `inputs` are the parameters given from outside (`--set`,
/// mcpspec.yaml): template variables of every scenario, and values of pack parameters.
pub fn load_all(paths: &[PathBuf], inputs: &ParamInputs) -> Result<LoadedSet, LoadErrors> {
    let mut resolver = Resolver::new(inputs);
    let mut scenarios = Vec::new();
    let mut errors = LoadErrors::default();
    let plain = Arc::new(Scope {
        params: inputs.names(),
        groups: None,
    });
    for path in paths {
        // A name that is not a file or folder may be a built-in pack (`conformance`).
        if !path.exists()
            && let Some(packs) = path.to_str().and_then(super::builtin::resolve)
        {
            for pack in packs {
                resolver.load_builtin(pack);
            }
            continue;
        }
        if let Some(dir) = pack_dir(path) {
            resolver.load_dir(&dir);
            continue;
        }
        let (files, packs) = match scenario_files(path) {
            Ok(found) => found,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        for dir in packs {
            resolver.load_dir(&dir);
        }
        for file in files {
            let release = inputs.releases(scenarios.len());
            let loaded = super::error::read_source(&file)
                .map_err(LoadErrors::from)
                .and_then(|source| parse_scenario_with(source, &plain, release));
            match loaded {
                Ok(s) => scenarios.push(s),
                Err(es) => errors.0.extend(es.0),
            }
        }
    }
    // `--set` of a name no pack declares, when only packs run, is a mistake (a typo).
    if scenarios.is_empty() && !resolver.packs.is_empty() {
        let declared = resolver.declared();
        for (name, given) in &inputs.given {
            if given.pos.is_none() && !declared.contains(name) {
                let help = match did_you_mean(name, declared.iter().map(String::as_str)) {
                    Some(s) => format!(
                        "did you mean `{s}`? parameters of the packs run: {}",
                        list(&declared)
                    ),
                    None if declared.is_empty() => {
                        "the packs run declare no parameters".to_string()
                    }
                    None => format!("parameters of the packs run: {}", list(&declared)),
                };
                errors.push(
                    LoadError::file(
                        format!("--set {name}"),
                        format!("unknown parameter `{name}`"),
                    )
                    .with_help(help),
                );
            }
        }
    }
    // `MCPSPEC_PARAM_<NAME>` only ever feeds a declared pack parameter: one that names
    // none would be silently ignored (a typo, or a pack that does not declare it).
    if inputs.env {
        unknown_param_env(&resolver.declared(), std::env::vars_os(), &mut errors);
    }
    errors.0.extend(std::mem::take(&mut resolver.errors).0);
    let mut all = std::mem::take(&mut resolver.scenarios);
    all.extend(scenarios);
    check_unique_ids(&all, &mut errors);
    if errors.is_empty() {
        Ok(LoadedSet {
            scenarios: all,
            packs: resolver.packs,
            secrets: resolver.secrets,
        })
    } else {
        Err(errors)
    }
}

/// An error for each `MCPSPEC_PARAM_<NAME>` of `vars` that is the variable of no parameter
/// in `declared`.
fn unknown_param_env(
    declared: &BTreeSet<String>,
    vars: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
    errors: &mut LoadErrors,
) {
    let by_var: Vec<(String, &String)> = declared
        .iter()
        .map(|n| (super::pack::env_name(n), n))
        .collect();
    let mut unknown: Vec<String> = vars
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| k.starts_with(super::pack::ENV_PREFIX) && !by_var.iter().any(|(v, _)| v == k))
        .collect();
    unknown.sort();
    for var in unknown {
        let help = match did_you_mean(&var, by_var.iter().map(|(v, _)| v.as_str())) {
            Some(s) => format!(
                "did you mean `{s}`? parameters of the packs run: {}",
                list(declared)
            ),
            None if declared.is_empty() => {
                "the packs run declare no parameters; unset it or run a pack that declares it"
                    .to_string()
            }
            None => format!("parameters of the packs run: {}", list(declared)),
        };
        errors.push(
            LoadError::file(
                format!("environment variable {var}"),
                format!("`{var}` names no parameter of the packs run"),
            )
            .with_help(help),
        );
    }
}

/// The pack folder a path names: a folder holding `pack.yaml`, or that file itself.
fn pack_dir(path: &Path) -> Option<PathBuf> {
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
fn scenario_files(path: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), LoadError> {
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
}

pub fn load_file(path: &Path) -> Result<Scenario, LoadErrors> {
    parse_scenario(super::error::read_source(path)?)
}

/// Parse and validate one scenario document.
pub fn parse_scenario(file: Arc<SourceFile>) -> Result<Scenario, LoadErrors> {
    parse_scenario_in(file, &Arc::default())
}

/// What a scenario can refer to besides its own variables.
#[derive(Debug, Default, Clone)]
pub struct Scope {
    /// Parameter names (`--set`, the pack's parameters): defined template variables.
    pub params: Vec<String>,
    /// The step groups of the scenario's pack.
    pub groups: Option<Arc<Groups>>,
}

/// Parse and validate one scenario document within a scope.
pub fn parse_scenario_in(
    file: Arc<SourceFile>,
    scope: &Arc<Scope>,
) -> Result<Scenario, LoadErrors> {
    parse_scenario_with(file, scope, false)
}

/// [`parse_scenario_in`]; with `release`, the scenario comes back released
/// ([`super::scenario::Released`]), each compiled step dropped as soon as it is checked:
/// compiling a long file no longer holds all its compiled steps at once, only to free
/// them all afterwards.
pub(crate) fn parse_scenario_with(
    file: Arc<SourceFile>,
    scope: &Arc<Scope>,
    release: bool,
) -> Result<Scenario, LoadErrors> {
    let doc: ScenarioDoc = parse_yaml(&file)?;
    let mut compiler = Compiler::new(&file);
    compiler.params = scope.params.clone();
    compiler.groups = scope.groups.clone();
    compiler.release = release;
    let mut scenario = compiler.scenario(doc)?;
    scenario.scope = scope.clone();
    Ok(scenario)
}

/// Deserialize a YAML document into `T`, turning serde errors into positioned ones.
/// The fast front end ([`super::yaml`]) loads what it supports; anything else, errors
/// included, goes through serde-saphyr, so behaviour and messages are serde-saphyr's.
/// A structural error (unknown key, wrong type) comes with the others of the file: see
/// [`more_structural_errors`].
pub fn parse_yaml<T: serde::de::DeserializeOwned>(file: &Arc<SourceFile>) -> Result<T, LoadErrors> {
    if file.text.trim().is_empty() {
        return Err(LoadError::file(&file.name, "file is empty").into());
    }
    if let Ok(value) = super::yaml::from_str::<T>(&file.text) {
        return Ok(value);
    }
    match serde_saphyr::from_str::<T>(&file.text) {
        Ok(value) => Ok(value),
        Err(e) => Err(more_structural_errors::<T>(file, yaml_error(file, &e))),
    }
}

/// At most this many structural errors are reported per file.
const MAX_STRUCTURAL_ERRORS: usize = 20;

/// serde stops at the first error; to report the others of the file, the entry that holds
/// it (a top-level key, or an item of a top-level list such as one step) is blanked out —
/// line numbers kept — and the document parsed again, until it parses or an error falls
/// outside any such entry. Only when the text is well-formed YAML (a syntax error stays
/// single), and only on this error path.
fn more_structural_errors<T: serde::de::DeserializeOwned>(
    file: &Arc<SourceFile>,
    first: LoadError,
) -> LoadErrors {
    let mut errors = LoadErrors::from(first);
    if serde_saphyr::from_str::<TValue>(&file.text).is_err() {
        return errors;
    }
    let entries = yaml_entries(&file.text);
    let mut lines: Vec<&str> = file.text.lines().collect();
    let line_of = |e: &LoadError| e.pos.as_ref().map(|p| p.line as usize);
    let mut masked: Vec<usize> = Vec::new();
    let mut line = line_of(&errors.0[0]);
    while errors.0.len() < MAX_STRUCTURAL_ERRORS {
        // The innermost entry holding the error; the last item of a list is kept (a list
        // emptied that way would be an error of its own).
        let Some(i) = line.and_then(|l| {
            entries
                .iter()
                .rposition(|e| (e.first..=e.last).contains(&l) && !masked.contains(&e.index()))
        }) else {
            break;
        };
        let entry = &entries[i];
        if let Some(list) = entry.list {
            let left = entries
                .iter()
                .filter(|e| e.list == Some(list) && !masked.contains(&e.index()))
                .count();
            if left <= 1 {
                break;
            }
        }
        masked.push(entry.index());
        for l in &mut lines[entry.first - 1..entry.last] {
            *l = "";
        }
        let text = lines.join("\n");
        let Err(e) = serde_saphyr::from_str::<T>(&text) else {
            break;
        };
        let error = yaml_error(file, &e);
        // A key removed with its entry is no error of the user's.
        if error.message.starts_with("missing required key") {
            break;
        }
        line = line_of(&error);
        errors.push(error);
    }
    errors
}

/// A block of lines (1-based, inclusive) of a YAML document: a top-level key with its
/// value, or an item of a top-level key's block list (`list`: that key's line).
#[derive(Debug)]
struct YamlEntry {
    first: usize,
    last: usize,
    list: Option<usize>,
}

impl YamlEntry {
    fn index(&self) -> usize {
        self.first
    }
}

/// The entries of a block-style document, top-level keys before the items they hold.
fn yaml_entries(text: &str) -> Vec<YamlEntry> {
    let lines: Vec<&str> = text.lines().collect();
    let content = |l: &str| !l.trim().is_empty() && !l.trim_start().starts_with('#');
    let top: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            let l = lines[i];
            content(l) && !l.starts_with([' ', '\t', '-']) && !l.starts_with("...")
        })
        .collect();
    let mut entries = Vec::new();
    for (k, &start) in top.iter().enumerate() {
        let end = top.get(k + 1).copied().unwrap_or(lines.len());
        // Trailing blank and comment lines stay outside the entry.
        let last = (start..end)
            .rev()
            .find(|&i| content(lines[i]))
            .unwrap_or(start);
        entries.push(YamlEntry {
            first: start + 1,
            last: last + 1,
            list: None,
        });
        let Some(first_item) = (start + 1..=last).find(|&i| content(lines[i])) else {
            continue;
        };
        let item_line = lines[first_item];
        let indent = item_line.len() - item_line.trim_start().len();
        if !item_line.trim_start().starts_with("- ") && item_line.trim() != "-" {
            continue;
        }
        let starts: Vec<usize> = (first_item..=last)
            .filter(|&i| {
                let l = lines[i];
                l.len() - l.trim_start().len() == indent
                    && (l.trim_start().starts_with("- ") || l.trim() == "-")
            })
            .collect();
        for (j, &s) in starts.iter().enumerate() {
            let e = starts.get(j + 1).map_or(last + 1, |&n| n);
            let l = (s..e).rev().find(|&i| content(lines[i])).unwrap_or(s);
            entries.push(YamlEntry {
                first: s + 1,
                last: l + 1,
                list: Some(start + 1),
            });
        }
    }
    entries
}

static AT_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)\s*(at|on) line \d+,? col(umn)? \d+.*$").unwrap());
static UNKNOWN_FIELD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"unknown field `([^`]*)`, expected (?:one of )?(.*)").unwrap());
static MISSING_FIELD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"missing field `([^`]*)`").unwrap());
static UNKNOWN_VARIANT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"unknown variant `([^`]*)`, expected (?:one of )?(.*)").unwrap());
static DUPLICATE_KEY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"duplicate mapping key: ([^,]*)").unwrap());
static BACKTICKED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`]*)`").unwrap());

fn yaml_error(file: &Arc<SourceFile>, e: &serde_saphyr::Error) -> LoadError {
    let raw = e.without_snippet().to_string();
    let message = AT_LINE.replace(raw.trim(), "").to_string();
    let (mut message, mut help) = explain_serde_message(&message);
    if let Some(loc) = e.location().filter(|l| l.line() > 0)
        && let Some((m, h)) = explain_by_key(file, &message, loc.line() as u32, loc.column() as u32)
    {
        (message, help) = (m, Some(h));
    }
    let error = match e.location() {
        Some(loc) if loc.line() > 0 => LoadError::at(
            Pos::new(file, loc.line() as u32, loc.column() as u32),
            message,
        ),
        _ => LoadError::file(&file.name, message),
    };
    match help {
        Some(h) => error.with_help(h),
        None => error,
    }
}

/// A scalar where the DSL takes a list (`eras: legacy`), or a value that is not a
/// boolean: say so in DSL words, naming the key, with the fix written out from the user's
/// own value.
fn explain_by_key(
    file: &SourceFile,
    message: &str,
    line: u32,
    col: u32,
) -> Option<(String, String)> {
    let list = message == "expected sequence start" || message.contains("expected a sequence");
    let boolean = message == "invalid boolean";
    if !list && !boolean {
        return None;
    }
    let text = file.text.lines().nth(line.checked_sub(1)? as usize)?;
    let start = text.char_indices().nth(col.checked_sub(1)? as usize)?.0;
    let key = text[..start].trim_end().strip_suffix(':')?;
    let key = key
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()?;
    let mut value = text[start..].split(" #").next()?;
    if text[..start].contains(['{', '[']) {
        // In a flow collection the value ends at the next comma.
        value = value.split(',').next()?;
    }
    let value = value.trim().trim_end_matches([',', '}']).trim();
    if key.is_empty() || value.is_empty() {
        return None;
    }
    if boolean {
        return Some((
            format!("`{key}` takes `true` or `false`, not `{value}`"),
            format!("write `{key}: true` or `{key}: false`"),
        ));
    }
    let what = match key {
        "eras" => "a list of eras",
        "tags" => "a list of tags",
        "paths" => "a list of files, folders or packs",
        "supportedVersions" => "a list of revisions",
        _ => "a list",
    };
    Some((
        format!("`{key}` takes {what}, e.g. [{value}]"),
        format!("write `{key}: [{value}]`"),
    ))
}

/// Rephrase serde's messages in DSL terms and add "did you mean".
fn explain_serde_message(message: &str) -> (String, Option<String>) {
    for (re, what) in [(&*UNKNOWN_FIELD, "key"), (&*UNKNOWN_VARIANT, "value")] {
        if let Some(c) = re.captures(message) {
            let unknown = c[1].to_string();
            let mut expected: Vec<String> = BACKTICKED
                .captures_iter(&c[2])
                .map(|m| m[1].to_string())
                .collect();
            if expected.is_empty() {
                expected = c[2]
                    .split(',')
                    .map(|k| k.trim().to_string())
                    .filter(|k| !k.is_empty())
                    .collect();
            }
            let list = expected
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let help = match did_you_mean(&unknown, expected.iter().map(String::as_str)) {
                Some(s) => format!("did you mean `{s}`? expected one of {list}"),
                None => format!("expected one of {list}"),
            };
            return (format!("unknown {what} `{unknown}`"), Some(help));
        }
    }
    if let Some(c) = DUPLICATE_KEY.captures(message) {
        return (
            format!("duplicate key `{}`", &c[1]),
            Some("each key may appear once in a mapping".into()),
        );
    }
    if let Some(c) = MISSING_FIELD.captures(message) {
        return (format!("missing required key `{}`", &c[1]), None);
    }
    // serde-saphyr's depth budget (64), and serde's recursion limit on a flow collection.
    if message.starts_with("budget breached: Depth") || message == "recursion limit exceeded" {
        return (
            "the document nests too deeply".into(),
            Some("mcpspec reads YAML nested at most 64 levels deep".into()),
        );
    }
    if message.contains("data did not match any variant of untagged enum CodeSpec") {
        return (
            "invalid code".into(),
            Some("expected an integer code or a list of integer codes".into()),
        );
    }
    if message.contains("untagged enum LengthSpec") {
        return (
            "invalid length".into(),
            Some("expected a number or a comparison such as `{gte: 1}`".into()),
        );
    }
    (message.to_string(), None)
}

/// The names listed under `requires: { parameters: [...] }`.
fn required_parameters(r: Option<&model::Requires>) -> impl Iterator<Item = String> + '_ {
    r.into_iter()
        .flat_map(|r| r.parameters.iter().map(|p| p.value.clone()))
}

/// A template variable / `--set` name: letters, digits and `_`, not starting with a digit.
pub fn is_variable_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn check_unique_ids(scenarios: &[Scenario], errors: &mut LoadErrors) {
    let mut seen: IndexMap<&str, &Pos> = IndexMap::new();
    for s in scenarios {
        if let Some(first) = seen.get(s.id.as_str()) {
            errors.push(
                LoadError::at(s.pos.clone(), format!("duplicate scenario id `{}`", s.id))
                    .with_help(format!("first defined at {first}")),
            );
        } else {
            seen.insert(&s.id, &s.pos);
        }
    }
}

/// Turns the typed model into runnable scenarios, collecting every error.
struct Compiler {
    /// The file positions point into: the scenario, or a pack manifest while a group
    /// call is expanded.
    file: Arc<SourceFile>,
    errors: LoadErrors,
    /// Variables referenced by the step being compiled.
    uses: BTreeSet<String>,
    /// Parameters (`--set`, the pack's), defined in every template.
    params: Vec<String>,
    /// Step groups of the scenario's pack.
    groups: Option<Arc<Groups>>,
    /// The JSONPaths parsed so far, by their text.
    jsonpaths: HashMap<String, CompiledPath>,
    /// Keep only the line of each compiled step (see [`parse_scenario_with`]).
    release: bool,
}

impl Compiler {
    fn new(file: &Arc<SourceFile>) -> Self {
        Compiler {
            file: file.clone(),
            errors: LoadErrors::default(),
            uses: BTreeSet::new(),
            params: Vec::new(),
            groups: None,
            jsonpaths: HashMap::new(),
            release: false,
        }
    }

    fn pos(&self, line: u32, col: u32) -> Pos {
        Pos::new(&self.file, line, col)
    }

    fn at<T>(&self, at: &At<T>) -> Pos {
        self.pos(at.line, at.col)
    }

    fn error(&mut self, pos: Pos, message: impl Into<String>) {
        self.errors.push(LoadError::at(pos, message));
    }

    fn scenario(mut self, doc: ScenarioDoc) -> Result<Scenario, LoadErrors> {
        let pos = self.at(&doc.scenario);
        if doc.scenario.trim().is_empty() {
            self.error(pos.clone(), "scenario id is empty");
        }
        let eras = self.eras(&doc.eras);
        let mut known: BTreeSet<String> = BUILTIN_VARS.iter().map(|s| s.to_string()).collect();
        known.extend(self.params.iter().cloned());
        // Parameters a scenario requires are defined wherever it runs (unset: skipped).
        known.extend(required_parameters(doc.requires.as_ref()));
        for (name, value) in &doc.vars {
            self.check_templates(value, &known);
            known.insert(name.clone());
        }
        if doc.steps.is_empty() {
            self.errors.push(
                LoadError::at(pos.clone(), "scenario has no steps")
                    .with_help("add at least one step under `steps:`"),
            );
        }
        let mut names: HashSet<String> = HashSet::with_capacity(doc.steps.len());
        let mut steps = Vec::new();
        let mut step_lines = Vec::new();
        let mut step_names = Vec::new();
        if self.release {
            step_lines.reserve(doc.steps.len());
        } else {
            steps.reserve(doc.steps.len());
        }
        for step in doc.steps {
            let (group, single) = if step.use_.is_some() {
                (self.group_call(step, &mut known), None)
            } else {
                if let Some(name) = &step.name {
                    self.unique_step_name(&mut names, &name.value, self.at(name), false);
                }
                (Vec::new(), self.step(step, &known, None))
            };
            for compiled in group.into_iter().chain(single) {
                if compiled.call.is_some() {
                    self.unique_step_name(&mut names, &compiled.name, compiled.pos.clone(), true);
                }
                for c in &compiled.captures {
                    known.insert(c.name.clone());
                }
                if self.release {
                    step_lines.push(compiled.pos.line);
                    step_names.push(compiled.name.clone());
                } else {
                    steps.push(compiled);
                }
            }
        }
        let requires = self.requires(doc.requires, &known);
        if !self.errors.is_empty() {
            return Err(self.errors);
        }
        Ok(Scenario {
            id: doc.scenario.value,
            description: doc.description,
            tags: doc.tags,
            eras,
            requires,
            vars: doc.vars.into_iter().collect(),
            steps,
            file: self.file.clone(),
            pos,
            pack: None,
            pack_version: None,
            params: serde_json::Map::new(),
            pack_requires: None,
            scope: Arc::default(),
            released: self.release.then_some(Released {
                keep: step_lines.len(),
                step_lines,
                step_names,
            }),
        })
    }

    fn unique_step_name(
        &mut self,
        names: &mut HashSet<String>,
        name: &str,
        pos: Pos,
        in_group: bool,
    ) {
        if names.insert(name.to_string()) {
            return;
        }
        let help = if in_group {
            "step names are check ids: give each call of a group its own `name:` (a prefix)"
        } else {
            "step names are check ids: make them unique within the scenario"
        };
        self.errors
            .push(LoadError::at(pos, format!("duplicate step name `{name}`")).with_help(help));
    }

    /// Expand `use: GROUP` into the group's steps: arguments checked against the group's
    /// parameters, step names prefixed by the call's `name`, positions in the manifest
    /// (each error also names the calling line).
    fn group_call(&mut self, call: At<model::Step>, known: &mut BTreeSet<String>) -> Vec<Step> {
        let call_pos = self.at(&call);
        let call = call.value;
        let used = call.use_.clone().expect("a group call");
        let use_pos = self.at(&used);
        let extra = [
            ("description", call.description.is_some()),
            ("eras", call.eras.is_some()),
            ("transport", call.transport.is_some()),
            ("requires", call.requires.is_some()),
            ("level", call.level.is_some()),
            ("timeout", call.timeout.is_some()),
            ("retry", call.retry.is_some()),
            ("request", call.request.is_some()),
            ("notification", call.notification.is_some()),
            ("raw", call.raw.is_some()),
            ("contract", call.contract.is_some()),
            ("handshake", call.handshake.is_some()),
            ("check", call.check.is_some()),
            ("expect", !call.expect.is_empty()),
            ("capture", !call.capture.is_empty()),
        ];
        if let Some((key, _)) = extra.iter().find(|(_, given)| *given) {
            self.errors.push(
                LoadError::at(use_pos, format!("a group call takes no `{key}`"))
                    .with_help("a step with `use:` takes only `name` (a prefix of the group's step names) and `with` (the arguments)"),
            );
            return Vec::new();
        }
        let Some(groups) = self.groups.clone() else {
            self.errors.push(
                LoadError::at(use_pos, format!("no step group `{}`: this scenario is not part of a pack", *used))
                    .with_help(format!("step groups are defined under `groups:` in a pack's {MANIFEST}; run the pack's folder")),
            );
            return Vec::new();
        };
        let Some(group) = groups.groups.get(used.as_str()) else {
            let defined: BTreeSet<String> = groups.groups.keys().cloned().collect();
            let help = match did_you_mean(&used, defined.iter().map(String::as_str)) {
                Some(s) => format!(
                    "did you mean `{s}`? groups of pack `{}`: {}",
                    groups.pack,
                    list(&defined)
                ),
                None if defined.is_empty() => format!("pack `{}` defines no groups", groups.pack),
                None => format!("groups of pack `{}`: {}", groups.pack, list(&defined)),
            };
            self.errors
                .push(LoadError::at(use_pos, format!("no step group `{}`", *used)).with_help(help));
            return Vec::new();
        };
        let errors_before = self.errors.0.len();
        // Arguments: literals are type-checked now, templates against the caller's variables.
        let given = call
            .with
            .as_ref()
            .map(|w| w.value.clone())
            .unwrap_or_default();
        let mut args = Vec::new();
        for (arg, value) in &given {
            if !group.parameters.contains_key(arg) {
                let pos = self.pos(value.line, value.col);
                self.errors.push(super::pack::unknown_parameter(
                    pos,
                    arg,
                    &format!("group {}", *used),
                    group.parameters.keys(),
                ));
            }
        }
        for (name, decl) in &group.parameters {
            match given.get(name) {
                Some(value) => {
                    self.check_templates(value, known);
                    let literal = !value.as_str().is_some_and(template::is_template);
                    if literal
                        && let Err(e) = super::pack::coerce(&value.to_json(), decl.type_, false)
                    {
                        self.error(
                            self.pos(value.line, value.col),
                            format!("argument `{name}` of group `{}`: {e}", *used),
                        );
                    }
                    args.push((name.clone(), value.clone()));
                }
                None => match &decl.default {
                    Some(d) => args.push((name.clone(), d.clone())),
                    None => {
                        let pos = call
                            .with
                            .as_ref()
                            .map(|w| self.at(w))
                            .unwrap_or_else(|| use_pos.clone());
                        self.errors.push(
                            LoadError::at(pos, format!("missing argument `{name}` of group `{}`", *used))
                                .with_help(format!(
                                    "add it under `with:`; the group's parameters without a default are required: {}",
                                    group.parameters.iter().filter(|(_, d)| d.default.is_none()).map(|(k, _)| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                                )),
                        );
                    }
                },
            }
        }
        let shared = Arc::new(GroupCall {
            group: used.value.clone(),
            args,
        });
        // The group's steps, compiled with positions in the manifest.
        let caller_file = std::mem::replace(&mut self.file, groups.file.clone());
        let mut inner = known.clone();
        inner.extend(group.parameters.keys().cloned());
        let prefix = call.name.as_ref().map(|n| n.value.clone());
        let mut steps = Vec::new();
        for step in group.steps.clone() {
            if step.use_.is_some() {
                let p = self.at(&step);
                self.errors.push(
                    LoadError::at(p, "a group step cannot call another group")
                        .with_help("list the steps of both groups in the scenario instead"),
                );
                continue;
            }
            if let Some(compiled) = self.step(step, &inner, prefix.as_deref()) {
                for c in &compiled.captures {
                    inner.insert(c.name.clone());
                    known.insert(c.name.clone());
                }
                let mut compiled = compiled;
                compiled.call = Some(shared.clone());
                steps.push(compiled);
            }
        }
        self.file = caller_file;
        // An error inside the group is reported once, with a note per calling line.
        let note = format!("in group `{}` called at {call_pos}", *used);
        let new = self.errors.0.split_off(errors_before);
        for mut e in new {
            let in_group = e
                .pos
                .as_ref()
                .is_some_and(|p| Arc::ptr_eq(&p.file, &groups.file));
            if !in_group {
                self.errors.push(e);
                continue;
            }
            let same = self.errors.0.iter_mut().find(|old| {
                old.message == e.message
                    && old
                        .pos
                        .as_ref()
                        .map(|p| (p.line, p.col, p.file.name.as_str()))
                        == e.pos
                            .as_ref()
                            .map(|p| (p.line, p.col, p.file.name.as_str()))
            });
            match same {
                Some(old) => old.notes.push(note.clone()),
                None => {
                    e.notes.push(note.clone());
                    self.errors.push(e);
                }
            }
        }
        steps
    }

    fn eras(&mut self, eras: &[At<String>]) -> Vec<EraSelector> {
        eras.iter()
            .filter_map(|e| match EraSelector::parse(e) {
                Ok(sel) => Some(sel),
                Err(msg) => {
                    self.error(self.at(e), msg);
                    None
                }
            })
            .collect()
    }

    fn check_templates(&mut self, value: &TValue, known: &BTreeSet<String>) {
        let mut found = Vec::new();
        value.for_each_string(&mut |s, line, col| {
            if template::is_template(s) {
                found.push((s.to_string(), line, col));
            }
        });
        for (s, line, col) in found {
            self.check_template_str(&s, self.pos(line, col), known);
        }
    }

    fn check_template_str(&mut self, s: &str, pos: Pos, known: &BTreeSet<String>) {
        match template::referenced_variables(s) {
            Err(msg) => self.errors.push(
                LoadError::at(pos, format!("invalid template: {msg}"))
                    .with_help("templates use minijinja syntax: `{{ name }}`"),
            ),
            Ok(vars) => {
                self.uses.extend(vars.iter().cloned());
                for var in vars.iter().filter(|v| !known.contains(*v)) {
                    let help = match did_you_mean(var, known.iter().map(String::as_str)) {
                        Some(s) => format!("did you mean `{s}`? defined here: {}", list(known)),
                        None => format!("defined here: {}", list(known)),
                    };
                    self.errors.push(
                        LoadError::at(pos.clone(), format!("undefined template variable `{var}`"))
                            .with_help(help),
                    );
                }
            }
        }
    }

    /// Compile one step; `prefix` is the name of the group call it comes from.
    fn step(
        &mut self,
        step: At<model::Step>,
        known: &BTreeSet<String>,
        prefix: Option<&str>,
    ) -> Option<Step> {
        self.uses.clear();
        let step_pos = self.at(&step);
        let step = step.value;
        // Likewise the parameters this step requires (copying the known names only then:
        // per step, that copy was a noticeable part of loading a long scenario).
        let guarded;
        let known = if required_parameters(step.requires.as_deref())
            .next()
            .is_some()
        {
            let mut names = known.clone();
            names.extend(required_parameters(step.requires.as_deref()));
            guarded = names;
            &guarded
        } else {
            known
        };
        let Some(name) = &step.name else {
            self.errors.push(
                LoadError::at(step_pos, "missing required key `name`")
                    .with_help("every step has a `name` (its check id); a group call has `use:`"),
            );
            return None;
        };
        let pos = self.at(name);
        let full_name = match prefix {
            Some(p) => format!("{p}/{}", name.value),
            None => name.value.clone(),
        };
        if let Some(w) = &step.with {
            self.errors.push(
                LoadError::at(self.at(w), "`with` belongs to a group call")
                    .with_help("add `use: GROUP` to call a step group, or remove `with`"),
            );
        }
        let eras = step.eras.as_ref().map(|e| self.eras(e));
        let timeout = step.timeout.as_ref().and_then(|t| {
            match super::limits::duration(t, &super::limits::TIMEOUT) {
                Ok(d) => Some(d),
                Err(e) => {
                    let error = if humantime::parse_duration(t).is_ok_and(|d| d.is_zero()) {
                        LoadError::at(self.at(t), "a timeout of zero can never be met")
                            .with_help("expected a positive duration such as `500ms` or `10s`")
                    } else {
                        LoadError::at(self.at(t), format!("invalid timeout `{}`: {e}", **t))
                            .with_help("expected a duration such as `500ms`, `10s` or `1m`")
                    };
                    self.errors.push(error);
                    None
                }
            }
        });
        let retry = match &step.retry {
            None => None,
            Some(r) => {
                let interval = match &r.interval {
                    None => Some(std::time::Duration::from_millis(100)),
                    Some(i) => match super::limits::duration(i, &super::limits::RETRY_INTERVAL) {
                        Ok(d) => Some(d),
                        Err(e) => {
                            self.errors.push(
                                LoadError::at(
                                    self.at(i),
                                    format!("invalid interval `{}`: {e}", **i),
                                )
                                .with_help("expected a duration such as `200ms` or `1s`"),
                            );
                            None
                        }
                    },
                };
                if !super::limits::RETRY_COUNT.contains(&r.count) {
                    self.errors.push(
                        LoadError::at(
                            self.at(r),
                            format!("retry count {} is out of range", r.count),
                        )
                        .with_help(format!(
                            "expected {} extra attempts",
                            super::limits::describe(&super::limits::RETRY_COUNT)
                        )),
                    );
                }
                interval.map(|d| (r.count, d))
            }
        };
        let kinds = [
            step.request.as_ref().map(|r| (r.line, r.col)),
            step.notification.as_ref().map(|r| (r.line, r.col)),
            step.raw.as_ref().map(|r| (r.line, r.col)),
            step.contract.as_ref().map(|r| (r.line, r.col)),
            step.check.as_ref().map(|r| (r.line, r.col)),
            step.handshake
                .as_ref()
                .filter(|h| h.value)
                .map(|r| (r.line, r.col)),
        ];
        let given = kinds.iter().flatten().count();
        if given != 1 {
            let msg = if given == 0 {
                "step has nothing to send"
            } else {
                "step has more than one of `request`, `notification`, `raw`, `contract`, `check`, `handshake`"
            };
            self.errors.push(
                LoadError::at(pos.clone(), msg).with_help(
                    "give exactly one of `request`, `notification`, `raw`, `contract`, `check` or `handshake: true`",
                ),
            );
            return None;
        }
        let action = if let Some(r) = step.request {
            let r = r.value;
            for v in r.params.iter().chain(r.id.iter()) {
                self.check_templates(v, known);
            }
            self.check_map_templates(r.meta.as_ref(), known);
            self.check_map_templates(r.headers.as_ref(), known);
            Action::Request {
                method: r.method.value,
                fixed_params: r.params.as_ref().and_then(template::fixed_json),
                params: r.params,
                id: r.id,
                meta: r.meta.unwrap_or_default(),
                headers: r.headers.unwrap_or_default(),
                paginate: r.paginate,
            }
        } else if let Some(n) = step.notification {
            let n = n.value;
            if let Some(p) = &n.params {
                self.check_templates(p, known);
            }
            self.check_map_templates(n.meta.as_ref(), known);
            self.check_map_templates(n.headers.as_ref(), known);
            Action::Notification {
                method: n.method.value,
                fixed_params: n.params.as_ref().and_then(template::fixed_json),
                params: n.params,
                meta: n.meta.unwrap_or_default(),
                headers: n.headers.unwrap_or_default(),
            }
        } else if step.handshake.as_ref().is_some_and(|h| h.value) {
            Action::Handshake
        } else if let Some(c) = step.check {
            if !step.expect.is_empty() {
                self.errors.push(
                    LoadError::at(self.at(&c), "a `check` step takes no `expect`")
                        .with_help("a built-in check decides for itself what passes"),
                );
                return None;
            }
            let c = c.value;
            let wants_feature = *c.kind == model::CheckKind::DeprecatedFeatureUnused;
            match (&c.feature, wants_feature) {
                (None, true) => {
                    self.errors.push(
                        LoadError::at(pos.clone(), "`deprecated_feature_unused` needs a `feature`")
                            .with_help("one of sampling, roots, include_context, http_sse, dynamic_client_registration"),
                    );
                    return None;
                }
                (Some(f), false) => {
                    self.error(
                        self.at(f),
                        "`feature` applies only to `kind: deprecated_feature_unused`",
                    );
                    return None;
                }
                _ => {}
            }
            let feature = c.feature.map(|f| f.value);
            let wire = c.kind.value == super::model::CheckKind::WireValid;
            // `wire_valid` sends its method (any; none: it only judges what came before).
            let default = if wire { "" } else { "tools/list" };
            let method = c.method.map(|m| m.value).unwrap_or_else(|| default.into());
            if !wire
                && !matches!(
                    method.as_str(),
                    "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list"
                )
            {
                self.errors.push(
                    LoadError::at(pos.clone(), format!("`{method}` is not a list method"))
                        .with_help("expected tools/list, prompts/list, resources/list or resources/templates/list"),
                );
                return None;
            }
            if let Some(n) = c
                .count
                .as_ref()
                .filter(|n| !super::limits::CHECK_COUNT.contains(&n.value))
            {
                let message = if n.value == 0 {
                    "`count` must be at least 1".to_string()
                } else {
                    format!("`count` {} is out of range", n.value)
                };
                self.errors
                    .push(LoadError::at(self.at(n), message).with_help(format!(
                        "expected {}, e.g. `count: 32`",
                        super::limits::describe(&super::limits::CHECK_COUNT)
                    )));
                return None;
            }
            Action::Check {
                kind: c.kind.value,
                method,
                options: crate::dsl::scenario::CheckOptions {
                    safe_tools: c.safe_tools,
                    count: c.count.map(|n| n.value),
                    feature,
                },
            }
        } else if let Some(c) = step.contract {
            if !step.expect.is_empty() {
                self.errors.push(
                    LoadError::at(self.at(&c), "a `contract` step takes no `expect`").with_help(
                        "the rules file decides which changes fail (default: breaking changes)",
                    ),
                );
                return None;
            }
            self.contract(c.value)?
        } else {
            let raw = step.raw.expect("one action is present").value;
            self.check_templates(&raw.body, known);
            self.check_map_templates(raw.headers.as_ref(), known);
            Action::Raw {
                body: raw.body,
                headers: raw.headers.unwrap_or_default(),
                http_method: raw.http_method.map(|m| m.value.to_uppercase()),
                fresh: raw.fresh,
            }
        };
        let is_notification = matches!(action, Action::Notification { .. });
        let mut expects = Vec::new();
        for e in step.expect {
            let epos = self.at(&e);
            if let Some(compiled) = self.expectation(e.value, epos.clone(), known) {
                let about_notifications = matches!(compiled.kind, ExpectKind::Notifications { .. });
                if is_notification
                    && !about_notifications
                    && !matches!(
                        compiled.kind,
                        ExpectKind::NoResponse(_) | ExpectKind::Http { .. }
                    )
                {
                    self.errors.push(
                        LoadError::at(epos, "a notification has no response to check").with_help(
                            "notifications allow only `noResponse`, `http` and `notifications` expectations",
                        ),
                    );
                    continue;
                }
                if matches!(compiled.kind, ExpectKind::Duration(_))
                    && matches!(action, Action::Handshake)
                {
                    self.errors.push(
                        LoadError::at(epos, "a `handshake` step sends nothing to time")
                            .with_help("check `duration` on a step that sends a request"),
                    );
                    continue;
                }
                if about_notifications && matches!(action, Action::Handshake) {
                    self.errors.push(
                        LoadError::at(epos, "a `handshake` step keeps no notifications")
                            .with_help("check notifications on a step that sends a request"),
                    );
                    continue;
                }
                expects.push(compiled);
            }
        }
        let mut captures = Vec::new();
        for (name, path) in step.capture {
            let cpos = self.at(&path);
            if let Some(compiled) = self.jsonpath(&path) {
                captures.push(Capture {
                    name,
                    path: compiled,
                    source: path.value,
                    pos: cpos,
                });
            }
        }
        Some(Step {
            name: full_name,
            description: step.description,
            pos,
            eras,
            transport: step.transport,
            requires: self.requires(step.requires.map(|r| *r), known),
            level: match step.level {
                Some(model::StepLevel::Should) => Level::Should,
                _ => Level::Must,
            },
            timeout,
            retry,
            action,
            expects,
            captures,
            uses: std::mem::take(&mut self.uses),
            call: None,
        })
    }

    fn contract(&mut self, c: model::ContractCheck) -> Option<Action> {
        let base = Path::new(&self.file.name)
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let baseline = base.join(&c.baseline.value);
        if !baseline.join("tools.json").is_file() {
            self.errors.push(
                LoadError::at(self.at(&c.baseline), format!("`{}` is not a snapshot folder", baseline.display()))
                    .with_help("create it with `mcpspec snapshot <target> --out DIR`; the path is relative to the scenario file"),
            );
            return None;
        }
        let rules = match &c.rules {
            None => crate::contract::rules::Rules::default(),
            Some(r) => match crate::contract::rules::Rules::load(&base.join(&r.value)) {
                Ok(rules) => rules,
                Err(errors) => {
                    let at = self.at(r);
                    for e in errors.0 {
                        self.errors.push(e.referenced_at(at.clone(), "rules file"));
                    }
                    return None;
                }
            },
        };
        Some(Action::Contract { baseline, rules })
    }

    fn requires(&mut self, r: Option<model::Requires>, known: &BTreeSet<String>) -> Requires {
        let Some(r) = r else {
            return Requires::default();
        };
        for (expr, reason) in &r.defined {
            // Checked as the template `{{ expr }}`: its variables must be defined somewhere.
            self.check_template_str(&format!("{{{{ {expr} }}}}"), self.at(reason), known);
            if reason.trim().is_empty() {
                self.errors.push(
                    LoadError::at(self.at(reason), format!("`defined: {expr}` has no reason"))
                        .with_help("give the reason reported when it is skipped, e.g. `no resource to read`"),
                );
            }
        }
        for c in &r.capabilities {
            if c.trim().is_empty() {
                self.error(self.at(c), "empty capability name");
            }
        }
        for p in &r.parameters {
            if !is_variable_name(p) {
                self.errors.push(
                    LoadError::at(self.at(p), format!("`{}` is not a parameter name", **p))
                        .with_help(
                            "parameter names are letters, digits and `_`, as in `--set NAME=VALUE`",
                        ),
                );
            }
        }
        let mut versions = |list: &[At<String>]| -> Vec<EraSelector> {
            list.iter()
                .filter_map(|v| match EraSelector::parse(v) {
                    Ok(EraSelector::Auto) => {
                        self.error(
                            self.at(v),
                            "`auto` is no protocol version: use `legacy`, `modern` or a revision",
                        );
                        None
                    }
                    Ok(sel) => Some(sel),
                    Err(e) => {
                        self.error(self.at(v), &e);
                        None
                    }
                })
                .collect()
        };
        let (includes, excludes) = match &r.supported_versions {
            Some(sv) => (versions(&sv.includes), versions(&sv.excludes)),
            None => (Vec::new(), Vec::new()),
        };
        for h in &r.handshake_headers {
            if reqwest::header::HeaderName::from_bytes(h.as_bytes()).is_err() {
                self.error(self.at(h), format!("`{}` is not an HTTP header name", **h));
            }
        }
        Requires {
            capabilities: r.capabilities.into_iter().map(|c| c.value).collect(),
            capabilities_absent: r.capabilities_absent.into_iter().map(|c| c.value).collect(),
            transport: r.transport,
            parameters: r.parameters.into_iter().map(|p| p.value).collect(),
            auth_required: r.auth_required,
            loopback: r.loopback,
            versions_include: includes,
            versions_exclude: excludes,
            handshake_headers: r.handshake_headers.into_iter().map(|h| h.value).collect(),
            legacy_handshake: r.legacy_handshake,
            defined: r
                .defined
                .into_iter()
                .map(|(expr, reason)| (expr, reason.value))
                .collect(),
        }
    }

    fn check_map_templates(
        &mut self,
        map: Option<&IndexMap<String, TValue>>,
        known: &BTreeSet<String>,
    ) {
        for v in map.into_iter().flat_map(|m| m.values()) {
            self.check_templates(v, known);
        }
    }

    fn jsonpath(&mut self, path: &At<String>) -> Option<CompiledPath> {
        // Scenarios repeat their paths (`$.content[0].text` in every step): parse each once.
        if let Some(parsed) = self.jsonpaths.get(path.as_str()) {
            return Some(parsed.clone());
        }
        match CompiledPath::parse(path) {
            Ok(p) => {
                self.jsonpaths.insert(path.value.clone(), p.clone());
                Some(p)
            }
            Err(e) => {
                // A huge path is in the snippet already.
                let message = if path.len() > 100 {
                    format!("invalid JSONPath: {e}")
                } else {
                    format!("invalid JSONPath `{}`: {e}", **path)
                };
                self.errors
                    .push(LoadError::at(self.at(path), message).with_help(
                        "JSONPath follows RFC 9535, e.g. `$.tools[*].name` or `$.content[0].text`",
                    ));
                None
            }
        }
    }

    fn regex(&mut self, re: &At<String>) -> Option<Regex> {
        match Regex::new(re) {
            Ok(r) => Some(r),
            Err(e) => {
                let detail = e.to_string();
                let last = detail.lines().last().unwrap_or("").trim().to_string();
                self.errors.push(
                    LoadError::at(
                        self.at(re),
                        format!("invalid regular expression `{}`: {last}", **re),
                    )
                    .with_help("regular expressions use Rust `regex` syntax"),
                );
                None
            }
        }
    }

    fn schema(
        &mut self,
        schema: serde_json::Value,
        pos: Pos,
    ) -> Option<Arc<jsonschema::Validator>> {
        if let Err(e) = jsonschema::meta::validate(&schema) {
            self.errors.push(
                LoadError::at(pos, format!("invalid JSON Schema: {e}"))
                    .with_help("schemas follow JSON Schema 2020-12"),
            );
            return None;
        }
        match jsonschema::validator_for(&schema) {
            Ok(v) => Some(Arc::new(v)),
            Err(e) => {
                self.errors
                    .push(LoadError::at(pos, format!("invalid JSON Schema: {e}")));
                None
            }
        }
    }

    fn expectation(
        &mut self,
        mut e: Expectation,
        pos: Pos,
        known: &BTreeSet<String>,
    ) -> Option<Expect> {
        let kinds: Vec<&str> = [
            (e.schema.is_some() || e.schema_file.is_some(), "schema"),
            (e.error.is_some(), "error"),
            (e.is_error.is_some(), "isError"),
            (e.output_schema.is_some(), "outputSchema"),
            (e.http.is_some(), "http"),
            (e.no_response.is_some(), "noResponse"),
            (e.notifications.is_some(), "notifications"),
            (e.duration.is_some(), "duration"),
        ]
        .into_iter()
        .filter_map(|(present, name)| present.then_some(name))
        .collect();
        let predicates_given = e.equals.is_some()
            || e.not_equals.is_some()
            || e.contains.is_some()
            || e.matches.is_some()
            || e.type_.is_some()
            || e.length.is_some()
            || e.exists.is_some()
            || e.absent.is_some()
            || e.one_of.is_some()
            || e.unique.is_some()
            || e.increasing.is_some()
            || e.valid_schema.is_some()
            || e.gt.is_some()
            || e.gte.is_some()
            || e.lt.is_some()
            || e.lte.is_some();
        let schema_with_path = kinds == ["schema"] && e.path.is_some() && !predicates_given;
        // `notifications` takes `path` and predicates: they apply to each notification.
        let notifications = kinds == ["notifications"];
        if kinds.len() > 1
            || (kinds.len() == 1 && predicates_given && !notifications)
            || (kinds.len() == 1 && e.path.is_some() && !schema_with_path && !notifications)
        {
            self.errors.push(
                LoadError::at(pos, "an expectation has one kind; this one mixes several")
                    .with_help("split it into separate list items: `- {path: ..., equals: ...}`, `- error: {...}`, `- isError: true`, ..."),
            );
            return None;
        }
        if !notifications && (e.count.is_some() || e.within.is_some()) {
            let key = if e.count.is_some() { "count" } else { "within" };
            self.errors.push(
                LoadError::at(
                    pos,
                    format!("`{key}` applies only to a `notifications` expectation"),
                )
                .with_help("e.g. `- {notifications: notifications/progress, count: {gte: 1}}`"),
            );
            return None;
        }
        if notifications {
            return self.notifications(e, pos, known, predicates_given);
        }
        if kinds.is_empty() {
            let Some(path) = e.path.take() else {
                self.errors.push(LoadError::at(pos, "empty expectation").with_help(
                    "use one of `path` (with a predicate), `schema`, `schemaFile`, `error`, `isError`, `outputSchema`, `http`, `noResponse`, `notifications`, `duration`",
                ));
                return None;
            };
            if !predicates_given {
                self.errors.push(LoadError::at(self.at(&path), "`path` needs a predicate").with_help(
                    "add one of `equals`, `notEquals`, `contains`, `matches`, `type`, `length`, `exists`, `absent`, `oneOf`, `gt`, `gte`, `lt`, `lte`",
                ));
                return None;
            }
            let compiled = self.jsonpath(&path)?;
            let predicates = self.predicates(&mut e, &pos, known)?;
            return Some(Expect {
                pos,
                kind: ExpectKind::Path {
                    path: compiled,
                    source: path.value,
                    predicates,
                },
            });
        }
        let kind = match kinds[0] {
            "schema" => {
                let path = match &e.path {
                    Some(p) => Some((self.jsonpath(p)?, p.value.clone())),
                    None => None,
                };
                let validator = match (e.schema, e.schema_file) {
                    (Some(_), Some(f)) => {
                        self.error(self.at(&f), "give `schema` or `schemaFile`, not both");
                        return None;
                    }
                    (Some(inline), None) => {
                        let spos = self.pos(inline.line, inline.col);
                        self.schema(inline.to_json(), spos)?
                    }
                    (None, Some(file)) => {
                        let fpos = self.at(&file);
                        let value = self.schema_file(&file, fpos.clone())?;
                        self.schema(value, fpos)?
                    }
                    (None, None) => unreachable!("schema kind needs one of the keys"),
                };
                ExpectKind::Schema { path, validator }
            }
            "error" => {
                let err = e.error.expect("kind checked");
                if let Some(d) = &err.data {
                    self.check_templates(d, known);
                }
                let message = match &err.message {
                    Some(m) => Some(self.regex(m)?),
                    None => None,
                };
                ExpectKind::Error {
                    code: err.code,
                    message,
                    data: err.data,
                }
            }
            "isError" => ExpectKind::IsError(e.is_error.expect("kind checked")),
            "outputSchema" => ExpectKind::OutputSchema,
            "http" => {
                let http = e.http.expect("kind checked");
                let mut headers = Vec::new();
                for (name, re) in http.headers {
                    let compiled = match &re {
                        Some(r) => Some(self.regex(r)?),
                        None => None,
                    };
                    headers.push((name.to_ascii_lowercase(), compiled));
                }
                ExpectKind::Http {
                    status: http.status,
                    headers,
                }
            }
            "noResponse" => ExpectKind::NoResponse(e.no_response.expect("kind checked")),
            "duration" => self.duration(e.duration.expect("kind checked"), &pos)?,
            other => unreachable!("unknown kind {other}"),
        };
        Some(Expect { pos, kind })
    }

    /// The predicates of an expectation (taken out of it).
    fn predicates(
        &mut self,
        e: &mut Expectation,
        pos: &Pos,
        known: &BTreeSet<String>,
    ) -> Option<Vec<Predicate>> {
        let mut predicates = Vec::new();
        for v in [&e.equals, &e.not_equals, &e.contains]
            .into_iter()
            .flatten()
        {
            self.check_templates(v, known);
        }
        if let Some(v) = e.equals.take() {
            predicates.push(Predicate::Equals(v));
        }
        if let Some(v) = e.not_equals.take() {
            predicates.push(Predicate::NotEquals(v));
        }
        if let Some(v) = e.contains.take() {
            predicates.push(Predicate::Contains(v));
        }
        if let Some(re) = &e.matches {
            predicates.push(Predicate::Matches(self.regex(re)?));
        }
        if let Some(t) = &e.type_ {
            predicates.push(Predicate::Type(t.value));
        }
        if let Some(l) = e.length.take() {
            if !self.length_has_bound(&l, "length", pos) {
                return None;
            }
            predicates.push(Predicate::Length(l));
        }
        if let Some(x) = e.exists {
            predicates.push(Predicate::Exists(x));
        }
        if let Some(a) = e.absent {
            predicates.push(Predicate::Exists(!a));
        }
        if let Some(vs) = e.one_of.take() {
            self.check_templates(&vs, known);
            let is_template = vs.as_str().is_some_and(template::is_template);
            if !matches!(vs.kind, super::value::TKind::Seq(_)) && !is_template {
                self.errors.push(
                    LoadError::at(self.pos(vs.line, vs.col), "`oneOf` needs a list").with_help(
                        "give a list such as `[a, b]`, or a template that renders to a list",
                    ),
                );
                return None;
            }
            predicates.push(Predicate::OneOf(vs));
        }
        if let Some(u) = e.unique {
            predicates.push(Predicate::Unique(u));
        }
        if let Some(i) = e.increasing {
            predicates.push(Predicate::Increasing(i));
        }
        if let Some(v) = e.valid_schema {
            predicates.push(Predicate::ValidSchema(v));
        }
        for (op, bound) in [
            (CompareOp::Gt, e.gt),
            (CompareOp::Gte, e.gte),
            (CompareOp::Lt, e.lt),
            (CompareOp::Lte, e.lte),
        ] {
            if let Some(b) = bound {
                if !b.is_finite() {
                    self.errors.push(
                        LoadError::at(
                            pos.clone(),
                            format!("`{}` needs a finite number", op.name()),
                        )
                        .with_help("NaN and infinity compare with nothing"),
                    );
                    return None;
                }
                predicates.push(Predicate::Compare(op, b));
            }
        }
        Some(predicates)
    }

    /// A `length` or `count` comparison names at least one bound.
    fn length_has_bound(&mut self, l: &model::LengthSpec, key: &str, pos: &Pos) -> bool {
        if let model::LengthSpec::Compare(c) = l
            && c.gt.is_none()
            && c.gte.is_none()
            && c.lt.is_none()
            && c.lte.is_none()
        {
            self.errors.push(
                LoadError::at(pos.clone(), format!("`{key}` comparison without a bound"))
                    .with_help(format!(
                        "give a number or at least one of `gt`, `gte`, `lt`, `lte`, e.g. `{key}: {{gte: 1}}`"
                    )),
            );
            return false;
        }
        true
    }

    /// A `duration` expectation: each bound parsed (and range-checked) as a timeout is.
    fn duration(&mut self, d: At<model::DurationCompare>, pos: &Pos) -> Option<ExpectKind> {
        let mut bounds = Vec::new();
        let mut ok = true;
        for (op, text) in [
            (CompareOp::Gt, &d.gt),
            (CompareOp::Gte, &d.gte),
            (CompareOp::Lt, &d.lt),
            (CompareOp::Lte, &d.lte),
        ] {
            let Some(text) = text else { continue };
            match super::limits::duration(text, &super::limits::TIMEOUT) {
                Ok(bound) => bounds.push((op, bound)),
                Err(err) => {
                    ok = false;
                    self.errors.push(
                        LoadError::at(
                            self.at(text),
                            format!("`duration: {{{}: {}}}`: {err}", op.name(), **text),
                        )
                        .with_help("expected a duration such as `200ms` or `1.5s`"),
                    );
                }
            }
        }
        if ok && bounds.is_empty() {
            self.errors.push(
                LoadError::at(pos.clone(), "`duration` comparison without a bound").with_help(
                    "give at least one of `gt`, `gte`, `lt`, `lte`, e.g. `duration: {lt: 200ms}`",
                ),
            );
            return None;
        }
        ok.then_some(ExpectKind::Duration(bounds))
    }

    /// A `notifications` expectation: the method, `count`, `within`, and `path` with
    /// predicates over each received notification.
    fn notifications(
        &mut self,
        mut e: Expectation,
        pos: Pos,
        known: &BTreeSet<String>,
        predicates_given: bool,
    ) -> Option<Expect> {
        let method = e.notifications.take().expect("kind checked");
        if method.trim().is_empty() {
            self.errors.push(
                LoadError::at(self.at(&method), "`notifications` needs a method name")
                    .with_help("e.g. `notifications/progress`, or `*` for any notification"),
            );
            return None;
        }
        let path = match e.path.take() {
            Some(p) => {
                if !predicates_given {
                    self.errors.push(
                        LoadError::at(self.at(&p), "`path` needs a predicate").with_help(
                            "add one of `equals`, `contains`, `matches`, `type`, `length`, `exists`, `oneOf`, `gt`, `gte`, `lt`, `lte`",
                        ),
                    );
                    return None;
                }
                Some((self.jsonpath(&p)?, p.value))
            }
            None if predicates_given => {
                self.errors.push(
                    LoadError::at(pos, "predicates of `notifications` need a `path`").with_help(
                        "e.g. `path: \"$.params.level\"`: evaluated on each notification",
                    ),
                );
                return None;
            }
            None => None,
        };
        let predicates = self.predicates(&mut e, &pos, known)?;
        if let Some(c) = &e.count
            && !self.length_has_bound(c, "count", &pos)
        {
            return None;
        }
        let within = match &e.within {
            None => None,
            Some(w) => match humantime::parse_duration(w) {
                Ok(d) if d <= MAX_WITHIN => Some(d),
                Ok(_) => {
                    self.errors.push(
                        LoadError::at(self.at(w), format!("`within: {}` is too long", **w))
                            .with_help("notifications that arrive later than 1 minute after the response are not waited for"),
                    );
                    return None;
                }
                Err(err) => {
                    self.errors.push(
                        LoadError::at(self.at(w), format!("invalid duration `{}`: {err}", **w))
                            .with_help("expected a duration such as `200ms` or `1s`"),
                    );
                    return None;
                }
            },
        };
        Some(Expect {
            pos,
            kind: ExpectKind::Notifications {
                // `*` alone: any method, without a pattern to match.
                method: (method.value != "*").then_some(method.value),
                count: e.count,
                path,
                predicates,
                within,
            },
        })
    }

    fn schema_file(&mut self, file: &At<String>, pos: Pos) -> Option<serde_json::Value> {
        let base = Path::new(&self.file.name)
            .parent()
            .unwrap_or(Path::new("."));
        let path = base.join(&file.value);
        let text = match crate::source::read_text(&path) {
            Ok(t) => t,
            Err(e) => {
                self.error(
                    pos,
                    format!("cannot read schema file `{}`: {e}", path.display()),
                );
                return None;
            }
        };
        let parsed = if path.extension().is_some_and(|e| e == "json") {
            serde_json::from_str::<serde_json::Value>(&text).map_err(|e| e.to_string())
        } else {
            serde_saphyr::from_str::<serde_json::Value>(&text).map_err(|e| e.to_string())
        };
        match parsed {
            Ok(v) => Some(v),
            Err(e) => {
                self.error(
                    pos,
                    format!(
                        "schema file `{}` is not valid JSON/YAML: {e}",
                        path.display()
                    ),
                );
                None
            }
        }
    }
}

fn list(known: &BTreeSet<String>) -> String {
    known
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<u32> {
        let file = SourceFile::new("t.yaml", text);
        match parse_yaml::<ScenarioDoc>(&file) {
            Ok(_) => Vec::new(),
            Err(e) => {
                e.0.iter()
                    .map(|e| e.pos.as_ref().map_or(0, |p| p.line))
                    .collect()
            }
        }
    }

    /// Every bad step is reported, also the last; a YAML syntax error and a removed
    /// required key stay out of it.
    #[test]
    fn structural_errors_of_every_entry() {
        let two_bad = "scenario: s\nsteps:\n  - name: a\n    reqest: {}\n  - name: b\n    request: { method: x, paginate: 3 }\n";
        assert_eq!(lines(two_bad), [4, 6]);
        let with_good = "scenario: s\nsteps:\n  - name: a\n    reqest: {}\n  - name: ok\n    request: { method: x }\n  - name: b\n    requst: {}\n";
        assert_eq!(lines(with_good), [4, 8]);
        // `scenario: [1]` is wrong; blanking it out would only add "missing `scenario`".
        let bad_required = "scenario: [1]\nsteps:\n  - name: a\n    request: { method: x }\n";
        assert_eq!(lines(bad_required), [1]);
        let syntax =
            "scenario: s\nsteps:\n  - name: a\n    reqest: {\n  - name: b\n    requst: {}\n";
        assert_eq!(lines(syntax).len(), 1);
        let entries = yaml_entries(with_good);
        let spans: Vec<(usize, usize, Option<usize>)> =
            entries.iter().map(|e| (e.first, e.last, e.list)).collect();
        assert_eq!(
            spans,
            [
                (1, 1, None),
                (2, 8, None),
                (3, 4, Some(2)),
                (5, 6, Some(2)),
                (7, 8, Some(2))
            ]
        );
    }
}
