//! Contract rules: which changes fail the run, which are only reported, and which are
//! accepted (each with a reason and an optional expiry). An accepted change that no
//! longer occurs is stale and fails the run until it is removed.

use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::diff::{Change, DiffReport};
use super::schema_diff::{Breaks, Models};
use crate::dsl::error::{LoadError, LoadErrors, did_you_mean};
use crate::dsl::load::parse_yaml;
use crate::dsl::value::At;
use crate::source::{Pos, SourceFile};

/// Every change kind `mcpspec diff` reports.
pub const KINDS: &[&str] = &[
    // items
    "removed",
    "added",
    "renamed",
    "title_changed",
    "description_changed",
    "annotations_changed",
    "name_changed",
    "uri_changed",
    "uri_template_changed",
    "mime_type_changed",
    // tool input schemas
    "required_parameter_added",
    "optional_parameter_added",
    "parameter_removed",
    "parameter_renamed",
    "parameter_became_required",
    "parameter_became_optional",
    "type_changed",
    "type_widened",
    "enum_added",
    "enum_values_removed",
    "enum_values_added",
    "enum_removed",
    "const_added",
    "const_changed",
    "const_removed",
    "bound_narrowed",
    "bound_widened",
    "pattern_added",
    "pattern_changed",
    "pattern_removed",
    "format_added",
    "format_changed",
    "format_removed",
    "additional_properties_restricted",
    "additional_properties_relaxed",
    "parameter_description_changed",
    "parameter_title_changed",
    "default_changed",
    "unknown_schema_change",
    "invalid_x_mcp_header",
    "x_mcp_header_added",
    "x_mcp_header_changed",
    "x_mcp_header_removed",
    "task_support_narrowed",
    "task_support_widened",
    "execution_changed",
    // tool output schemas
    "output_property_removed",
    "output_property_renamed",
    "output_property_added",
    "output_property_no_longer_required",
    "output_property_now_required",
    "output_schema_added",
    "output_schema_removed",
    // prompts
    "required_argument_added",
    "optional_argument_added",
    "argument_removed",
    "argument_became_required",
    "argument_became_optional",
    "argument_description_changed",
    "argument_title_changed",
    // server
    "protocol_version_dropped",
    "protocol_version_added",
    "capability_removed",
    "capability_added",
    "capability_changed",
    "extension_removed",
    "extension_added",
    "instructions_changed",
];

/// Categories usable in `fail`.
pub const CATEGORIES: &[&str] = &["breaking", "unknown", "models", "any"];
pub const LISTS: &[&str] = &[
    "tools",
    "resources",
    "resource-templates",
    "prompts",
    "server",
];

/// A contract rules file.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "mcpspec contract rules")]
pub struct RulesDoc {
    /// What fails the run: `breaking` (breaksClients: true), `unknown` (the comparator
    /// could not decide), `models` (affectsModels: true), `any`, or change kinds.
    /// Default: `[breaking]`. Everything else is reported only.
    #[serde(default)]
    pub fail: Option<Vec<At<String>>>,
    /// Change kinds left out of the report entirely.
    #[serde(default)]
    pub ignore: Vec<At<String>>,
    /// Changes accepted on purpose: they are reported but do not fail.
    #[serde(default)]
    pub accept: Vec<At<AcceptDoc>>,
}

/// One accepted change.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AcceptDoc {
    /// `tools`, `resources`, `resource-templates`, `prompts` or `server`.
    pub list: At<String>,
    /// Item name (tool/prompt name, resource URI, template, or the server entry).
    pub name: At<String>,
    /// Change kind, e.g. `removed`, `required_parameter_added`.
    pub kind: At<String>,
    /// Only the change at this path (e.g. `inputSchema.required`); default: any path.
    #[serde(default)]
    pub path: Option<String>,
    /// Why this change is acceptable (mandatory).
    pub reason: At<String>,
    /// `YYYY-MM-DD`: after this day the acceptance no longer applies.
    #[serde(default)]
    pub expires: Option<At<String>>,
}

#[derive(Debug, Clone)]
pub struct Accept {
    pub list: String,
    pub name: String,
    pub kind: String,
    pub path: Option<String>,
    pub reason: String,
    pub expires: Option<chrono::NaiveDate>,
    pub pos: Pos,
}

#[derive(Debug, Clone)]
pub struct Rules {
    pub fail: Vec<String>,
    pub ignore: Vec<String>,
    pub accept: Vec<Accept>,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            fail: vec!["breaking".into()],
            ignore: Vec::new(),
            accept: Vec::new(),
        }
    }
}

impl Rules {
    pub fn load(path: &Path) -> Result<Rules, LoadErrors> {
        let file = crate::dsl::error::read_source(path)?;
        let doc: RulesDoc = parse_yaml(&file)?;
        compile(&file, doc)
    }
}

