//! Contract rules files: which changes fail the run, which are only reported, and which are
//! accepted (each with a reason and an optional expiry) — read and checked here, on the ground
//! floor, so that the scenario DSL (a `contract` step names a rules file) and the comparison
//! (`contract::rules` judges a diff by them) both take them from one place.

pub mod change_kind;

use std::path::Path;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::ground::load_error::{LoadError, LoadErrors, did_you_mean};
use crate::ground::source::{Pos, SourceFile};
use crate::ground::yaml::{At, parse as parse_yaml};
use crate::protocol::ListKind;
use change_kind::ChangeKind;

/// Categories usable in `fail`.
pub const CATEGORIES: &[&str] = &["breaking", "unknown", "models", "any"];
/// What an `accept` entry may name: a list of the snapshot, or the server entry.
pub const LISTS: &[&str] = &[
    ListKind::Tools.snapshot_name(),
    ListKind::Resources.snapshot_name(),
    ListKind::ResourceTemplates.snapshot_name(),
    ListKind::Prompts.snapshot_name(),
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
        let file = crate::ground::load_error::read_source(path)?;
        let doc: RulesDoc = parse_yaml(&file)?;
        compile(&file, doc)
    }
}

fn compile(file: &Arc<SourceFile>, doc: RulesDoc) -> Result<Rules, LoadErrors> {
    let mut errors = LoadErrors::default();
    let pos = |a: &At<String>| Pos::new(file, a.line, a.col);
    let check_kind = |k: &At<String>, allow_categories: bool, errors: &mut LoadErrors| {
        let ok = ChangeKind::parse(k).is_some()
            || (allow_categories && CATEGORIES.contains(&k.as_str()));
        if !ok {
            let categories: &[&str] = if allow_categories { CATEGORIES } else { &[] };
            let candidates = ChangeKind::ALL
                .iter()
                .map(|k| k.as_str())
                .chain(categories.iter().copied());
            let help = match did_you_mean(k, candidates) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(text: &str) -> Result<Rules, LoadErrors> {
        let file = SourceFile::new("rules.yaml", text);
        let doc: RulesDoc = parse_yaml(&file)?;
        compile(&file, doc)
    }

    /// Every kind the comparators emit can be named in `fail` and `ignore` (the
    /// `x_mcp_header_*` kinds were once missing from the rules' own list), and a misspelt
    /// one is refused with a suggestion.
    #[test]
    fn every_change_kind_can_be_named() {
        for kind in ChangeKind::ALL {
            let text = format!("fail: [breaking, {kind}]\nignore: [{kind}]\n");
            assert!(rules(&text).is_ok(), "{kind}: {:?}", rules(&text).err());
        }
        let err = format!(
            "{:?}",
            rules("ignore: [x_mcp_header_chnged]\n").unwrap_err()
        );
        assert!(err.contains("unknown change kind"), "{err}");
        assert!(err.contains("x_mcp_header_changed"), "{err}");
    }
}
