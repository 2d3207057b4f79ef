//! Scenarios as the engine runs them: validated, with compiled JSONPaths, regexes and
//! schemas, and a source position on every node that can fail.

use std::sync::Arc;
use std::time::Duration;

use crate::ground::json::path::CompiledPath;
use indexmap::IndexMap;

use super::scope::Scope;
use crate::ground::source::{Pos, SourceFile};
use crate::ground::yaml::value::TValue;
use crate::protocol::era::EraSelector;
use crate::results::outcome::Level;

mod client;
pub mod expect;
mod requires;

use expect::Expect;

pub use client::{
    Answer, ClientScript, DEFAULT_MAX_ROUNDS, ElicitReply, Roots, SamplingReply, ToolUseReply,
    roots_undeclared,
};
pub use requires::{Requires, capability_declared};

#[derive(Debug)]
pub struct Scenario {
    pub id: String,
    pub description: Option<String>,
    pub tags: Vec<String>,
    /// Empty: applies to every era.
    pub eras: Vec<EraSelector>,
    pub requires: Requires,
    pub vars: Vec<(String, TValue)>,
    pub steps: Vec<Step>,
    pub file: Arc<SourceFile>,
    pub pos: Pos,
    /// Name of the pack the scenario belongs to.
    pub pack: Option<String>,
    /// Version of that pack.
    pub pack_version: Option<String>,
    /// The pack's parameter values (only the set ones): template variables, like `--set`.
    pub params: serde_json::Map<String, serde_json::Value>,
    /// The pack's `requires`: unmet, every step of the scenario is skipped.
    pub pack_requires: Option<Arc<PackRequirement>>,
    /// What the scenario was compiled against (parameter names, the pack's groups): enough
    /// to compile its steps again from `file`.
    pub scope: Arc<Scope>,
    /// Set when the compiled steps were dropped once validated ([`Released`]).
    pub released: Option<Released>,
    /// A step calls the change tool (parameter `list_change_tool`): the scenario changes
    /// what every client of a shared server sees, so over HTTP it runs alone.
    pub changes_target: bool,
    /// `exclusive: true`: the author says the scenario changes what others read; it runs
    /// alone on any transport (a stdio server may share a database, say).
    pub exclusive: bool,
    /// `fresh:` of the scenario, else of its pack: whether it gets a server process of its
    /// own over stdio (see `engine::pool`).
    pub fresh: Option<bool>,
    /// `client:` of the scenario, else of its pack, else of `mcpspec.yaml`: what the client
    /// declares and answers. `None`: nothing declared.
    pub client: Option<Arc<ClientScript>>,
    /// `load:`: how `mcpspec load` runs it (its profile, weight and rows).
    pub load: Option<Arc<super::workload::Workload>>,
    /// Its pack's `load:` block, when the pack has one.
    pub pack_load: Option<Arc<super::workload::PackWorkload>>,
    /// Why a step may change what another scenario on the same process would see (the
    /// first such step), when one does: without `fresh: false` it gets its own process.
    pub writes: Option<String>,
    /// When every step that may write is a `tools/call` of a tool named in the file (no
    /// template, not as a task): those tools. Over stdio the scenario then shares its era's
    /// warm process when each of them declares `readOnlyHint: true` and not
    /// `openWorldHint: true` (`engine::pool::share_read_only_calls`).
    /// (A boxed slice, sorted and without repeats: it stays with a released scenario.)
    pub read_calls: Option<Box<[Box<str>]>>,
    /// Why a step tests the connection's life (a handshake it sends itself, a session it
    /// ends), when one does: it always gets its own process.
    pub connection_life: Option<String>,
    /// A step is a `wire_valid` check: the connection validates every message it receives.
    pub wire_check: bool,
    /// The first `roots` step: the scenario's client must declare `roots` (checked when the
    /// scenario's, its pack's or the project's `client:` is known).
    pub roots_step: Option<Pos>,
    /// A step's probe disturbs a process of its own (the parse-error checks): over stdio
    /// the scenario runs after its era's other sharing scenarios, so the probe can take a
    /// warm process nobody needs any more instead of starting one (`engine::pool`).
    pub own_probe: bool,
    /// A step judges what the run's other scenarios' connections received (the
    /// undeclared-capability checks): the scenario runs after all of them.
    pub judges_run: bool,
}

