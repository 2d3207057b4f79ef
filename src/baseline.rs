//! Expected failures: a YAML baseline of known failures, compatible with the official MCP
//! conformance suite's `--expected-failures` file.
//!
//! ```yaml
//! server:
//!   - tools-call-with-progress                                # the whole scenario may fail
//!   - server-stateless:sep-2575-server-implements-discover    # only this check (step name)
//!   - tools@2026-07-28                                        # only in that era (mcpspec)
//!   - tools@legacy:lists the tools                            # era and check
//! client: []                                                  # accepted and ignored
//! ```
//!
//! Applied to a finished run ([`apply`]), a listed failure becomes an expected failure and an
//! entry whose failure is gone is *stale* (it must be removed, so a fix is never forgotten).
//! The rules follow the conformance suite (`evaluateBaseline`):
//!
//! | entry          | result                                | outcome               |
//! |----------------|---------------------------------------|-----------------------|
//! | whole scenario | a step fails (or setup error)         | expected              |
//! | whole scenario | it ran and no step fails              | stale                 |
//! | none           | a step fails                          | unexpected            |
//! | `scn:check`    | that step fails                       | expected              |
//! | `scn:check`    | another step of `scn` fails           | unexpected            |
//! | `scn:check`    | that step passes                      | stale                 |
//! | `scn:check`    | that step is absent or skipped        | tolerated             |
//!
//! An entry whose scenario did not run at all (filtered out, other era) is tolerated, so
//! a filtered run never makes entries stale. An entry that names no scenario (or no check of
//! its scenario) of the files and packs loaded is an error ([`Baseline::check_known`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::dsl::error::did_you_mean;
use crate::dsl::load::parse_yaml;
use crate::dsl::value::{At, TKind, TValue};
use crate::dsl::{LoadError, LoadErrors};
use crate::era::EraSelector;
use crate::report::model::{Failure, Outcome, RunReport, StepResult, Summary};
use crate::source::{Pos, Severity, SourceFile};

/// Top-level keys of a baseline file.
const KEYS: &[&str] = &["server", "client"];

const ENTRY_FORMS: &str = "an entry is `scenario`, `scenario:check` or `scenario@era:check`";

/// A loaded expected-failures file.
#[derive(Debug, Clone)]
pub struct Baseline {
    /// The `server` entries, in file order.
    pub entries: Vec<Entry>,
    /// File name as the user named it.
    pub file: String,
}

/// One `server` entry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Scenario id (never contains `:`).
    pub scenario: String,
    /// Era qualifier (`legacy`, `modern`, `auto` or a revision date), when given.
    pub era: Option<String>,
    /// Check id (step name), when the entry names a single check.
    pub check: Option<String>,
    /// The entry as written (the string value), shown in reports.
    pub text: String,
    pub pos: Pos,
}

impl Entry {
    fn matches_suite(&self, scenario: &str, era: &str) -> bool {
        self.scenario == scenario && self.era.as_deref().is_none_or(|e| e == era)
    }

    /// Lower is more specific: the label of an expected failure is its most specific entry.
    fn rank(&self) -> u8 {
        match (&self.check, &self.era) {
            (Some(_), Some(_)) => 0,
            (Some(_), None) => 1,
            (None, Some(_)) => 2,
            (None, None) => 3,
        }
    }
}

impl Baseline {
    /// Read and parse a baseline file.
    pub fn load(path: &Path) -> Result<Baseline, LoadErrors> {
        Baseline::parse(crate::dsl::error::read_source(path)?)
    }

    /// Parse and validate a baseline document, reporting every error found. An empty file
    /// (or one holding only comments) is an empty baseline.
    pub fn parse(file: Arc<SourceFile>) -> Result<Baseline, LoadErrors> {
        let mut baseline = Baseline {
            entries: Vec::new(),
            file: file.name.clone(),
        };
        if file.text.trim().is_empty() {
            return Ok(baseline);
        }
        let doc: TValue = parse_yaml(&file)?;
        let pos = |line: u32, col: u32| Pos::new(&file, line, col);
        let entries = match &doc.kind {
            TKind::Null => return Ok(baseline),
            TKind::Map(entries) => entries,
            _ => {
                return Err(LoadError::at(
                    pos(doc.line, doc.col),
                    format!(
                        "expected a mapping with `server` and `client` lists, found {}",
                        kind_name(&doc.kind)
                    ),
                )
                .with_help("write `server:` followed by one `- entry` per line")
                .into());
            }
        };
        let mut errors = LoadErrors::default();
        // Key positions (the mapping above only has the positions of values).
        let keys: Vec<At<String>> = parse_yaml::<Keys>(&file).map(|k| k.0).unwrap_or_default();
        for (index, (key, value)) in entries.iter().enumerate() {
            let key_pos = keys
                .get(index)
                .filter(|k| k.value == *key)
                .map(|k| pos(k.line, k.col))
                .unwrap_or_else(|| pos(value.line, value.col));
            match key.as_str() {
                "server" => {
                    for item in list_items(key, value, &pos, &mut errors) {
                        match item.as_str() {
                            Some(text) => {
                                let at = pos(item.line, item.col);
                                match parse_entry(text) {
                                    Ok((scenario, era, check)) => baseline.entries.push(Entry {
                                        scenario,
                                        era,
                                        check,
                                        text: text.to_string(),
                                        pos: at,
                                    }),
                                    Err((message, help)) => {
                                        errors.push(LoadError::at(at, message).with_help(help))
                                    }
                                }
                            }
                            None => errors.push(not_a_string(item, &pos)),
                        }
                    }
                }
                "client" => {
                    for item in list_items(key, value, &pos, &mut errors) {
                        if item.as_str().is_none() {
                            errors.push(not_a_string(item, &pos));
                        }
                    }
                }
                other => {
                    let list = "expected `server` (and `client`, which is ignored)";
                    let help = match did_you_mean(other, KEYS.iter().copied()) {
                        Some(s) => format!("did you mean `{s}`? {list}"),
                        None => list.to_string(),
                    };
                    errors.push(
                        LoadError::at(key_pos, format!("unknown key `{other}`")).with_help(help),
                    );
                }
            }
        }
        check_entries(&baseline.entries, &mut errors);
        if errors.is_empty() {
            Ok(baseline)
        } else {
            Err(errors)
        }
    }
}

