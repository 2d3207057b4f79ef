//! Compilation: typed model (with positions) → validated, compiled [`Scenario`]. Every
//! problem found is reported at once, each with `file:line:col` and a snippet. One file
//! per part of a scenario: steps ([`step`]), expectations ([`expect`]), calls of a pack's
//! step groups ([`group`]).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use crate::ground::json::path::CompiledPath;
use indexmap::IndexMap;

use super::document::{self, ScenarioDoc};
use super::scenario::expect::Expect;
use super::scenario::{Phase, Released, Requires, Scenario, Steps, roots_undeclared};
use super::scope::{Groups, Scope};
use super::template;
use crate::ground::load_error::{LoadError, LoadErrors, did_you_mean};
use crate::ground::source::{Pos, SourceFile};
use crate::ground::yaml::value::{At, TValue};
use crate::protocol::era::EraSelector;

mod client;
mod each;
mod expect;
mod golden;
mod group;
mod many;
mod step;
mod workload;

pub use client::compile_client;
pub use golden::compile_sanitizers;
pub(crate) use many::parse_scenarios;
pub use workload::compile_load_profile;

/// Built-in template variables, available in every step.
/// (`load` holds the iteration's values under `mcpspec load`, and the first iteration's
/// under `mcpspec run`: see [`super::workload::vars`].)
pub const BUILTIN_VARS: &[&str] = &["era", "revision", super::workload::VAR];

/// Parse and validate one scenario document.
pub fn parse_scenario(file: Arc<SourceFile>) -> Result<Scenario, LoadErrors> {
    parse_scenario_in(file, &Arc::default())
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
    let compiler = || {
        let mut compiler = Compiler::new(&file);
        compiler.params = scope.params.clone();
        compiler.groups = scope.groups.clone();
        compiler.release = release;
        compiler
    };
    let doc: ScenarioDoc = match crate::ground::yaml::parse_recovering(&file) {
        Ok(doc) => doc,
        // Structural mistakes: the rest of the file is checked too, so one run reports
        // every independent mistake (what follows from a blanked entry is left out).
        Err((errors, Some(rest))) => {
            let more = compiler().scenario(rest.doc).err().unwrap_or_default();
            return Err(rest.blanked.merge(errors, more));
        }
        Err((errors, None)) => return Err(errors),
    };
    let mut scenario = compiler().scenario(doc)?;
    scenario.scope = scope.clone();
    Ok(scenario)
}

impl Scenario {
    /// The steps to run: the compiled ones, or (released) compiled again now. Compiling
    /// again can only fail if a file the scenario names changed since validation (a
    /// `schemaFile`, a contract check's baseline folder or rules file).
    pub fn compiled_steps(&self) -> Result<Steps<'_>, LoadErrors> {
        let Some(released) = &self.released else {
            return Ok(Steps::Borrowed(&self.steps));
        };
        let mut steps = parse_scenario_in(self.file.clone(), &self.scope)?.steps;
        let lines: Vec<u32> = steps.iter().map(|s| s.pos.line).collect();
        if lines != released.step_lines {
            return Err(LoadErrors::from(LoadError::at(
                self.pos.clone(),
                "the scenario's steps changed between validation and run",
            )));
        }
        steps.truncate(released.keep);
        Ok(Steps::Owned(steps))
    }
}

/// `s` without spare capacity.
fn exact(mut s: String) -> String {
    s.shrink_to_fit();
    s
}