/// A scenario's compiled steps: its own, or compiled again for one run (steps are not
/// `Clone`, hence not a `Cow`).
pub enum Steps<'a> {
    Borrowed(&'a [Step]),
    Owned(Vec<Step>),
}

impl std::ops::Deref for Steps<'_> {
    type Target = [Step];
    fn deref(&self) -> &[Step] {
        match self {
            Steps::Borrowed(steps) => steps,
            Steps::Owned(steps) => steps,
        }
    }
}

/// What remains of a scenario's steps once they are released (dropped after validation;
/// [`Scenario::compiled_steps`] compiles them again from the source text when the scenario
/// runs): compiled steps (values with positions, JSONPaths, regexes, schema validators) are
/// most of a loaded scenario's memory, and a run needs them only while the scenario runs.
#[derive(Debug)]
pub struct Released {
    /// Source line of each step, for `FILE:LINE` selection.
    pub step_lines: Vec<u32>,
    /// Name (check id) of each step, for checking a baseline's entries.
    pub step_names: Vec<String>,
    /// How many of the steps run (a `FILE:LINE` selection keeps a prefix).
    pub keep: usize,
}

impl Scenario {
    /// Source line of each step (released or not).
    pub fn step_lines(&self) -> Vec<u32> {
        match &self.released {
            Some(r) => r.step_lines.clone(),
            None => self.steps.iter().map(|s| s.pos.line).collect(),
        }
    }

    /// Name (check id) of each step (released or not).
    pub fn step_names(&self) -> Vec<&str> {
        match &self.released {
            Some(r) => r.step_names.iter().map(String::as_str).collect(),
            None => self.steps.iter().map(|s| s.name.as_str()).collect(),
        }
    }

    /// A `roots` step while the scenario's client (its own, its pack's or the project's,
    /// as resolved so far) does not declare `roots`: the error at the step.
    pub fn roots_undeclared(&self) -> Option<crate::ground::load_error::LoadError> {
        roots_undeclared(self.client.as_deref(), self.roots_step.as_ref()?)
    }

    /// Keep only the first `n` steps.
    pub fn truncate_steps(&mut self, n: usize) {
        match &mut self.released {
            Some(r) => r.keep = r.keep.min(n),
            None => self.steps.truncate(n),
        }
    }
}

/// A pack's requirements, checked against each connection.
#[derive(Debug)]
pub struct PackRequirement {
    pub pack: String,
    /// Empty: any era.
    pub eras: Vec<EraSelector>,
    pub capabilities: Vec<String>,
}

impl PackRequirement {
    /// Why a connection does not meet the pack's requirements, if it does not.
    pub fn unmet(
        &self,
        kind: crate::protocol::era::EraKind,
        revision: &str,
        capabilities: &serde_json::Value,
    ) -> Option<String> {
        if !self.eras.is_empty()
            && !self
                .eras
                .iter()
                .any(|e| e.matches_negotiated(kind, revision))
        {
            let eras: Vec<String> = self.eras.iter().map(EraSelector::label).collect();
            return Some(format!(
                "pack `{}` requires eras [{}]; the connection negotiated {} ({revision})",
                self.pack,
                eras.join(", "),
                kind.as_str()
            ));
        }
        self.capabilities
            .iter()
            .find(|c| !capability_declared(capabilities, c))
            .map(|c| {
                format!(
                    "pack `{}` requires the `{c}` capability, which the server does not declare",
                    self.pack
                )
            })
    }
}

/// The arguments of one group call, shared by the steps the call expanded to: bound as
/// template variables while those steps run, then unbound.
#[derive(Debug)]
pub struct GroupCall {
    pub group: String,
    pub args: Vec<(String, TValue)>,
}

/// `each: "{{ name }}"` over a list an earlier step captured: its rows are only known
/// when the run reaches it. The steps it compiled to (one, or a group call's) share it and
/// run once per item of the list, each time named `base[label]`.
#[derive(Debug)]
pub struct LiveEach {
    /// The captured variable holding the list.
    pub over: String,
    /// The row's variable (`row`, or the name given with `as`).
    pub var: String,
    /// The step's name, which the row's label follows.
    pub base: String,
}

