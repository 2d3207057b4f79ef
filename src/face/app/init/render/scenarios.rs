//! The scenario of each listed item: a tool (listed with valid schemas, called when
//! read-only), a prompt, a resource, a resource template — with what `init` observed per era.

use std::collections::BTreeSet;

use serde_json::Value;

use super::Item;
use crate::face::app::init::probe::{EraSeen, ProbedAnswer, is_read_only, prompt_get_params};
use crate::face::app::init::yaml::{flow, literal};
use crate::ground::json::path::string_literal as jsonpath_string;
use crate::ground::yaml::write::{quoted, scalar};
use crate::protocol::{ListKind, fields};
use crate::run::argsgen;

/// The scenario's head: id, description, tags, and `eras` when the item is not in every era.
pub(super) fn head(
    id: &str,
    description: &str,
    tag: &str,
    item_eras: &[String],
    all: &[&str],
) -> String {
    let mut out = format!(
        "scenario: {}\ndescription: {}\ntags: [{}]\n",
        scalar(id),
        quoted(description),
        scalar(tag)
    );
    if item_eras.len() < all.len() {
        let labels: Vec<String> = item_eras.iter().map(|e| scalar(e)).collect();
        out.push_str(&format!(
            "eras: [{}]   # the server lists it only in these eras\n",
            labels.join(", ")
        ));
    }
    out.push_str("steps:\n");
    out
}

/// `$.LIST[?@.KEY == 'ID']`, quoted for YAML.
/// The JSONPath of item `id` in a `kind` list result, then `tail`. Expectation paths are
/// templates: an id that holds `{{` is kept as written (a [`literal`]).
pub(super) fn item_path(kind: ListKind, id: &str, tail: &str) -> String {
    quoted(&format!(
        "$.{}[?@.{} == {}]{tail}",
        kind.result_key(),
        kind.item_id(),
        literal(&jsonpath_string(id))
    ))
}

pub(super) fn is_valid_schema(v: Option<&Value>) -> bool {
    v.is_some_and(|s| s.is_object() && jsonschema::meta::validate(s).is_ok())
}

/// The observation of `id` in each era of `item_eras`.
pub(super) fn observations<'a>(
    eras: &'a [EraSeen],
    item_eras: &[String],
    pick: impl Fn(&'a EraSeen) -> &'a [(String, ProbedAnswer)],
    id: &str,
) -> Vec<(&'a str, Option<&'a ProbedAnswer>)> {
    eras.iter()
        .filter(|e| item_eras.contains(&e.label))
        .map(|e| {
            (
                e.label.as_str(),
                pick(e).iter().find(|(n, _)| n == id).map(|(_, o)| o),
            )
        })
        .collect()
}

/// Splits observations: the results, the eras they came from, and failure comments.
pub(super) fn split<'a>(
    seen: &[(&'a str, Option<&'a ProbedAnswer>)],
) -> (Vec<&'a Value>, Vec<&'a str>, Vec<String>) {
    let mut results = Vec::new();
    let mut ok_eras = Vec::new();
    let mut failed = Vec::new();
    for (era, o) in seen {
        match o {
            Some(ProbedAnswer::Result(v)) => {
                results.push(v);
                ok_eras.push(*era);
            }
            Some(ProbedAnswer::Failed(why)) => failed.push(format!("{era}: {why}")),
            None => {}
        }
    }
    (results, ok_eras, failed)
}

/// `    eras: [...]` when a step holds in only some of the item's eras.
pub(super) fn step_eras(ok: &[&str], item_eras: &[String]) -> String {
    if ok.len() < item_eras.len() {
        let labels: Vec<String> = ok.iter().map(|e| scalar(e)).collect();
        format!("    eras: [{}]\n", labels.join(", "))
    } else {
        String::new()
    }
}

pub(super) fn comment_block(lines: &[String]) -> String {
    lines.iter().map(|l| format!("  # {l}\n")).collect()
}

