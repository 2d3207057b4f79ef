//! Classifying every change between two snapshots (the reference's summary table, with
//! JSON Schemas compared deeply and direction-aware).

mod prompts;
mod resources;
mod server;
mod tools;

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Value, json};

use super::schema_diff::{Breaks, Models};
use super::snapshot::Snapshot;
use crate::language::contract_rules::change_kind::ChangeKind;

use prompts::prompts;
use resources::resources;
use server::server;
use tools::tools;

/// One classified change.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub list: String,
    pub name: String,
    pub kind: ChangeKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<Value>,
    #[serde(serialize_with = "ser_breaks")]
    pub breaks_clients: Breaks,
    #[serde(serialize_with = "ser_models")]
    pub affects_models: Models,
}

fn ser_breaks<S: serde::Serializer>(b: &Breaks, s: S) -> Result<S::Ok, S::Error> {
    match b {
        Breaks::Yes => s.serialize_bool(true),
        Breaks::No => s.serialize_bool(false),
        Breaks::Unknown => s.serialize_str("unknown"),
    }
}

fn ser_models<S: serde::Serializer>(m: &Models, s: S) -> Result<S::Ok, S::Error> {
    match m {
        Models::Yes => s.serialize_bool(true),
        Models::No => s.serialize_bool(false),
        Models::Possibly => s.serialize_str("possibly"),
    }
}

/// Both labels and every change, in a stable order.
#[derive(Debug, Clone, Serialize)]
pub struct DiffReport {
    pub baseline: String,
    pub candidate: String,
    pub changes: Vec<Change>,
    /// Differences in how the two snapshots were taken (era, profile) that may explain changes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

pub(super) struct Builder {
    changes: Vec<Change>,
}

impl Builder {
    #[allow(
        clippy::too_many_arguments,
        reason = "one call per change, each value a different fact of it; a struct would only rename the arguments"
    )]
    pub(super) fn push(
        &mut self,
        list: &str,
        name: &str,
        kind: ChangeKind,
        path: Option<String>,
        before: Option<Value>,
        after: Option<Value>,
        breaks: Breaks,
        models: Models,
    ) {
        self.changes.push(Change {
            list: list.into(),
            name: name.into(),
            kind,
            path,
            before,
            after,
            breaks_clients: breaks,
            affects_models: models,
        });
    }

    /// Items that left (`removed`), moved (`moved_kind`: a probable rename or a new URI)
    /// and arrived (`added`), keyed by `key`.
    #[allow(
        clippy::too_many_arguments,
        reason = "one call per change, each value a different fact of it; a struct would only rename the arguments"
    )]
    pub(super) fn membership(
        &mut self,
        list: &str,
        key: &str,
        removed: &[&Value],
        moved: &[(&Value, &Value)],
        added: &[&Value],
        moved_kind: ChangeKind,
        moved_models: Models,
    ) {
        for item in removed {
            let name = key_of(item, key);
            self.push(
                list,
                name,
                ChangeKind::Removed,
                None,
                Some(json!(name)),
                None,
                Breaks::Yes,
                Models::Yes,
            );
        }
        for (old, new) in moved {
            let (from, to) = (key_of(old, key), key_of(new, key));
            self.push(
                list,
                from,
                moved_kind,
                Some(key.into()),
                Some(json!(from)),
                Some(json!(to)),
                Breaks::Yes,
                moved_models,
            );
        }
        for item in added {
            let name = key_of(item, key);
            self.push(
                list,
                name,
                ChangeKind::Added,
                None,
                None,
                Some(json!(name)),
                Breaks::No,
                Models::Yes,
            );
        }
    }

    /// `title` and `description` of an item: model-facing text.
    pub(super) fn title_and_description(
        &mut self,
        list: &str,
        name: &str,
        old: &Value,
        new: &Value,
    ) {
        for (field, kind) in [
            ("title", ChangeKind::TitleChanged),
            ("description", ChangeKind::DescriptionChanged),
        ] {
            self.field(list, name, old, new, field, kind, Breaks::No, Models::Yes);
        }
    }

    /// A field of an item changed (title, description, annotations, mimeType…).
    #[allow(
        clippy::too_many_arguments,
        reason = "one call per change, each value a different fact of it; a struct would only rename the arguments"
    )]
    pub(super) fn field(
        &mut self,
        list: &str,
        name: &str,
        a: &Value,
        b: &Value,
        field: &str,
        kind: ChangeKind,
        breaks: Breaks,
        models: Models,
    ) {
        let (x, y) = (a.get(field), b.get(field));
        if x != y {
            self.push(
                list,
                name,
                kind,
                Some(field.into()),
                x.cloned(),
                y.cloned(),
                breaks,
                models,
            );
        }
    }
}

/// Classify every change from `baseline` to `candidate`.
pub fn diff_snapshots(
    baseline: &Snapshot,
    candidate: &Snapshot,
    labels: (String, String),
) -> DiffReport {
    let mut b = Builder {
        changes: Vec::new(),
    };
    tools(&mut b, &baseline.tools, &candidate.tools);
    prompts(&mut b, &baseline.prompts, &candidate.prompts);
    resources(
        &mut b,
        "resources",
        "uri",
        &baseline.resources,
        &candidate.resources,
    );
    resources(
        &mut b,
        "resource-templates",
        "uriTemplate",
        &baseline.resource_templates,
        &candidate.resource_templates,
    );
    server(&mut b, &baseline.server, &candidate.server);
    let mut warnings = Vec::new();
    for key in ["era", "revision", "profile"] {
        let (x, y) = (baseline.meta.get(key), candidate.meta.get(key));
        if x.is_some() && y.is_some() && x != y {
            warnings.push(format!(
                "the snapshots were taken with different {key}s ({} vs {}): some changes may come from that",
                x.map(Value::to_string).unwrap_or_default(),
                y.map(Value::to_string).unwrap_or_default()
            ));
        }
    }
    DiffReport {
        baseline: labels.0,
        candidate: labels.1,
        changes: b.changes,
        warnings,
    }
}