/// The items of a `server`/`client` list (null counts as an empty list, which is what is left
/// after removing the last entry).
fn list_items<'a>(
    key: &str,
    value: &'a TValue,
    pos: &dyn Fn(u32, u32) -> Pos,
    errors: &mut LoadErrors,
) -> &'a [TValue] {
    match &value.kind {
        TKind::Seq(items) => items,
        TKind::Null => &[],
        other => {
            errors.push(
                LoadError::at(
                    pos(value.line, value.col),
                    format!(
                        "`{key}` must be a list of strings, found {}",
                        kind_name(other)
                    ),
                )
                .with_help(format!(
                    "write one `- entry` per line under `{key}:` ({ENTRY_FORMS})"
                )),
            );
            &[]
        }
    }
}

fn not_a_string(item: &TValue, pos: &dyn Fn(u32, u32) -> Pos) -> LoadError {
    let at = pos(item.line, item.col);
    if let TKind::Map(entries) = &item.kind {
        if let [(key, value)] = entries.as_slice() {
            let value = match &value.kind {
                TKind::Str(s) => Some(s.clone()),
                TKind::Number(n) => Some(n.to_string()),
                TKind::Bool(b) => Some(b.to_string()),
                _ => None,
            };
            if let Some(value) = value {
                return LoadError::at(
                    at,
                    format!("entry `{key}: {value}` is a mapping, not a string"),
                )
                .with_help(format!(
                    "write `{key}:{value}` with no space after the colon ({ENTRY_FORMS})"
                ));
            }
            return LoadError::at(at, format!("entry `{key}:` is a mapping, not a string"))
                .with_help(format!(
                    "write `{key}` for the whole scenario or `{key}:check` for one check, with no space after the colon"
                ));
        }
        return LoadError::at(at, "entry is a mapping, not a string")
            .with_help(format!("{ENTRY_FORMS}, with no space after the colon"));
    }
    LoadError::at(
        at,
        format!("entry must be a string, found {}", kind_name(&item.kind)),
    )
    .with_help(ENTRY_FORMS)
}

fn kind_name(kind: &TKind) -> &'static str {
    match kind {
        TKind::Null => "nothing",
        TKind::Bool(_) => "a boolean",
        TKind::Number(_) => "a number",
        TKind::Str(_) => "a string",
        TKind::Seq(_) => "a list",
        TKind::Map(_) => "a mapping",
    }
}

type ParsedEntry = (String, Option<String>, Option<String>);

/// Split an entry into scenario, era qualifier and check id; on error, message and help.
fn parse_entry(text: &str) -> Result<ParsedEntry, (String, String)> {
    if text.trim().is_empty() {
        return Err(("empty entry".into(), ENTRY_FORMS.into()));
    }
    let (head, check) = match text.split_once(':') {
        Some((head, check)) => (head, Some(check)),
        None => (text, None),
    };
    if let Some(check) = check {
        if check.trim().is_empty() {
            return Err((
                format!("entry `{text}` has no check id after the colon"),
                format!(
                    "write `{}` for the whole scenario or `{}:check` for one check",
                    head.trim(),
                    head.trim()
                ),
            ));
        }
        if check.starts_with(char::is_whitespace) || head.ends_with(char::is_whitespace) {
            return Err((
                format!("entry `{text}` has a space around the colon"),
                format!(
                    "write `{}:{}` with no space after the colon",
                    head.trim(),
                    check.trim()
                ),
            ));
        }
    }
    if head != head.trim() {
        return Err((
            format!("entry `{text}` has leading or trailing spaces"),
            format!("write `{}`", text.trim()),
        ));
    }
    let (scenario, era) = match head.rsplit_once('@') {
        Some((scenario, era)) => match EraSelector::parse(era) {
            Ok(sel) => (scenario, Some(sel.label())),
            Err(e) => {
                return Err((
                    format!("invalid era qualifier in entry `{text}`"),
                    format!("the part after the last `@` of the scenario is an era: {e}"),
                ));
            }
        },
        None => (head, None),
    };
    if scenario.trim().is_empty() {
        return Err((
            format!("entry `{text}` has no scenario id"),
            ENTRY_FORMS.to_string(),
        ));
    }
    Ok((scenario.to_string(), era, check.map(str::to_string)))
}