pub(super) fn tool(
    item: &Item,
    slug: &str,
    all: &[&str],
    eras: &[EraSeen],
    notes: &mut Vec<String>,
) -> String {
    let name = &item.id;
    let read_only = is_read_only(&item.def);
    let has_output = fields::output_schema(&item.def).is_some();
    let mut out = head(
        &format!("tool-{slug}"),
        &format!(
            "Tool `{name}`: listed with valid schemas{}",
            if read_only {
                "; read-only, so called with example arguments"
            } else {
                ""
            }
        ),
        "tools",
        &item.eras,
        all,
    );
    let inputs_valid = item
        .defs
        .iter()
        .all(|d| is_valid_schema(fields::input_schema(d)));
    let outputs_valid = item
        .defs
        .iter()
        .all(|d| is_valid_schema(fields::output_schema(d)));
    out.push_str(&format!(
        "  - name: {}\n    request: {{ method: tools/list, paginate: true }}\n    expect:\n",
        if has_output {
            "listed with valid input and output schemas"
        } else {
            "listed with a valid inputSchema"
        }
    ));
    out.push_str(&format!(
        "      - {{ path: {}, length: 1 }}\n",
        item_path(ListKind::Tools, name, "")
    ));
    if inputs_valid {
        out.push_str(&format!(
            "      - {{ path: {}, validSchema: true }}\n",
            item_path(ListKind::Tools, name, ".inputSchema")
        ));
    } else {
        out.push_str("      # not asserted: the inputSchema was not a valid JSON Schema 2020-12 when init looked\n");
    }
    if has_output && outputs_valid {
        out.push_str(&format!(
            "      - {{ path: {}, validSchema: true }}\n",
            item_path(ListKind::Tools, name, ".outputSchema")
        ));
    } else if has_output {
        out.push_str("      # not asserted: the outputSchema was not a valid JSON Schema 2020-12 when init looked\n");
    }
    if !read_only {
        out.push_str(&comment_block(&[
            "Not called: the tool is not marked readOnlyHint, and init never calls a tool that"
                .into(),
            "may change something. Add a tools/call step with arguments safe for this server."
                .into(),
        ]));
        return out;
    }
    let Some(arguments) = fields::input_schema(&item.def).and_then(argsgen::example) else {
        notes.push(format!(
            "tool `{name}`: no example arguments could be derived from its inputSchema; not called"
        ));
        out.push_str(&comment_block(&[
            "Not called: no example arguments could be derived from the inputSchema.".into(),
        ]));
        return out;
    };
    let seen = observations(eras, &item.eras, |e| &e.calls, name);
    let (results, ok, failed) = split(&seen);
    if !failed.is_empty() {
        notes.push(format!(
            "tool `{name}`: the call with example arguments failed ({}); {}",
            failed.join("; "),
            if ok.is_empty() {
                "no call step written"
            } else {
                "call step limited to the other eras"
            }
        ));
    }
    let mut comments = Vec::new();
    for f in &failed {
        comments.push(format!("With these arguments the call failed in {f}"));
    }
    if ok.is_empty() {
        comments.push(format!(
            "Example arguments tried: {}",
            serde_json::to_string(&arguments).unwrap_or_default()
        ));
        out.push_str(&comment_block(&comments));
        return out;
    }
    out.push_str(&comment_block(&comments));
    out.push_str("  - name: called with example arguments\n");
    out.push_str(&step_eras(&ok, &item.eras));
    out.push_str(&format!(
        "    request:\n      method: tools/call\n      params: {{ name: {}, arguments: {} }}\n",
        scalar(&literal(name)),
        flow(&arguments)
    ));
    out.push_str("    expect:\n      - isError: false\n");
    if has_output {
        let schema = fields::output_schema(&item.def)
            .cloned()
            .unwrap_or(Value::Null);
        let conforms = results
            .iter()
            .all(|r| fields::structured_content(r).is_some_and(|s| argsgen::accepts(&schema, s)));
        if conforms {
            out.push_str("      - outputSchema: conforms\n");
        } else {
            out.push_str("      # not asserted: structuredContent did not conform to the outputSchema when init looked\n");
            notes.push(format!(
                "tool `{name}`: structuredContent did not conform to its outputSchema; `outputSchema: conforms` not asserted"
            ));
        }
    } else {
        let types: BTreeSet<String> = results
            .iter()
            .flat_map(|r| {
                fields::content_blocks(r)
                    .iter()
                    .filter_map(|c| c.get("type").and_then(Value::as_str))
                    .map(str::to_string)
            })
            .collect();
        let nonempty = results
            .iter()
            .all(|r| !fields::content_blocks(r).is_empty());
        if nonempty {
            out.push_str("      - { path: \"$.content\", length: { gte: 1 } }\n");
        } else {
            out.push_str("      - { path: \"$.content\", type: array }\n");
        }
        if !types.is_empty() {
            let list: Vec<Value> = types.into_iter().map(Value::String).collect();
            out.push_str(&format!(
                "      - {{ path: \"$.content[*].type\", oneOf: {} }}\n",
                flow(&Value::Array(list))
            ));
        }
    }
    out
}

/// The `listed` step: the paginated list holds exactly one item whose `id_key` is `id`.
pub(super) fn listed_step(kind: ListKind, id: &str) -> String {
    format!(
        "  - name: listed\n    request: {{ method: {}, paginate: true }}\n    expect:\n      - {{ path: {}, length: 1 }}\n",
        kind.method(),
        item_path(kind, id, "")
    )
}