pub(super) fn key_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Items only in `a`, only in `b`, and in both (by stable key).
pub(super) fn split<'a>(
    a: &'a [Value],
    b: &'a [Value],
    key: &str,
) -> (Vec<&'a Value>, Vec<&'a Value>, Vec<(&'a Value, &'a Value)>) {
    let in_b: BTreeSet<&str> = b.iter().map(|v| key_of(v, key)).collect();
    let in_a: BTreeSet<&str> = a.iter().map(|v| key_of(v, key)).collect();
    let removed = a
        .iter()
        .filter(|v| !in_b.contains(key_of(v, key)))
        .collect();
    let added = b
        .iter()
        .filter(|v| !in_a.contains(key_of(v, key)))
        .collect();
    let both = a
        .iter()
        .filter_map(|x| {
            b.iter()
                .find(|y| key_of(y, key) == key_of(x, key))
                .map(|y| (x, y))
        })
        .collect();
    (removed, added, both)
}

/// Pair removed and added items that look like renames (`same` decides).
pub(super) fn pair_renames<'a>(
    removed: Vec<&'a Value>,
    added: Vec<&'a Value>,
    same: impl Fn(&Value, &Value) -> bool,
) -> (Vec<&'a Value>, Vec<&'a Value>, Vec<(&'a Value, &'a Value)>) {
    let mut added_left: Vec<&Value> = added;
    let mut removed_left = Vec::new();
    let mut pairs = Vec::new();
    for r in removed {
        if let Some(i) = added_left.iter().position(|a| same(r, a)) {
            pairs.push((r, added_left.remove(i)));
        } else {
            removed_left.push(r);
        }
    }
    (removed_left, added_left, pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_server(server: Value) -> Snapshot {
        Snapshot {
            tools: Vec::new(),
            resources: Vec::new(),
            resource_templates: Vec::new(),
            prompts: Vec::new(),
            server,
            meta: Value::Null,
        }
    }

    /// Nested flags (`resources.subscribe`) are looked up by their own key: the same
    /// capabilities on both sides are no change, and a flag that goes is named by its path.
    #[test]
    fn nested_capability_flags_compare_by_key() {
        let caps = json!({"capabilities": {"resources": {"listChanged": true, "subscribe": true}, "tools": {"listChanged": true}}});
        let same = diff_snapshots(
            &with_server(caps.clone()),
            &with_server(caps.clone()),
            ("a".into(), "b".into()),
        );
        assert!(same.changes.is_empty(), "{:?}", same.changes);
        let fewer = json!({"capabilities": {"resources": {"listChanged": true}, "tools": {"listChanged": true}}});
        let report = diff_snapshots(
            &with_server(caps),
            &with_server(fewer),
            ("a".into(), "b".into()),
        );
        let found: Vec<(&str, &str)> = report
            .changes
            .iter()
            .map(|c| (c.name.as_str(), c.kind.as_str()))
            .collect();
        assert_eq!(found, [("resources.subscribe", "capability_removed")]);
    }

    /// Every `taskSupport` transition (absent = `forbidden`): refusing calls that worked
    /// breaks clients, allowing more does not; other `execution` fields are unknown.
    #[test]
    fn task_support_transitions() {
        let tool = |execution: Option<Value>| {
            let mut t = json!({"name": "t", "inputSchema": {"type": "object"}});
            if let Some(e) = execution {
                t["execution"] = e;
            }
            Snapshot {
                tools: vec![t],
                ..with_server(json!({}))
            }
        };
        let ts = |v: &str| Some(json!({ "taskSupport": v }));
        let kinds = |a: Option<Value>, b: Option<Value>| -> Vec<(String, Breaks, Models)> {
            diff_snapshots(&tool(a), &tool(b), ("a".into(), "b".into()))
                .changes
                .into_iter()
                .map(|c| {
                    (
                        c.kind.as_str().to_string(),
                        c.breaks_clients,
                        c.affects_models,
                    )
                })
                .collect()
        };
        let narrowed = vec![("task_support_narrowed".to_string(), Breaks::Yes, Models::No)];
        let widened = vec![("task_support_widened".to_string(), Breaks::No, Models::No)];
        assert!(kinds(None, ts("forbidden")).is_empty());
        assert_eq!(kinds(None, ts("required")), narrowed);
        assert_eq!(kinds(ts("optional"), ts("required")), narrowed);
        assert_eq!(kinds(ts("optional"), ts("forbidden")), narrowed);
        assert_eq!(kinds(ts("required"), None), narrowed);
        assert_eq!(kinds(None, ts("optional")), widened);
        assert_eq!(kinds(ts("required"), ts("optional")), widened);
        assert_eq!(
            kinds(None, Some(json!({"other": 1}))),
            vec![("execution_changed".to_string(), Breaks::Unknown, Models::No)]
        );
    }
}