fn compile(file: &Arc<SourceFile>, doc: RulesDoc) -> Result<Rules, LoadErrors> {
    let mut errors = LoadErrors::default();
    let pos = |a: &At<String>| Pos::new(file, a.line, a.col);
    let check_kind = |k: &At<String>, allow_categories: bool, errors: &mut LoadErrors| {
        let ok =
            KINDS.contains(&k.as_str()) || (allow_categories && CATEGORIES.contains(&k.as_str()));
        if !ok {
            let candidates = KINDS.iter().chain(if allow_categories {
                CATEGORIES.iter()
            } else {
                [].iter()
            });
            let help = match did_you_mean(k, candidates.copied()) {
                Some(s) => format!("did you mean `{s}`? the book chapter docs/src/contracts.md lists every change kind"),
                None => "see the book chapter docs/src/contracts.md for the change kinds and the categories breaking, unknown, models, any".into(),
            };
            errors.push(
                LoadError::at(pos(k), format!("unknown change kind `{}`", **k)).with_help(help),
            );
        }
    };
    let fail: Vec<String> = match &doc.fail {
        Some(list) => {
            for k in list {
                check_kind(k, true, &mut errors);
            }
            list.iter().map(|k| k.value.clone()).collect()
        }
        None => vec!["breaking".into()],
    };
    for k in &doc.ignore {
        check_kind(k, false, &mut errors);
    }
    let mut accept = Vec::new();
    for a in doc.accept {
        let entry_pos = Pos::new(file, a.line, a.col);
        let a = a.value;
        if !LISTS.contains(&a.list.as_str()) {
            errors.push(
                LoadError::at(pos(&a.list), format!("unknown list `{}`", *a.list))
                    .with_help(format!("expected one of {}", LISTS.join(", "))),
            );
        }
        check_kind(&a.kind, false, &mut errors);
        if a.reason.trim().is_empty() {
            errors.push(LoadError::at(
                pos(&a.reason),
                "an accepted change needs a reason",
            ));
        }
        let expires = match &a.expires {
            Some(e) => match chrono::NaiveDate::parse_from_str(e, "%Y-%m-%d") {
                Ok(d) => Some(d),
                Err(_) => {
                    errors.push(
                        LoadError::at(pos(e), format!("invalid date `{}`", **e))
                            .with_help("expected YYYY-MM-DD"),
                    );
                    None
                }
            },
            None => None,
        };
        accept.push(Accept {
            list: a.list.value,
            name: a.name.value,
            kind: a.kind.value,
            path: a.path,
            reason: a.reason.value,
            expires,
            pos: entry_pos,
        });
    }
    if errors.is_empty() {
        Ok(Rules {
            fail,
            ignore: doc.ignore.into_iter().map(|k| k.value).collect(),
            accept,
        })
    } else {
        Err(errors)
    }
}

/// What the rules make of one change.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Fail,
    Report,
    Accepted { reason: String },
}

#[derive(Debug, Clone)]
pub struct Judged {
    pub change: Change,
    pub verdict: Verdict,
    /// Set when an acceptance matched but has expired.
    pub note: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Judgement {
    pub changes: Vec<Judged>,
    /// Acceptance entries that matched nothing: `file:line:col: message`.
    pub stale: Vec<String>,
}

impl Judgement {
    pub fn fails(&self) -> bool {
        !self.stale.is_empty() || self.changes.iter().any(|j| j.verdict == Verdict::Fail)
    }
}

fn fails(rules: &Rules, c: &Change) -> bool {
    rules.fail.iter().any(|f| match f.as_str() {
        "any" => true,
        "breaking" => c.breaks_clients == Breaks::Yes,
        "unknown" => c.breaks_clients == Breaks::Unknown,
        "models" => c.affects_models == Models::Yes,
        kind => c.kind == kind,
    })
}

/// Apply rules to a diff (`today` decides expiry).
pub fn judge(rules: &Rules, report: &DiffReport, today: chrono::NaiveDate) -> Judgement {
    let mut used = vec![false; rules.accept.len()];
    let mut changes = Vec::new();
    for c in report
        .changes
        .iter()
        .filter(|c| !rules.ignore.contains(&c.kind))
    {
        let matching = rules.accept.iter().enumerate().find(|(_, a)| {
            a.list == c.list
                && a.name == c.name
                && a.kind == c.kind
                && a.path.as_ref().is_none_or(|p| Some(p) == c.path.as_ref())
        });
        let mut note = None;
        let verdict = match matching {
            Some((i, a)) => {
                used[i] = true;
                match a.expires {
                    Some(d) if d < today => {
                        note = Some(format!("acceptance at {} expired on {d}", a.pos));
                        if fails(rules, c) {
                            Verdict::Fail
                        } else {
                            Verdict::Report
                        }
                    }
                    _ => Verdict::Accepted {
                        reason: a.reason.clone(),
                    },
                }
            }
            None if fails(rules, c) => Verdict::Fail,
            None => Verdict::Report,
        };
        changes.push(Judged {
            change: c.clone(),
            verdict,
            note,
        });
    }
    let stale = rules
        .accept
        .iter()
        .zip(used)
        .filter(|(_, u)| !u)
        .map(|(a, _)| {
            format!(
                "{}: accepted change `{}` of {} `{}` no longer occurs: remove this entry",
                a.pos, a.kind, a.list, a.name
            )
        })
        .collect();
    Judgement { changes, stale }
}