pub(super) fn prompt(
    item: &Item,
    slug: &str,
    all: &[&str],
    eras: &[EraSeen],
    notes: &mut Vec<String>,
) -> String {
    let name = &item.id;
    let mut out = head(
        &format!("prompt-{slug}"),
        &format!("Prompt `{name}`: listed, and gets messages with example arguments"),
        "prompts",
        &item.eras,
        all,
    );
    out.push_str(&listed_step(ListKind::Prompts, name));
    let seen = observations(eras, &item.eras, |e| &e.prompt_gets, name);
    let (results, ok, failed) = split(&seen);
    let comments: Vec<String> = failed
        .iter()
        .map(|f| format!("prompts/get with example arguments failed in {f}"))
        .collect();
    if !failed.is_empty() {
        notes.push(format!(
            "prompt `{name}`: prompts/get with example arguments failed ({})",
            failed.join("; ")
        ));
    }
    out.push_str(&comment_block(&comments));
    if ok.is_empty() {
        return out;
    }
    out.push_str("  - name: gets messages with example arguments\n");
    out.push_str(&step_eras(&ok, &item.eras));
    out.push_str(&format!(
        "    request: {{ method: prompts/get, params: {} }}\n    expect:\n",
        flow(&prompt_get_params(&item.def))
    ));
    let nonempty = results.iter().all(|r| {
        r.get("messages")
            .and_then(Value::as_array)
            .is_some_and(|m| !m.is_empty())
    });
    if nonempty {
        out.push_str("      - { path: \"$.messages\", length: { gte: 1 } }\n");
    } else {
        out.push_str("      - { path: \"$.messages\", type: array }\n");
    }
    let roles: BTreeSet<String> = results
        .iter()
        .flat_map(|r| {
            r.get("messages")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|m| m.get("role").and_then(Value::as_str))
                .map(str::to_string)
        })
        .collect();
    if !roles.is_empty() {
        let list: Vec<Value> = roles.into_iter().map(Value::String).collect();
        out.push_str(&format!(
            "      - {{ path: \"$.messages[*].role\", oneOf: {} }}\n",
            flow(&Value::Array(list))
        ));
    }
    out
}

pub(super) fn resource(
    item: &Item,
    slug: &str,
    all: &[&str],
    eras: &[EraSeen],
    notes: &mut Vec<String>,
) -> String {
    let uri = &item.id;
    let mut out = head(
        &format!("resource-{slug}"),
        &format!("Resource `{uri}`: listed and readable"),
        "resources",
        &item.eras,
        all,
    );
    out.push_str(&listed_step(ListKind::Resources, uri));
    let seen = observations(eras, &item.eras, |e| &e.reads, uri);
    let (results, ok, failed) = split(&seen);
    if !failed.is_empty() {
        notes.push(format!(
            "resource `{uri}`: resources/read failed ({})",
            failed.join("; ")
        ));
    }
    let comments: Vec<String> = failed
        .iter()
        .map(|f| format!("resources/read failed in {f}"))
        .collect();
    out.push_str(&comment_block(&comments));
    // The first content's uri, if every era answered with the same one.
    let first_uris: BTreeSet<Option<&str>> = results
        .iter()
        .map(|r| r.pointer("/contents/0/uri").and_then(Value::as_str))
        .collect();
    let Some(Some(content_uri)) = first_uris.iter().next().filter(|_| first_uris.len() == 1) else {
        if !ok.is_empty() {
            out.push_str(&comment_block(&[
                "Not read: the contents did not carry one stable uri when init looked.".into(),
            ]));
        }
        return out;
    };
    out.push_str("  - name: read\n");
    out.push_str(&step_eras(&ok, &item.eras));
    out.push_str(&format!(
        "    request: {{ method: resources/read, params: {{ uri: {} }} }}\n    expect:\n",
        scalar(&literal(uri))
    ));
    out.push_str(&format!(
        "      - {{ path: \"$.contents[0].uri\", equals: {} }}\n",
        scalar(&literal(content_uri))
    ));
    for field in ["text", "blob"] {
        if results.iter().all(|r| {
            r.pointer(&format!("/contents/0/{field}"))
                .is_some_and(Value::is_string)
        }) {
            out.push_str(&format!(
                "      - {{ path: \"$.contents[0].{field}\", type: string }}\n"
            ));
        }
    }
    out
}

pub(super) fn template(item: &Item, slug: &str, all: &[&str]) -> String {
    let uri_template = &item.id;
    let mut out = head(
        &format!("template-{slug}"),
        &format!("Resource template `{uri_template}`: listed"),
        "resource-templates",
        &item.eras,
        all,
    );
    out.push_str(&listed_step(ListKind::ResourceTemplates, uri_template));
    out
}