impl LiveEach {
    /// The name of `step` (one of this `each`'s) in the row labelled `label`.
    pub fn row_name(&self, step: &str, label: &str) -> String {
        match step.strip_prefix(self.base.as_str()) {
            Some(rest) => format!("{}[{label}]{rest}", self.base),
            None => format!("{step}[{label}]"),
        }
    }
}

#[derive(Debug)]
pub struct Step {
    pub name: String,
    pub description: Option<String>,
    pub pos: Pos,
    pub eras: Option<Vec<EraSelector>>,
    pub transport: Option<super::document::TransportKind>,
    pub requires: Requires,
    /// The level without a rule, or the rule's newest: see [`Step::rule`].
    pub level: Level,
    /// `rule: ID`: the row of the rule table whose level at the negotiated revision is the
    /// step's (not a rule there: the step is skipped).
    pub rule: Option<&'static crate::protocol::rules::Rule>,
    pub timeout: Option<Duration>,
    /// Extra attempts and the pause between them.
    pub retry: Option<(u32, Duration)>,
    pub action: Action,
    pub expects: Vec<Expect>,
    pub captures: Vec<Capture>,
    /// Template variables this step refers to.
    pub uses: std::collections::BTreeSet<String>,
    /// Set on the steps of an expanded group call (and on each row of an `each` step).
    pub call: Option<Arc<GroupCall>>,
    /// Set on the steps of an `each` over a captured list (run once per item).
    pub each: Option<Arc<LiveEach>>,
    /// Setup, main or teardown step.
    pub phase: Phase,
}

impl Step {
    /// The step calls the change tool: its templates name `list_change_tool`, or its
    /// built-in check reads it.
    pub fn changes_target(&self) -> bool {
        use super::document::check::LIST_CHANGE_TOOL;
        self.uses.contains(LIST_CHANGE_TOOL)
            || self
                .requires
                .parameters
                .iter()
                .any(|p| p == LIST_CHANGE_TOOL)
            || matches!(&self.action, Action::Check { kind, .. } if kind.parameters().contains(&LIST_CHANGE_TOOL))
    }
}

/// What a step does to the server process it runs on, for sharing one between scenarios.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessUse {
    /// Only reads: another scenario on the same process sees no trace of it.
    Reads,
    /// May change what a later scenario sees (the reason).
    Writes(String),
    /// Tests the connection's own life (the reason): a process of its own, always.
    ConnectionLife(String),
}

impl Step {
    /// What the step does to its process. Requests are judged by method (the spec's reads,
    /// `crate::protocol::methods::READ_ONLY`); a raw message could be anything unless it
    /// goes over a fresh connection of its own.
    pub fn process_use(&self) -> ProcessUse {
        use crate::protocol::methods as m;
        let sends = |method: &str| {
            if m::CONNECTION_LIFE.contains(&method) {
                ProcessUse::ConnectionLife(format!("step `{}` sends `{method}`", self.name))
            } else if m::READ_ONLY.contains(&method) {
                ProcessUse::Reads
            } else {
                ProcessUse::Writes(format!("step `{}` sends `{method}`", self.name))
            }
        };
        match &self.action {
            Action::Request { method, .. } => sends(method),
            // Cancelling is harmless: a request of this scenario, or none.
            Action::Notification { method, .. } if method == m::NOTIFICATIONS_CANCELLED => {
                ProcessUse::Reads
            }
            Action::Notification { method, .. } => sends(method),
            // The roots are the scenario's client's: nothing another scenario sees (a legacy
            // client of its own has a process of its own).
            Action::Raw { fresh: true, .. }
            | Action::Handshake
            | Action::Contract { .. }
            | Action::Roots(_) => ProcessUse::Reads,
            Action::Raw { .. } => {
                ProcessUse::Writes(format!("step `{}` sends a raw message", self.name))
            }
            Action::Check { kind, .. } if kind.tests_connection_life() => {
                ProcessUse::ConnectionLife(format!("step `{}` ends its session", self.name))
            }
            Action::Check { .. } => ProcessUse::Reads,
        }
    }
}