impl Baseline {
    /// Entries that name no scenario of the selected packs and files, or no check (step)
    /// of their scenario, are errors with did-you-mean: a typo, or an id copied from
    /// another suite, would otherwise be silently ignored. `known` maps every loaded
    /// scenario id to its step names, before `--tag`, `--filter`, `--shard` and eras
    /// select what runs: an entry of a known scenario or check that does not run here is
    /// still tolerated (see the table above).
    pub fn check_known(&self, known: &BTreeMap<&str, Vec<&str>>) -> Result<(), LoadErrors> {
        let mut errors = LoadErrors::default();
        for entry in &self.entries {
            let Some(steps) = known.get(entry.scenario.as_str()) else {
                let help = match did_you_mean(&entry.scenario, known.keys().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "expected a scenario id of the files and packs run (`mcpspec list` shows them)".into(),
                };
                errors.push(
                    LoadError::at(
                        entry.pos.clone(),
                        format!(
                            "no scenario `{}` in the files and packs run",
                            entry.scenario
                        ),
                    )
                    .with_help(help),
                );
                continue;
            };
            if let Some(check) = &entry.check
                && !steps.contains(&check.as_str())
            {
                let help = match did_you_mean(check, steps.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!(
                        "checks of `{}`: {}",
                        entry.scenario,
                        steps
                            .iter()
                            .map(|s| format!("`{s}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                errors.push(
                    LoadError::at(
                        entry.pos.clone(),
                        format!("scenario `{}` has no check `{check}`", entry.scenario),
                    )
                    .with_help(help),
                );
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

/// Duplicates, and scenarios listed both whole and per check (same era qualifier).
fn check_entries(entries: &[Entry], errors: &mut LoadErrors) {
    let mut seen: HashMap<(&str, Option<&str>, Option<&str>), &Entry> = HashMap::new();
    let mut whole: HashMap<(&str, Option<&str>), &Entry> = HashMap::new();
    let mut checked: HashMap<(&str, Option<&str>), &Entry> = HashMap::new();
    for entry in entries {
        let key = (
            entry.scenario.as_str(),
            entry.era.as_deref(),
            entry.check.as_deref(),
        );
        if let Some(first) = seen.get(&key) {
            errors.push(
                LoadError::at(
                    entry.pos.clone(),
                    format!("duplicate entry `{}`", entry.text),
                )
                .with_help(format!(
                    "already listed at line {} as `{}`: remove one of them",
                    first.pos.line, first.text
                )),
            );
            continue;
        }
        seen.insert(key, entry);
        let scenario_key = (entry.scenario.as_str(), entry.era.as_deref());
        let conflict = match entry.check {
            None => {
                whole.insert(scenario_key, entry);
                checked.get(&scenario_key)
            }
            Some(_) => {
                checked.entry(scenario_key).or_insert(entry);
                whole.get(&scenario_key)
            }
        };
        if let Some(other) = conflict {
            let (w, c) = if entry.check.is_none() {
                (entry, *other)
            } else {
                (*other, entry)
            };
            let scenario = match &entry.era {
                Some(era) => format!("`{}@{era}`", entry.scenario),
                None => format!("`{}`", entry.scenario),
            };
            errors.push(
                LoadError::at(
                    entry.pos.clone(),
                    format!(
                        "scenario {scenario} is listed both as a whole (line {}) and per check (line {}: `{}`)",
                        w.pos.line, c.pos.line, c.text
                    ),
                )
                .with_help(format!(
                    "keep either the whole-scenario entry `{}` or the per-check entries",
                    w.text
                )),
            );
        }
    }
}

/// Keys of the top-level mapping with their positions.
struct Keys(Vec<At<String>>);

impl<'de> serde::Deserialize<'de> for Keys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeysVisitor;
        impl<'de> Visitor<'de> for KeysVisitor {
            type Value = Keys;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Keys, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<At<String>>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(Keys(keys))
            }
        }
        deserializer.deserialize_map(KeysVisitor)
    }
}

/// The result of applying a baseline to a run.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// Entries whose failure is gone, in file order. Each one fails the run.
    pub stale: Vec<Stale>,
    /// Failures left that fail the run: steps still failed or errored (and warnings when
    /// strict), plus suites whose setup error no whole-scenario entry covers.
    pub unexpected: usize,
}

impl Applied {
    /// True when the baseline leaves nothing failing and no entry is stale.
    pub fn is_ok(&self) -> bool {
        self.unexpected == 0 && self.stale.is_empty()
    }
}

/// A baseline entry that no longer fails.
#[derive(Debug, Clone)]
pub struct Stale {
    /// The entry as written.
    pub entry: String,
    pub pos: Pos,
    /// "`ENTRY` passes now: remove line N of FILE".
    pub message: String,
}

impl Stale {
    /// rustc-style snippet pointing at the entry in the baseline file.
    pub fn render(&self) -> String {
        self.pos.snippet_with_help(
            Severity::Error,
            &self.message,
            "stale entry",
            "a stale entry fails the run so that a fixed failure cannot come back unnoticed",
        )
    }
}

/// A step outcome that a baseline entry can match: failed, errored, warning (a listed
/// warning is matched even without strict), or already expected.
fn is_failing(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Failed { .. }
            | Outcome::Error { .. }
            | Outcome::Warning { .. }
            | Outcome::ExpectedFailure { .. }
    )
}

/// A step outcome that fails the run.
pub(crate) fn fails_run(outcome: &Outcome, strict: bool) -> bool {
    match outcome {
        Outcome::Failed { .. } | Outcome::Error { .. } => true,
        Outcome::Warning { .. } => strict,
        _ => false,
    }
}

fn has_setup_error_only(suite: &crate::report::model::SuiteResult) -> bool {
    suite.setup_error.is_some() && suite.steps.is_empty()
}

/// Apply a baseline to a finished run: every failed, errored or warning step matched by an
/// entry becomes [`Outcome::ExpectedFailure`] (labelled with its most specific entry), stale
/// entries are returned, and `report.summary` is recomputed.
///
/// A suite with a setup error (and so no steps) is covered by a whole-scenario entry and is
/// then not counted in `unexpected`; it keeps its `setup_error` and still counts as an error
/// in the summary (as in the JUnit report).
pub fn apply(baseline: &Baseline, report: &mut RunReport, strict: bool) -> Applied {
    let mut applied = Applied::default();

    // Staleness is judged on the outcomes before relabelling.
    for entry in &baseline.entries {
        let mut ran = false;
        let mut failed = false;
        let suites = report
            .suites
            .iter()
            .filter(|s| entry.matches_suite(&s.scenario, &s.era.requested));
        for suite in suites {
            match &entry.check {
                None => {
                    if has_setup_error_only(suite) {
                        ran = true;
                        failed = true;
                    }
                    for step in &suite.steps {
                        ran |= !matches!(step.outcome, Outcome::Skipped { .. });
                        failed |= is_failing(&step.outcome);
                    }
                }
                Some(check) => {
                    for step in suite.steps.iter().filter(|s| s.name == *check) {
                        ran |= matches!(step.outcome, Outcome::Passed);
                        failed |= is_failing(&step.outcome);
                    }
                }
            }
        }
        if ran && !failed {
            applied.stale.push(Stale {
                entry: entry.text.clone(),
                pos: entry.pos.clone(),
                message: format!(
                    "`{}` passes now: remove line {} of {}",
                    entry.text, entry.pos.line, baseline.file
                ),
            });
        }
    }

    let mut by_rank: Vec<&Entry> = baseline.entries.iter().collect();
    by_rank.sort_by_key(|e| e.rank());
    for suite in &mut report.suites {
        let matching: Vec<&Entry> = by_rank
            .iter()
            .copied()
            .filter(|e| e.matches_suite(&suite.scenario, &suite.era.requested))
            .collect();
        if has_setup_error_only(suite) && !matching.iter().any(|e| e.check.is_none()) {
            applied.unexpected += 1;
        }
        for step in &mut suite.steps {
            if matches!(step.outcome, Outcome::ExpectedFailure { .. }) || !is_failing(&step.outcome)
            {
                continue;
            }
            let entry = matching
                .iter()
                .find(|e| e.check.as_ref().is_none_or(|c| *c == step.name));
            if let Some(entry) = entry {
                step.outcome = expected(step, &entry.text);
            } else if fails_run(&step.outcome, strict) {
                applied.unexpected += 1;
            }
        }
    }
    report.summary = Summary::from_suites(&report.suites);
    applied
}

/// The expected-failure outcome of a failed, warning or errored step.
fn expected(step: &StepResult, entry: &str) -> Outcome {
    let failures = match &step.outcome {
        Outcome::Failed { failures } | Outcome::Warning { failures } => failures.clone(),
        Outcome::Error { message, detail } => vec![Failure {
            kind: "error".to_string(),
            message: message.clone(),
            expected: None,
            actual: detail.clone(),
            snippet: String::new(),
            file: step.file.clone(),
            line: step.line,
            column: step.column,
        }],
        _ => Vec::new(),
    };
    Outcome::ExpectedFailure {
        failures,
        entry: entry.to_string(),
    }
}

const HEADER: &str = "\
# Expected failures for mcpspec (the format of the MCP conformance suite's
# --expected-failures file). One entry per line:
#   scenario              the whole scenario may fail
#   scenario:check        only this check (step name) may fail; no space after the colon
#   scenario@era:check    only in that era (matrix runs)
# A listed failure does not fail the run. An entry that passes again is stale and fails
# the run until its line is removed.
";

/// A baseline listing the current failures of a run: one `scenario:check` per failing step
/// (failed, errored, already expected, and warning when `strict`), a whole-scenario entry
/// per setup error, with `@era` only when the failure happened in some of the eras the
/// scenario ran in but not all. Entries are sorted; the file starts with a header comment.
/// Applying it to the same run gives no unexpected failure and no stale entry.
/// One suite with the baseline's expected failures relabelled (for streaming output;
/// staleness needs the whole run and is judged by [`apply`]).
pub fn relabel_suite(
    baseline: &Baseline,
    suite: &crate::report::model::SuiteResult,
    strict: bool,
) -> crate::report::model::SuiteResult {
    let mut one = RunReport {
        mcpspec_version: String::new(),
        target: String::new(),
        transport: String::new(),
        started_at: String::new(),
        duration: Default::default(),
        suites: vec![suite.clone()],
        summary: Default::default(),
        stale_entries: Vec::new(),
        interrupted: None,
        shard: None,
    };
    apply(baseline, &mut one, strict);
    one.suites.pop().expect("one suite in, one out")
}

pub fn write_from(report: &RunReport, strict: bool) -> String {
    let mut ran: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut setup: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut checks: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
    for suite in &report.suites {
        let (scenario, era) = (suite.scenario.as_str(), suite.era.requested.as_str());
        ran.entry(scenario).or_default().insert(era);
        if has_setup_error_only(suite) {
            setup.entry(scenario).or_default().insert(era);
        }
        for step in &suite.steps {
            if fails_run(&step.outcome, strict)
                || matches!(step.outcome, Outcome::ExpectedFailure { .. })
            {
                checks
                    .entry((scenario, step.name.as_str()))
                    .or_default()
                    .insert(era);
            }
        }
    }
    // An `@` in the scenario id would read as an era qualifier: always qualify those.
    let qualify = |scenario: &str, eras: &BTreeSet<&str>| {
        scenario.contains('@') || ran.get(scenario) != Some(eras)
    };
    let mut entries: BTreeSet<ParsedEntry> = BTreeSet::new();
    for (scenario, eras) in &setup {
        if qualify(scenario, eras) {
            for era in eras {
                entries.insert((scenario.to_string(), Some(era.to_string()), None));
            }
        } else {
            entries.insert((scenario.to_string(), None, None));
        }
    }
    for ((scenario, check), eras) in &checks {
        // A setup error in an era is already listed as a whole-scenario entry.
        let covered = |era: &str| setup.get(scenario).is_some_and(|s| s.contains(era));
        if qualify(scenario, eras) {
            for era in eras.iter().filter(|e| !covered(e)) {
                entries.insert((
                    scenario.to_string(),
                    Some(era.to_string()),
                    Some(check.to_string()),
                ));
            }
        } else {
            entries.insert((scenario.to_string(), None, Some(check.to_string())));
        }
    }

    let mut out = String::from(HEADER);
    if strict {
        out.push_str("# Warnings (should-level steps) are listed too (strict).\n");
    }
    let mut listed = Vec::new();
    let mut unlisted = Vec::new();
    for entry in entries {
        let text = entry_text(&entry);
        // A scenario id with `:` (or a check id with a leading space) cannot be written.
        if parse_entry(&text).as_ref() == Ok(&entry) {
            listed.push(text);
        } else {
            unlisted.push(text);
        }
    }
    if listed.is_empty() {
        out.push_str("server: []\n");
    } else {
        out.push_str("server:\n");
        for text in &listed {
            out.push_str(&format!("  - {}\n", yaml_scalar(text)));
        }
    }
    for text in &unlisted {
        out.push_str(&format!(
            "  # cannot be listed (the id does not fit the entry syntax): {}\n",
            text.replace('\n', " ")
        ));
    }
    out.push_str("client: []\n");
    out
}

fn entry_text((scenario, era, check): &ParsedEntry) -> String {
    let mut text = scenario.clone();
    if let Some(era) = era {
        text.push('@');
        text.push_str(era);
    }
    if let Some(check) = check {
        text.push(':');
        text.push_str(check);
    }
    text
}

/// A YAML list item for `text`: plain when YAML reads it back as that very string, else
/// double-quoted (a JSON string is a valid YAML double-quoted scalar).
fn yaml_scalar(text: &str) -> String {
    let plain = serde_saphyr::from_str::<TValue>(&format!("- {text}\n"))
        .ok()
        .is_some_and(|v| match v.kind {
            TKind::Seq(items) => items.len() == 1 && items[0].as_str() == Some(text),
            _ => false,
        });
    if plain && !text.contains('\n') {
        text.to_string()
    } else {
        serde_json::to_string(text).expect("a string serializes")
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::report::model::{EraInfo, Level, SuiteResult};

    fn parse(text: &str) -> Result<Baseline, LoadErrors> {
        Baseline::parse(SourceFile::new("baseline.yaml", text))
    }

    fn ok(text: &str) -> Baseline {
        match parse(text) {
            Ok(b) => b,
            Err(e) => panic!("unexpected errors:\n{}", e.render()),
        }
    }

    /// `file:line:col: message` of every error, and the rendering (for help texts).
    fn errors(text: &str) -> (Vec<String>, String) {
        match parse(text) {
            Ok(b) => panic!("expected errors, parsed {b:?}"),
            Err(e) => (e.0.iter().map(|e| e.to_string()).collect(), e.render()),
        }
    }

    fn failure() -> Failure {
        Failure {
            kind: "path".into(),
            message: "expected 1, got 2".into(),
            expected: Some("1".into()),
            actual: Some("2".into()),
            snippet: String::new(),
            file: "s.yaml".into(),
            line: 3,
            column: 5,
        }
    }

    fn failed() -> Outcome {
        Outcome::Failed {
            failures: vec![failure()],
        }
    }

    fn warning() -> Outcome {
        Outcome::Warning {
            failures: vec![failure()],
        }
    }

    fn error() -> Outcome {
        Outcome::Error {
            message: "timed out after 5s".into(),
            detail: Some("no reply".into()),
        }
    }

    fn skipped() -> Outcome {
        Outcome::Skipped {
            reason: "not in this era".into(),
        }
    }

    fn step(name: &str, outcome: Outcome) -> StepResult {
        StepResult {
            name: name.into(),
            file: "s.yaml".into(),
            line: 2,
            column: 5,
            level: if matches!(outcome, Outcome::Warning { .. }) {
                Level::Should
            } else {
                Level::Must
            },
            duration: Duration::ZERO,
            outcome,
            transcript: vec![],
        }
    }

    fn suite(id: &str, steps: Vec<StepResult>) -> SuiteResult {
        let (scenario, era) = id.rsplit_once('@').unwrap();
        SuiteResult {
            ordinal: 0,
            id: id.into(),
            scenario: scenario.into(),
            description: None,
            file: "s.yaml".into(),
            line: 1,
            pack: None,
            era: EraInfo {
                requested: era.into(),
                ..EraInfo::default()
            },
            started_at: String::new(),
            duration: Duration::ZERO,
            setup_error: None,
            setup_error_kind: None,
            steps,
            stderr_tail: None,
        }
    }

    fn broken(id: &str) -> SuiteResult {
        let mut s = suite(id, vec![]);
        s.setup_error = Some("server exited".into());
        s.setup_error_kind = Some("start".into());
        s
    }

    fn run(suites: Vec<SuiteResult>) -> RunReport {
        RunReport {
            mcpspec_version: "0".into(),
            target: "stdio: server".into(),
            transport: "stdio".into(),
            started_at: String::new(),
            duration: Duration::ZERO,
            summary: Summary::from_suites(&suites),
            stale_entries: Vec::new(),
            interrupted: None,
            shard: None,
            suites,
        }
    }

    /// Apply `baseline` (text) and return the result with the outcome status of every step
    /// as `suite/step=status`.
    fn check(text: &str, mut report: RunReport, strict: bool) -> (Applied, Vec<String>) {
        let applied = apply(&ok(text), &mut report, strict);
        let statuses = report
            .suites
            .iter()
            .flat_map(|s| {
                s.steps
                    .iter()
                    .map(move |st| format!("{}/{}={}", s.id, st.name, st.outcome.status()))
            })
            .collect();
        (applied, statuses)
    }

    fn stale(applied: &Applied) -> Vec<&str> {
        applied.stale.iter().map(|s| s.entry.as_str()).collect()
    }

    // ---- parsing ----

    #[test]
    fn parses_every_entry_form() {
        let b = ok(
            "# known failures\nserver:\n  - tools-call-with-progress\n  - server-stateless:sep-2575-server-implements-discover\n  - tools@2026-07-28\n  - tools@legacy:lists the tools\n  - packs/core/ping:a:b\nclient: []\n",
        );
        assert_eq!(b.file, "baseline.yaml");
        let got: Vec<_> = b
            .entries
            .iter()
            .map(|e| {
                (
                    e.scenario.as_str(),
                    e.era.as_deref(),
                    e.check.as_deref(),
                    e.text.as_str(),
                    e.pos.to_string(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "tools-call-with-progress",
                    None,
                    None,
                    "tools-call-with-progress",
                    "baseline.yaml:3:5".to_string()
                ),
                (
                    "server-stateless",
                    None,
                    Some("sep-2575-server-implements-discover"),
                    "server-stateless:sep-2575-server-implements-discover",
                    "baseline.yaml:4:5".to_string()
                ),
                (
                    "tools",
                    Some("2026-07-28"),
                    None,
                    "tools@2026-07-28",
                    "baseline.yaml:5:5".to_string()
                ),
                (
                    "tools",
                    Some("legacy"),
                    Some("lists the tools"),
                    "tools@legacy:lists the tools",
                    "baseline.yaml:6:5".to_string()
                ),
                (
                    "packs/core/ping",
                    None,
                    Some("a:b"),
                    "packs/core/ping:a:b",
                    "baseline.yaml:7:5".to_string()
                ),
            ]
        );
    }

    #[test]
    fn empty_files_and_lists_are_empty_baselines() {
        for text in [
            "",
            "  \n",
            "# nothing yet\n",
            "server:\n",
            "server: []\n",
            "server: []\nclient:\n  - sse-retry\n",
        ] {
            assert!(ok(text).entries.is_empty(), "{text:?}");
        }
        assert_eq!(ok("client: [a]\nserver: [x]\n").entries.len(), 1);
    }

    #[test]
    fn top_level_must_be_a_mapping() {
        let (errs, rendered) = errors("- tools\n");
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:1:1: expected a mapping with `server` and `client` lists, found a list"
            ]
        );
        assert!(rendered.contains("write `server:`"), "{rendered}");
        let (errs, _) = errors("tools\n");
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].starts_with("baseline.yaml:1:1: expected a mapping"),
            "{errs:?}"
        );
    }