/// The names listed under `requires: { parameters: [...] }`.
fn required_parameters(r: Option<&document::RequiresDoc>) -> impl Iterator<Item = String> + '_ {
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
    /// What the file's regular expressions (`matches:`, schema patterns) cost so far.
    patterns: crate::ground::bounds::PatternBudget,
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
            patterns: Default::default(),
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
        let mut out = each::Collected::default();
        if self.release {
            out.step_lines.reserve(doc.steps.len());
        } else {
            out.steps.reserve(doc.steps.len());
        }
        self.phase(doc.setup, Phase::Setup, &doc.vars, &mut known, &mut out);
        self.phase(doc.steps, Phase::Main, &doc.vars, &mut known, &mut out);
        self.phase(
            doc.teardown,
            Phase::Teardown,
            &doc.vars,
            &mut known,
            &mut out,
        );
        let each::Collected {
            steps,
            step_lines,
            step_names,
            changes_target,
            writes,
            called_tools,
            other_writes,
            connection_life,
            wire_check,
            own_probe,
            judges_run,
            names,
            roots_step,
            ..
        } = out;
        let read_calls = (writes.is_some() && !other_writes).then(|| {
            called_tools
                .into_iter()
                .map(String::into_boxed_str)
                .collect()
        });
        let load = doc
            .load
            .and_then(|l| self.workload(l, &doc.vars, &doc.scenario, &names))
            .map(Arc::new);
        let requires = self.requires(doc.requires, &known);
        let client = doc
            .client
            .and_then(|c| self.client(c, &known))
            .map(Arc::new);
        // Without a client of its own, its pack's or the project's may declare `roots`.
        if let (Some(client), Some(at)) = (&client, &roots_step)
            && let Some(e) = roots_undeclared(Some(client), at)
        {
            self.errors.push(e);
        }
        if !self.errors.is_empty() {
            return Err(self.errors);
        }
        // What a released scenario keeps for the whole run is trimmed to its length: the
        // YAML reader's strings carry spare capacity.
        let mut tags = doc.tags;
        tags.iter_mut().for_each(String::shrink_to_fit);
        tags.shrink_to_fit();
        Ok(Scenario {
            id: exact(doc.scenario.value),
            description: doc.description.map(exact),
            tags,
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
            changes_target,
            exclusive: doc.exclusive,
            fresh: doc.fresh,
            client,
            load,
            pack_load: None,
            writes,
            read_calls,
            connection_life,
            wire_check,
            own_probe,
            judges_run,
            roots_step,
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

    fn eras(&mut self, eras: &[At<String>]) -> Vec<EraSelector> {
        eras.iter()
            .filter_map(|e| match EraSelector::parse(e) {
                Ok(sel) => Some(sel),
                Err(msg) => {
                    let error =
                        LoadError::at(self.at(e), msg).suggesting(e, crate::protocol::era::NAMES);
                    self.errors.push(error);
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
        // Keys are rendered too (`"{{ field }}": 1`); a key's position is its value's.
        fn keys(v: &TValue, found: &mut Vec<(String, u32, u32)>) {
            match &v.kind {
                crate::ground::yaml::value::TKind::Map(entries) => {
                    for (key, item) in entries {
                        if template::is_template(key) {
                            found.push((key.clone(), item.line, item.col));
                        }
                        keys(item, found);
                    }
                }
                crate::ground::yaml::value::TKind::Seq(items) => {
                    items.iter().for_each(|item| keys(item, found))
                }
                _ => {}
            }
        }
        keys(value, &mut found);
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
                for name in template::unknown_filters(s) {
                    let known_filters = [
                        "fromjson", "tojson", "length", "first", "last", "join", "upper", "lower",
                        "default", "int", "float", "string", "replace", "trim",
                    ];
                    let help = match did_you_mean(&name, known_filters) {
                        Some(near) => format!("did you mean `{near}`? filters are minijinja's, and `fromjson`"),
                        None => "filters are minijinja's (`length`, `first`, `join`, `tojson`, ...) and `fromjson`".into(),
                    };
                    self.errors.push(
                        LoadError::at(pos.clone(), format!("unknown filter `{name}`"))
                            .with_help(help),
                    );
                }
                // A template of constants has the same value at every run: one that cannot
                // be rendered within the bounds is refused here, with its position.
                if vars.is_empty()
                    && let Err(why) = template::static_budget(s)
                {
                    self.errors.push(LoadError::at(pos.clone(), why).with_help(
                        "build large test data outside the template (a file, or a shorter value)",
                    ));
                }
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

    fn requires(&mut self, r: Option<document::RequiresDoc>, known: &BTreeSet<String>) -> Requires {
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
                        let error =
                            LoadError::at(self.at(v), e).suggesting(v, crate::protocol::era::NAMES);
                        self.errors.push(error);
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
            served: r.served.into_iter().map(|m| m.value).collect(),
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
}

pub(super) fn list(known: &BTreeSet<String>) -> String {
    known
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Compile one expectation outside a scenario (an eval set's argument predicates): the
/// same checks and messages as in a step; only built-in template variables are known.
pub fn compile_expectation(
    file: &Arc<SourceFile>,
    e: document::Expectation,
    pos: Pos,
) -> Result<Expect, LoadErrors> {
    let mut c = Compiler::new(file);
    let known: BTreeSet<String> = BUILTIN_VARS.iter().map(|s| s.to_string()).collect();
    match c.expectation(e, pos, &known) {
        Some(x) if c.errors.is_empty() => Ok(x),
        _ => Err(c.errors),
    }
}