impl Step {
    /// The tool a `tools/call` step calls, when its name is written in the file (no
    /// template) and it is not run as a task.
    pub fn called_tool(&self) -> Option<&str> {
        match &self.action {
            Action::Request {
                method,
                params: Some(params),
                task: None,
                ..
            } if method == crate::protocol::methods::TOOLS_CALL => params
                .get("name")
                .and_then(|n| n.as_str())
                .filter(|n| !n.contains("{{")),
            _ => None,
        }
    }
}

/// Where a step sits in its scenario: `setup` steps run first (a failure skips the main
/// steps), `teardown` steps run last, whatever happened before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Phase {
    Setup,
    #[default]
    Main,
    Teardown,
}

#[derive(Debug)]
pub enum Action {
    Request {
        method: String,
        params: Option<TValue>,
        /// `params` as JSON, made once when they contain no template.
        fixed_params: Option<serde_json::Value>,
        id: Option<TValue>,
        meta: IndexMap<String, TValue>,
        headers: IndexMap<String, TValue>,
        paginate: bool,
        /// `task:`: run it as a task (2025-11-25).
        task: Option<TaskRun>,
    },
    Notification {
        method: String,
        params: Option<TValue>,
        /// `params` as JSON, made once when they contain no template.
        fixed_params: Option<serde_json::Value>,
        meta: IndexMap<String, TValue>,
        headers: IndexMap<String, TValue>,
    },
    Raw {
        body: TValue,
        headers: IndexMap<String, TValue>,
        http_method: Option<String>,
        fresh: bool,
    },
    /// Judge the connection's handshake result.
    Handshake,
    /// A built-in multi-request check.
    Check {
        kind: super::document::check::CheckKind,
        method: String,
        options: CheckOptions,
    },
    /// Replace the client's roots for the rest of the scenario (legacy, with `listChanged`
    /// declared: and send `notifications/roots/list_changed`).
    Roots(Roots),
    /// Snapshot the live server and diff it with a baseline snapshot.
    Contract {
        baseline: std::path::PathBuf,
        rules: crate::language::contract_rules::Rules,
    },
}

/// How a task step runs (`task:` of a request).
#[derive(Debug, Clone)]
pub struct TaskRun {
    pub ttl: Option<u64>,
    /// The pause between polls when the server suggests none.
    pub poll_interval: Duration,
    pub max_polls: u32,
    pub cancel: bool,
}

impl Default for TaskRun {
    fn default() -> Self {
        Self {
            ttl: None,
            poll_interval: Duration::from_millis(100),
            max_polls: 1000,
            cancel: false,
        }
    }
}

/// Settings of a built-in check (see `document::check::Check`).
#[derive(Debug, Default, Clone)]
pub struct CheckOptions {
    pub safe_tools: Option<Vec<String>>,
    pub count: Option<u32>,
    /// `deprecated_feature_unused`: the feature (always set for that kind).
    pub feature: Option<super::document::check::DeprecatedFeature>,
}

/// A JSONPath as compiled: parsed once, or a template (`$.tools[?@.name == '{{ tool }}']`)
/// rendered against the step's variables (values escaped for a string literal) and parsed
/// when the step is judged.
#[derive(Debug, Clone)]
pub enum PathExpr {
    Fixed(CompiledPath),
    Template(String),
}

impl PathExpr {
    /// The path to query with: the fixed one, or the template rendered and parsed.
    pub fn resolve(
        &self,
        ctx: &serde_json::Value,
    ) -> Result<std::borrow::Cow<'_, CompiledPath>, String> {
        match self {
            PathExpr::Fixed(p) => Ok(std::borrow::Cow::Borrowed(p)),
            PathExpr::Template(src) => {
                let text = super::template::render_path(src, ctx)
                    .map_err(|e| format!("template error in `{src}`: {e}"))?;
                CompiledPath::parse(&text)
                    .map(std::borrow::Cow::Owned)
                    .map_err(|e| format!("`{src}` renders to `{text}`, not a JSONPath: {e}"))
            }
        }
    }
}

#[derive(Debug)]
pub struct Capture {
    pub name: String,
    pub path: PathExpr,
    pub source: String,
    pub pos: Pos,
    /// `None`: the response. `Some(method)`: the requests the server asked the client
    /// (`Some(None)`: of any method, `*`).
    pub asked: Option<Option<String>>,
}