    #[test]
    fn lists_must_be_lists_of_strings() {
        let (errs, rendered) = errors("server: tools\nclient: {a: 1}\n");
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:1:9: `server` must be a list of strings, found a string",
                "baseline.yaml:2:9: `client` must be a list of strings, found a mapping",
            ]
        );
        assert!(
            rendered.contains("one `- entry` per line under `server:`"),
            "{rendered}"
        );
        let (errs, _) = errors("server:\n  - 123\n  - [a]\nclient:\n  - true\n");
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:2:5: entry must be a string, found a number",
                "baseline.yaml:3:5: entry must be a string, found a list",
                "baseline.yaml:5:5: entry must be a string, found a boolean",
            ]
        );
    }

    #[test]
    fn unknown_keys_suggest_the_right_one() {
        let (errs, rendered) = errors("server: []\nsever:\n  - tools\nextra: 1\n");
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:2:1: unknown key `sever`",
                "baseline.yaml:4:1: unknown key `extra`",
            ]
        );
        assert!(rendered.contains("did you mean `server`?"), "{rendered}");
    }

    #[test]
    fn a_space_after_the_colon_is_rejected_with_a_hint() {
        let (errs, rendered) = errors(
            "server:\n  - server-stateless: sep-2575-server-implements-discover\n  - \"tools: lists\"\n  - \"tools :lists\"\n  - ping:\n",
        );
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:2:5: entry `server-stateless: sep-2575-server-implements-discover` is a mapping, not a string",
                "baseline.yaml:3:5: entry `tools: lists` has a space around the colon",
                "baseline.yaml:4:5: entry `tools :lists` has a space around the colon",
                "baseline.yaml:5:5: entry `ping:` is a mapping, not a string",
            ]
        );
        assert!(
            rendered.contains(
                "write `server-stateless:sep-2575-server-implements-discover` with no space after the colon"
            ),
            "{rendered}"
        );
        assert!(
            rendered.contains("write `tools:lists` with no space after the colon"),
            "{rendered}"
        );
        assert!(
            rendered.contains("write `ping` for the whole scenario"),
            "{rendered}"
        );
    }

    #[test]
    fn malformed_entries_are_rejected() {
        let (errs, rendered) = errors(
            "server:\n  - \"\"\n  - \"tools:\"\n  - \"@legacy:x\"\n  - tools@yesterday:x\n  - \" tools\"\n",
        );
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:2:5: empty entry",
                "baseline.yaml:3:5: entry `tools:` has no check id after the colon",
                "baseline.yaml:4:5: entry `@legacy:x` has no scenario id",
                "baseline.yaml:5:5: invalid era qualifier in entry `tools@yesterday:x`",
                "baseline.yaml:6:5: entry ` tools` has leading or trailing spaces",
            ]
        );
        assert!(rendered.contains("`yesterday` is not an era"), "{rendered}");
        assert!(rendered.contains("5 errors found"), "{rendered}");
        // Every era form is accepted.
        let b = ok("server: [a@legacy, a@modern, a@auto, a@2025-06-18:x]\n");
        let eras: Vec<_> = b.entries.iter().map(|e| e.era.clone().unwrap()).collect();
        assert_eq!(eras, ["legacy", "modern", "auto", "2025-06-18"]);
    }

    #[test]
    fn whole_and_per_check_of_one_scenario_is_rejected() {
        let (errs, rendered) =
            errors("server:\n  - tools:lists\n  - tools\n  - ping@legacy\n  - ping@legacy:pong\n");
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:3:5: scenario `tools` is listed both as a whole (line 3) and per check (line 2: `tools:lists`)",
                "baseline.yaml:5:5: scenario `ping@legacy` is listed both as a whole (line 4) and per check (line 5: `ping@legacy:pong`)",
            ]
        );
        assert!(
            rendered.contains("keep either the whole-scenario entry `tools`"),
            "{rendered}"
        );
        // Different era qualifiers do not conflict.
        assert_eq!(
            ok("server: [tools@legacy, tools:lists, tools@modern:lists]\n")
                .entries
                .len(),
            3
        );
    }

    #[test]
    fn duplicates_are_rejected() {
        let (errs, rendered) =
            errors("server:\n  - tools\n  - ping:pong\n  - tools\n  - \"ping:pong\"\n");
        assert_eq!(
            errs,
            vec![
                "baseline.yaml:4:5: duplicate entry `tools`",
                "baseline.yaml:5:5: duplicate entry `ping:pong`",
            ]
        );
        assert!(rendered.contains("already listed at line 2"), "{rendered}");
    }

    #[test]
    fn yaml_errors_are_positioned() {
        let (errs, _) = errors("server:\n  - tools\nserver: []\n");
        assert_eq!(errs, vec!["baseline.yaml:3:1: duplicate key `server`"]);
        let (errs, _) = errors("server: [tools\n");
        assert_eq!(errs.len(), 1);
        assert!(errs[0].starts_with("baseline.yaml:"), "{errs:?}");
    }

    #[test]
    fn load_reads_a_file_or_says_why_not() {
        let dir = std::env::temp_dir().join(format!("mcpspec-baseline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("expected.yaml");
        std::fs::write(&path, "server:\n  - tools\n").unwrap();
        let b = Baseline::load(&path).unwrap();
        assert_eq!(b.file, path.display().to_string());
        assert_eq!(b.entries[0].pos.line, 2);
        let missing = Baseline::load(&dir.join("missing.yaml")).unwrap_err();
        assert!(
            missing.0[0].to_string().contains("cannot read"),
            "{:?}",
            missing.0
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    // ---- applying: the four exit rules, whole scenario ----

    #[test]
    fn whole_scenario_failing_is_expected() {
        let report = run(vec![suite(
            "tools@legacy",
            vec![
                step("a", failed()),
                step("b", Outcome::Passed),
                step("c", error()),
            ],
        )]);
        let (applied, statuses) = check("server: [tools]\n", report, false);
        assert_eq!(applied.unexpected, 0);
        assert!(applied.stale.is_empty());
        assert!(applied.is_ok());
        assert_eq!(
            statuses,
            [
                "tools@legacy/a=expectedFailure",
                "tools@legacy/b=passed",
                "tools@legacy/c=expectedFailure"
            ]
        );
    }

    #[test]
    fn whole_scenario_passing_is_stale() {
        let report = run(vec![suite(
            "tools@legacy",
            vec![step("a", Outcome::Passed)],
        )]);
        let (applied, _) = check("# x\nserver:\n  - ping\n  - tools\n", report, false);
        assert_eq!(applied.unexpected, 0);
        assert_eq!(applied.stale.len(), 1);
        let s = &applied.stale[0];
        assert_eq!(s.entry, "tools");
        assert_eq!(s.pos.to_string(), "baseline.yaml:4:5");
        assert_eq!(
            s.message,
            "`tools` passes now: remove line 4 of baseline.yaml"
        );
        assert!(!applied.is_ok());
        let rendered = s.render();
        assert!(
            rendered.starts_with("error: `tools` passes now: remove line 4 of baseline.yaml"),
            "{rendered}"
        );
        assert!(rendered.contains("baseline.yaml:4:5"), "{rendered}");
    }

    #[test]
    fn unlisted_failure_is_unexpected_and_unlisted_pass_is_fine() {
        let report = run(vec![
            suite(
                "tools@legacy",
                vec![step("a", failed()), step("b", error())],
            ),
            suite("ping@legacy", vec![step("p", Outcome::Passed)]),
        ]);
        let (applied, statuses) = check("server: []\n", report, false);
        assert_eq!(applied.unexpected, 2);
        assert!(applied.stale.is_empty());
        assert_eq!(
            statuses,
            [
                "tools@legacy/a=failed",
                "tools@legacy/b=error",
                "ping@legacy/p=passed"
            ]
        );
    }

    #[test]
    fn entries_for_scenarios_that_did_not_run_are_tolerated() {
        let report = run(vec![suite("ping@legacy", vec![step("p", Outcome::Passed)])]);
        let (applied, _) = check(
            "server: [tools, tools2:x, ping@modern, ping@auto:p]\n",
            report,
            false,
        );
        assert!(applied.is_ok(), "{applied:?}");
        // A scenario whose steps were all skipped did not really run.
        let report = run(vec![suite("tools@legacy", vec![step("a", skipped())])]);
        let (applied, _) = check("server: [tools]\n", report, false);
        assert!(applied.is_ok(), "{applied:?}");
    }

    // ---- applying: per check ----

    #[test]
    fn listed_check_failing_is_expected_other_checks_still_fail() {
        let report = run(vec![suite(
            "tools@legacy",
            vec![
                step("a", failed()),
                step("b", failed()),
                step("c", Outcome::Passed),
            ],
        )]);
        let (applied, statuses) = check("server: [\"tools:a\"]\n", report, false);
        assert_eq!(applied.unexpected, 1);
        assert!(applied.stale.is_empty());
        assert_eq!(
            statuses,
            [
                "tools@legacy/a=expectedFailure",
                "tools@legacy/b=failed",
                "tools@legacy/c=passed"
            ]
        );
    }

    #[test]
    fn listed_check_passing_is_stale() {
        let report = run(vec![suite(
            "tools@legacy",
            vec![step("a", Outcome::Passed), step("b", failed())],
        )]);
        let (applied, _) = check("server:\n  - tools:b\n  - tools:a\n", report, false);
        assert_eq!(applied.unexpected, 0);
        assert_eq!(stale(&applied), ["tools:a"]);
        assert_eq!(
            applied.stale[0].message,
            "`tools:a` passes now: remove line 3 of baseline.yaml"
        );
    }

    #[test]
    fn listed_check_absent_or_skipped_is_tolerated() {
        let report = run(vec![suite(
            "tools@legacy",
            vec![step("a", skipped()), step("b", Outcome::Passed)],
        )]);
        let (applied, statuses) = check("server: [\"tools:a\", \"tools:gone\"]\n", report, false);
        assert!(applied.is_ok(), "{applied:?}");
        assert_eq!(
            statuses,
            ["tools@legacy/a=skipped", "tools@legacy/b=passed"]
        );
    }

    #[test]
    fn a_check_failing_in_one_era_and_passing_in_another_is_not_stale() {
        let report = run(vec![
            suite("tools@legacy", vec![step("a", failed())]),
            suite("tools@modern", vec![step("a", Outcome::Passed)]),
        ]);
        let (applied, statuses) = check("server: [\"tools:a\", tools@legacy]\n", report, false);
        assert!(applied.is_ok(), "{applied:?}");
        assert_eq!(
            statuses,
            ["tools@legacy/a=expectedFailure", "tools@modern/a=passed"]
        );
    }

    // ---- era qualifiers ----

    #[test]
    fn era_qualifiers_match_the_requested_era_only() {
        let report = || {
            run(vec![
                suite(
                    "tools@legacy",
                    vec![step("a", failed()), step("b", failed())],
                ),
                suite(
                    "tools@2026-07-28",
                    vec![step("a", failed()), step("b", Outcome::Passed)],
                ),
            ])
        };
        let (applied, statuses) = check("server: [\"tools@legacy:a\"]\n", report(), false);
        assert_eq!(applied.unexpected, 2);
        assert_eq!(
            statuses,
            [
                "tools@legacy/a=expectedFailure",
                "tools@legacy/b=failed",
                "tools@2026-07-28/a=failed",
                "tools@2026-07-28/b=passed"
            ]
        );
        let (applied, _) = check(
            "server: [tools@legacy, \"tools@2026-07-28:a\", \"tools@2026-07-28:b\"]\n",
            report(),
            false,
        );
        assert_eq!(applied.unexpected, 0);
        assert_eq!(stale(&applied), ["tools@2026-07-28:b"]);
        // `modern` is a label of its own: it does not match a run requested as a date.
        let (applied, _) = check("server: [tools@modern]\n", report(), false);
        assert_eq!(applied.unexpected, 3);
        assert!(applied.stale.is_empty());
        // A whole-scenario entry for one era is stale when that era passes.
        let report = run(vec![
            suite("tools@legacy", vec![step("a", failed())]),
            suite("tools@modern", vec![step("a", Outcome::Passed)]),
        ]);
        let (applied, _) = check("server: [tools@legacy, tools@modern]\n", report, false);
        assert_eq!(applied.unexpected, 0);
        assert_eq!(stale(&applied), ["tools@modern"]);
    }

    #[test]
    fn the_most_specific_entry_labels_the_expected_failure() {
        let labels = |text: &str| {
            let mut report = run(vec![suite(
                "tools@legacy",
                vec![step("a", failed()), step("b", failed())],
            )]);
            let applied = apply(&ok(text), &mut report, false);
            assert!(applied.is_ok(), "{applied:?}");
            report.suites[0]
                .steps
                .iter()
                .map(|s| match &s.outcome {
                    Outcome::ExpectedFailure { entry, failures } => {
                        assert_eq!(failures.len(), 1);
                        entry.clone()
                    }
                    other => panic!("{other:?}"),
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            labels("server: [tools@legacy, \"tools:a\"]\n"),
            ["tools:a", "tools@legacy"]
        );
        assert_eq!(
            labels("server: [tools, tools@legacy:a]\n"),
            ["tools@legacy:a", "tools"]
        );
        assert_eq!(
            labels("server: [\"tools:a\", tools@legacy:a, \"tools:b\"]\n"),
            ["tools@legacy:a", "tools:b"]
        );
    }

    // ---- warnings ----

    #[test]
    fn unlisted_warnings_fail_only_when_strict() {
        let report = || run(vec![suite("tools@legacy", vec![step("w", warning())])]);
        let (applied, statuses) = check("server: []\n", report(), false);
        assert!(applied.is_ok());
        assert_eq!(statuses, ["tools@legacy/w=warning"]);
        let (applied, statuses) = check("server: []\n", report(), true);
        assert_eq!(applied.unexpected, 1);
        assert_eq!(statuses, ["tools@legacy/w=warning"]);
    }

    #[test]
    fn listed_warnings_are_expected_with_or_without_strict() {
        for strict in [false, true] {
            for entry in ["tools", "\"tools:w\""] {
                let report = run(vec![suite(
                    "tools@legacy",
                    vec![step("w", warning()), step("p", Outcome::Passed)],
                )]);
                let (applied, statuses) = check(&format!("server: [{entry}]\n"), report, strict);
                assert!(applied.is_ok(), "{entry} strict={strict}: {applied:?}");
                assert_eq!(
                    statuses,
                    ["tools@legacy/w=expectedFailure", "tools@legacy/p=passed"]
                );
            }
        }
    }

    // ---- errors and setup errors ----

    #[test]
    fn errors_keep_their_message_as_a_failure() {
        let mut report = run(vec![suite("tools@legacy", vec![step("e", error())])]);
        apply(&ok("server: [\"tools:e\"]\n"), &mut report, false);
        match &report.suites[0].steps[0].outcome {
            Outcome::ExpectedFailure { failures, entry } => {
                assert_eq!(entry, "tools:e");
                assert_eq!(failures.len(), 1);
                assert_eq!(failures[0].kind, "error");
                assert_eq!(failures[0].message, "timed out after 5s");
                assert_eq!(failures[0].actual.as_deref(), Some("no reply"));
                assert_eq!((failures[0].line, failures[0].column), (2, 5));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn setup_errors_are_covered_by_whole_scenario_entries_only() {
        let report = || {
            run(vec![
                broken("tools@legacy"),
                suite("tools@modern", vec![step("a", Outcome::Passed)]),
            ])
        };
        let (applied, _) = check("server: []\n", report(), false);
        assert_eq!(applied.unexpected, 1);
        let (applied, _) = check("server: [tools@legacy]\n", report(), false);
        assert!(applied.is_ok(), "{applied:?}");
        // Unqualified: the setup error counts as a failure, so the entry is not stale.
        let (applied, _) = check("server: [tools]\n", report(), false);
        assert!(applied.is_ok(), "{applied:?}");
        // A check entry does not cover a setup error; with no steps it is tolerated.
        let (applied, _) = check("server: [\"tools@legacy:a\"]\n", report(), false);
        assert_eq!(applied.unexpected, 1);
        assert!(applied.stale.is_empty());
        // The setup error stays on the suite.
        let mut r = report();
        apply(&ok("server: [tools]\n"), &mut r, false);
        assert!(r.suites[0].setup_error.is_some());
    }

    #[test]
    fn summary_is_recomputed() {
        let mut report = run(vec![suite(
            "tools@legacy",
            vec![
                step("a", failed()),
                step("b", error()),
                step("c", Outcome::Passed),
            ],
        )]);
        assert_eq!((report.summary.failed, report.summary.errors), (1, 1));
        apply(&ok("server: [tools]\n"), &mut report, false);
        let s = &report.summary;
        assert_eq!(
            (s.failed, s.errors, s.passed, s.expected_failures),
            (0, 0, 1, 2)
        );
        assert!(s.is_green());
    }

    #[test]
    fn applying_twice_changes_nothing() {
        let mut report = run(vec![suite("tools@legacy", vec![step("a", failed())])]);
        let b = ok("server: [\"tools:a\"]\n");
        apply(&b, &mut report, false);
        let again = apply(&b, &mut report, false);
        assert!(again.is_ok(), "{again:?}");
        assert_eq!(report.summary.expected_failures, 1);
    }

    // ---- writing ----

    fn matrix() -> RunReport {
        run(vec![
            suite(
                "tools@legacy",
                vec![
                    step("lists the tools", failed()),
                    step("calls", failed()),
                    step("warns", warning()),
                    step("ok", Outcome::Passed),
                ],
            ),
            suite(
                "tools@2026-07-28",
                vec![
                    step("lists the tools", failed()),
                    step("calls", Outcome::Passed),
                    step("warns", warning()),
                ],
            ),
            broken("ping@legacy"),
            suite(
                "ping@2026-07-28",
                vec![step("pong", error()), step("skip", skipped())],
            ),
            broken("dead@legacy"),
            broken("dead@2026-07-28"),
            suite("green@legacy", vec![step("ok", Outcome::Passed)]),
            suite(
                "z/odd@legacy",
                vec![step("a: b # c", failed()), step("-x", error())],
            ),
        ])
    }

    #[test]
    fn writes_current_failures_sorted_and_qualified_only_when_needed() {
        let text = write_from(&matrix(), false);
        assert!(text.starts_with(HEADER), "{text}");
        let body = &text[HEADER.len()..];
        assert_eq!(
            body,
            "server:\n  - dead\n  - ping@2026-07-28:pong\n  - ping@legacy\n  - tools:lists the tools\n  - tools@legacy:calls\n  - z/odd:-x\n  - \"z/odd:a: b # c\"\nclient: []\n"
        );
        let strict = write_from(&matrix(), true);
        assert!(strict.contains("  - tools:warns\n"), "{strict}");
        assert!(strict.contains("(strict)"), "{strict}");
    }

    #[test]
    fn written_baselines_round_trip() {
        for strict in [false, true] {
            let text = write_from(&matrix(), strict);
            let baseline = ok(&text);
            let mut report = matrix();
            let applied = apply(&baseline, &mut report, strict);
            assert_eq!(applied.unexpected, 0, "strict={strict}\n{text}");
            assert!(
                applied.stale.is_empty(),
                "strict={strict}: {applied:?}\n{text}"
            );
            // Writing again from the relabelled run gives the same file.
            assert_eq!(write_from(&report, strict), text);
        }
        // A single-era run never needs qualifiers.
        let single = run(vec![suite("tools@legacy", vec![step("a", failed())])]);
        assert!(write_from(&single, false).contains("\n  - tools:a\n"));
    }

    #[test]
    fn a_green_run_writes_an_empty_baseline() {
        let report = run(vec![suite(
            "green@legacy",
            vec![step("ok", Outcome::Passed)],
        )]);
        let text = write_from(&report, false);
        assert!(text.ends_with("server: []\nclient: []\n"), "{text}");
        assert!(ok(&text).entries.is_empty());
    }

    #[test]
    fn ids_that_do_not_fit_the_syntax_are_written_as_comments() {
        let report = run(vec![
            suite("a:b@legacy", vec![step("x", failed())]),
            suite("at@home@legacy", vec![step("x", failed())]),
        ]);
        let text = write_from(&report, false);
        assert!(
            text.contains("  # cannot be listed (the id does not fit the entry syntax): a:b:x\n"),
            "{text}"
        );
        // `@` in a scenario id is always qualified, so it reads back as the same scenario.
        assert!(text.contains("  - at@home@legacy:x\n"), "{text}");
        let mut r = report.clone();
        let applied = apply(&ok(&text), &mut r, false);
        assert_eq!(applied.unexpected, 1);
        assert!(applied.stale.is_empty());
    }
}
