//! Changes of tools: fields, input and output schemas, `execution`, `x-mcp-header`.

use serde_json::{Value, json};

use super::{Builder, key_of, pair_renames, split};
use crate::language::contract_rules::change_kind::ChangeKind;
use crate::protocol::fields::{INPUT_SCHEMA, OUTPUT_SCHEMA, input_schema, output_schema};
use crate::run::contract::schema_diff::{self, Breaks, Models, SchemaSide};
use crate::run::contract::xmcp::invalid_x_mcp_headers;

pub(super) fn tools(b: &mut Builder, before: &[Value], after: &[Value]) {
    let list = "tools";
    let (removed, added, both) = split(before, after, "name");
    let same_schema = |x: &Value, y: &Value| {
        input_schema(x) == input_schema(y) && output_schema(x) == output_schema(y)
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
            INPUT_SCHEMA,
            input_schema(old).unwrap_or(&empty),
            input_schema(new).unwrap_or(&empty),
            SchemaSide::Input,
        );
        match (output_schema(old), output_schema(new)) {
            (Some(x), Some(y)) => {
                schema_changes(b, list, name, OUTPUT_SCHEMA, x, y, SchemaSide::Output)
            }
            (Some(x), None) => b.push(
                list,
                name,
                ChangeKind::OutputSchemaRemoved,
                Some(OUTPUT_SCHEMA.into()),
                Some(x.clone()),
                None,
                Breaks::Yes,
                Models::Possibly,
            ),
            (None, Some(y)) => b.push(
                list,
                name,
                ChangeKind::OutputSchemaAdded,
                Some(OUTPUT_SCHEMA.into()),
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

pub(super) fn schema_changes(
    b: &mut Builder,
    list: &str,
    name: &str,
    prefix: &str,
    x: &Value,
    y: &Value,
    dir: SchemaSide,
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
pub(super) fn execution(b: &mut Builder, name: &str, old: Option<&Value>, new: Option<&Value>) {
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
pub(super) fn x_mcp_header(b: &mut Builder, name: &str, old: Option<&Value>, new: &Value) {
    let empty = json!({});
    let now = invalid_x_mcp_headers(input_schema(new).unwrap_or(&empty));
    if now.is_empty() {
        return;
    }
    let before = old
        .map(|o| invalid_x_mcp_headers(input_schema(o).unwrap_or(&empty)))
        .unwrap_or_default();
    if before == now {
        return;
    }
    b.push(
        "tools",
        name,
        ChangeKind::InvalidXMcpHeader,
        Some(INPUT_SCHEMA.into()),
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
