//! Classifying every change between two snapshots (the reference's summary table, with
//! JSON Schemas compared deeply and direction-aware).

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::change_kind::ChangeKind;
use super::schema_diff::{self, Breaks, Direction, Models};
use super::snapshot::Snapshot;
use super::xmcp::invalid_x_mcp_headers;

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

struct Builder {
    changes: Vec<Change>,
}

impl Builder {
    #[allow(clippy::too_many_arguments)]
    fn push(
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
    #[allow(clippy::too_many_arguments)]
    fn membership(
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
    fn title_and_description(&mut self, list: &str, name: &str, old: &Value, new: &Value) {
        for (field, kind) in [
            ("title", ChangeKind::TitleChanged),
            ("description", ChangeKind::DescriptionChanged),
        ] {
            self.field(list, name, old, new, field, kind, Breaks::No, Models::Yes);
        }
    }

    /// A field of an item changed (title, description, annotations, mimeType…).
    fn field(
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

fn key_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Items only in `a`, only in `b`, and in both (by stable key).
fn split<'a>(
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
fn pair_renames<'a>(
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

fn tools(b: &mut Builder, before: &[Value], after: &[Value]) {
    let list = "tools";
    let (removed, added, both) = split(before, after, "name");
    let same_schema = |x: &Value, y: &Value| {
        x.get("inputSchema") == y.get("inputSchema")
            && x.get("outputSchema") == y.get("outputSchema")
    };
    let (removed, added, renamed) = pair_renames(removed, added, same_schema);
    b.membership(
        list,
        "name",
        &removed,
        &renamed,
        &added,
        ChangeKind::Renamed,
        Models::Yes,
    );
    for t in &added {
        x_mcp_header(b, key_of(t, "name"), None, t);
    }
    for (old, new) in both {
        let name = key_of(old, "name");
        b.title_and_description(list, name, old, new);
        b.field(
            list,
            name,
            old,
            new,
            "annotations",
            ChangeKind::AnnotationsChanged,
            Breaks::No,
            Models::Possibly,
        );
        execution(b, name, old.get("execution"), new.get("execution"));
        let empty = json!({});
        schema_changes(
            b,
            list,
            name,
            "inputSchema",
            old.get("inputSchema").unwrap_or(&empty),
            new.get("inputSchema").unwrap_or(&empty),
            Direction::Input,
        );
        match (old.get("outputSchema"), new.get("outputSchema")) {
            (Some(x), Some(y)) => {
                schema_changes(b, list, name, "outputSchema", x, y, Direction::Output)
            }
            (Some(x), None) => b.push(
                list,
                name,
                ChangeKind::OutputSchemaRemoved,
                Some("outputSchema".into()),
                Some(x.clone()),
                None,
                Breaks::Yes,
                Models::Possibly,
            ),
            (None, Some(y)) => b.push(
                list,
                name,
                ChangeKind::OutputSchemaAdded,
                Some("outputSchema".into()),
                None,
                Some(y.clone()),
                Breaks::No,
                Models::Possibly,
            ),
            (None, None) => {}
        }
        x_mcp_header(b, name, Some(old), new);
    }
}

fn schema_changes(
    b: &mut Builder,
    list: &str,
    name: &str,
    prefix: &str,
    x: &Value,
    y: &Value,
    dir: Direction,
) {
    for c in schema_diff::compare(x, y, dir) {
        let path = if c.path.is_empty() {
            prefix.to_string()
        } else {
            format!("{prefix}.{}", c.path)
        };
        b.push(
            list,
            name,
            c.kind,
            Some(path),
            c.before,
            c.after,
            c.breaks,
            c.models,
        );
    }
}

/// `execution` of a tool (2025-11-25 `ToolExecution`). `taskSupport` (absent means
/// `forbidden`) says how the tool may be called: a change that refuses calls that worked
/// (tasks now `required`, or `forbidden` where they were allowed) breaks clients; one that
/// only allows more (`optional`) does not. Neither is shown to models: hosts act on it.
/// Other `execution` fields are unknown to the comparator.
fn execution(b: &mut Builder, name: &str, old: Option<&Value>, new: Option<&Value>) {
    let task_support = |e: Option<&Value>| {
        e.and_then(|e| e.get("taskSupport"))
            .and_then(Value::as_str)
            .unwrap_or("forbidden")
            .to_string()
    };
    let (before, after) = (task_support(old), task_support(new));
    if before != after {
        let narrowed = after == "required" || (after == "forbidden" && before != "forbidden");
        let (kind, breaks) = if narrowed {
            (ChangeKind::TaskSupportNarrowed, Breaks::Yes)
        } else {
            (ChangeKind::TaskSupportWidened, Breaks::No)
        };
        b.push(
            "tools",
            name,
            kind,
            Some("execution.taskSupport".into()),
            Some(json!(before)),
            Some(json!(after)),
            breaks,
            Models::No,
        );
    }
    let others = |e: Option<&Value>| {
        let mut e = e.and_then(Value::as_object).cloned().unwrap_or_default();
        e.remove("taskSupport");
        e
    };
    let (x, y) = (others(old), others(new));
    if x != y {
        b.push(
            "tools",
            name,
            ChangeKind::ExecutionChanged,
            Some("execution".into()),
            Some(Value::Object(x)),
            Some(Value::Object(y)),
            Breaks::Unknown,
            Models::No,
        );
    }
}

/// A tool whose `x-mcp-header` annotations break the rules is dropped by HTTP clients.
fn x_mcp_header(b: &mut Builder, name: &str, old: Option<&Value>, new: &Value) {
    let empty = json!({});
    let now = invalid_x_mcp_headers(new.get("inputSchema").unwrap_or(&empty));
    if now.is_empty() {
        return;
    }
    let before = old
        .map(|o| invalid_x_mcp_headers(o.get("inputSchema").unwrap_or(&empty)))
        .unwrap_or_default();
    if before == now {
        return;
    }
    b.push(
        "tools",
        name,
        ChangeKind::InvalidXMcpHeader,
        Some("inputSchema".into()),
        if before.is_empty() {
            None
        } else {
            Some(json!(before))
        },
        Some(json!(now)),
        Breaks::Yes,
        Models::Yes,
    );
}

fn prompts(b: &mut Builder, before: &[Value], after: &[Value]) {
    let list = "prompts";
    let (removed, added, both) = split(before, after, "name");
    let same_args = |x: &Value, y: &Value| {
        x.get("arguments") == y.get("arguments") && x.get("description") == y.get("description")
    };
    let (removed, added, renamed) = pair_renames(removed, added, same_args);
    b.membership(
        list,
        "name",
        &removed,
        &renamed,
        &added,
        ChangeKind::Renamed,
        Models::Yes,
    );
    for (old, new) in both {
        let name = key_of(old, "name");
        b.title_and_description(list, name, old, new);
        let args = |v: &Value| {
            v.get("arguments")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let (xa, ya) = (args(old), args(new));
        let (gone, new_args, kept) = split(&xa, &ya, "name");
        let required = |v: &Value| v.get("required").and_then(Value::as_bool).unwrap_or(false);
        for a in gone {
            let path = format!("arguments.{}", key_of(a, "name"));
            b.push(
                list,
                name,
                ChangeKind::ArgumentRemoved,
                Some(path),
                Some(a.clone()),
                None,
                Breaks::Yes,
                Models::Yes,
            );
        }
        for a in new_args {
            let path = format!("arguments.{}", key_of(a, "name"));
            if required(a) {
                b.push(
                    list,
                    name,
                    ChangeKind::RequiredArgumentAdded,
                    Some(path),
                    None,
                    Some(a.clone()),
                    Breaks::Yes,
                    Models::Yes,
                );
            } else {
                b.push(
                    list,
                    name,
                    ChangeKind::OptionalArgumentAdded,
                    Some(path),
                    None,
                    Some(a.clone()),
                    Breaks::No,
                    Models::Possibly,
                );
            }
        }
        for (x, y) in kept {
            let path = format!("arguments.{}", key_of(x, "name"));
            match (required(x), required(y)) {
                (false, true) => b.push(
                    list,
                    name,
                    ChangeKind::ArgumentBecameRequired,
                    Some(format!("{path}.required")),
                    Some(json!(false)),
                    Some(json!(true)),
                    Breaks::Yes,
                    Models::Yes,
                ),
                (true, false) => b.push(
                    list,
                    name,
                    ChangeKind::ArgumentBecameOptional,
                    Some(format!("{path}.required")),
                    Some(json!(true)),
                    Some(json!(false)),
                    Breaks::No,
                    Models::Possibly,
                ),
                _ => {}
            }
            for (field, kind) in [
                ("description", ChangeKind::ArgumentDescriptionChanged),
                ("title", ChangeKind::ArgumentTitleChanged),
            ] {
                if x.get(field) != y.get(field) {
                    b.push(
                        list,
                        name,
                        kind,
                        Some(format!("{path}.{field}")),
                        x.get(field).cloned(),
                        y.get(field).cloned(),
                        Breaks::No,
                        Models::Yes,
                    );
                }
            }
        }
    }
}

/// Resources (by `uri`) and resource templates (by `uriTemplate`): a removed and an added
/// item with the same `name` is a changed URI.
fn resources(b: &mut Builder, list: &str, key: &str, before: &[Value], after: &[Value]) {
    let (removed, added, both) = split(before, after, key);
    let same_name =
        |x: &Value, y: &Value| x.get("name").is_some() && x.get("name") == y.get("name");
    let (removed, added, moved) = pair_renames(removed, added, same_name);
    let changed_kind = if key == "uri" {
        ChangeKind::UriChanged
    } else {
        ChangeKind::UriTemplateChanged
    };
    b.membership(
        list,
        key,
        &removed,
        &moved,
        &added,
        changed_kind,
        Models::Possibly,
    );
    for (old, new) in both {
        let name = key_of(old, key);
        b.field(
            list,
            name,
            old,
            new,
            "name",
            ChangeKind::NameChanged,
            Breaks::No,
            Models::Possibly,
        );
        b.title_and_description(list, name, old, new);
        b.field(
            list,
            name,
            old,
            new,
            "mimeType",
            ChangeKind::MimeTypeChanged,
            Breaks::Yes,
            Models::Possibly,
        );
    }
}

fn server(b: &mut Builder, before: &Value, after: &Value) {
    let list = "server";
    let versions = |v: &Value, k: &str| -> BTreeSet<String> {
        v.get(k)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (x, y) = (
        versions(before, "supportedVersions"),
        versions(after, "supportedVersions"),
    );
    if before.get("supportedVersions").is_some() && after.get("supportedVersions").is_some() {
        for v in x.difference(&y) {
            b.push(
                list,
                v,
                ChangeKind::ProtocolVersionDropped,
                Some("supportedVersions".into()),
                Some(json!(v)),
                None,
                Breaks::Yes,
                Models::No,
            );
        }
        for v in y.difference(&x) {
            b.push(
                list,
                v,
                ChangeKind::ProtocolVersionAdded,
                Some("supportedVersions".into()),
                None,
                Some(json!(v)),
                Breaks::No,
                Models::No,
            );
        }
    }
    let empty = Map::new();
    let caps = |v: &Value| {
        v.get("capabilities")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_else(|| empty.clone())
    };
    capabilities(b, "capabilities", &caps(before), &caps(after));
    if before.get("instructions") != after.get("instructions") {
        b.push(
            list,
            "instructions",
            ChangeKind::InstructionsChanged,
            Some("instructions".into()),
            before.get("instructions").cloned(),
            after.get("instructions").cloned(),
            Breaks::No,
            Models::Yes,
        );
    }
}

/// Capabilities and their flags, recursively; `extensions` entries are named as such.
fn capabilities(b: &mut Builder, path: &str, x: &Map<String, Value>, y: &Map<String, Value>) {
    let is_ext = path == "capabilities.extensions";
    // `extensions` appearing or vanishing as a whole: report each extension.
    if path == "capabilities" {
        let empty = Map::new();
        let ext = |m: &Map<String, Value>| m.get("extensions").and_then(Value::as_object).cloned();
        if let (Some(e), None) | (None, Some(e)) = (ext(x), ext(y)) {
            let (xe, ye) = if x.contains_key("extensions") {
                (e, empty.clone())
            } else {
                (empty.clone(), e)
            };
            capabilities(b, "capabilities.extensions", &xe, &ye);
            let strip = |m: &Map<String, Value>| {
                let mut m = m.clone();
                m.remove("extensions");
                m
            };
            return capabilities(b, path, &strip(x), &strip(y));
        }
    }
    for (k, v) in x {
        let p = format!("{path}.{k}");
        let name = &cap_name(&p);
        match y.get(k) {
            None => {
                let kind = if is_ext {
                    ChangeKind::ExtensionRemoved
                } else {
                    ChangeKind::CapabilityRemoved
                };
                b.push(
                    "server",
                    name,
                    kind,
                    Some(p),
                    Some(v.clone()),
                    None,
                    Breaks::Yes,
                    Models::Possibly,
                );
            }
            Some(w) => match (v, w) {
                (Value::Object(vo), Value::Object(wo)) => capabilities(b, &p, vo, wo),
                _ if v != w => {
                    // A flag turned off (e.g. listChanged true → false) removes behaviour.
                    let breaks = if w == &json!(false) || w.is_null() {
                        Breaks::Yes
                    } else {
                        Breaks::No
                    };
                    let kind = if breaks == Breaks::Yes {
                        ChangeKind::CapabilityRemoved
                    } else {
                        ChangeKind::CapabilityChanged
                    };
                    b.push(
                        "server",
                        name,
                        kind,
                        Some(p),
                        Some(v.clone()),
                        Some(w.clone()),
                        breaks,
                        Models::Possibly,
                    );
                }
                _ => {}
            },
        }
    }
    for (k, w) in y {
        if !x.contains_key(k) {
            let kind = if is_ext {
                ChangeKind::ExtensionAdded
            } else {
                ChangeKind::CapabilityAdded
            };
            let p = format!("{path}.{k}");
            b.push(
                "server",
                &cap_name(&p),
                kind,
                Some(p.clone()),
                None,
                Some(w.clone()),
                Breaks::No,
                Models::Possibly,
            );
        }
    }
}

/// A capability's name for reports: its path below `capabilities` (`tools.listChanged`;
/// an extension is named by its identifier).
fn cap_name(path: &str) -> String {
    let rest = path.strip_prefix("capabilities.").unwrap_or(path);
    rest.strip_prefix("extensions.").unwrap_or(rest).to_string()
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
