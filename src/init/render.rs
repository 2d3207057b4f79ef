//! The starter project's files as text: `mcpspec.yaml`, the pack (one scenario per tool,
//! prompt, resource and resource template, plus `contract.yaml`), and the baseline
//! snapshots. Expectations are only those that held when init looked, so the project
//! passes against the server it was generated from and fails when that server changes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::probe::{EraSeen, Observed, is_read_only, prompt_get_params};
use super::yaml::{flow, jsonpath_string, literal, quoted, scalar, unique_slugs};
use crate::argsgen;

/// The pack folder, relative to the project folder.
pub const PACK_DIR: &str = "tests/mcp";
/// Where the JSON Schemas of the `$schema` modelines are written.
pub const SCHEMA_DIR: &str = ".mcpspec/schema";
/// The name of the target written to `mcpspec.yaml`.
pub const TARGET_NAME: &str = "default";

/// One file of the project: path relative to the project folder, contents.
pub struct File {
    pub path: PathBuf,
    pub text: String,
}

/// The target as `mcpspec.yaml` will hold it (secrets already left out).
pub struct TargetConfig {
    pub stdio: Option<String>,
    pub url: Option<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<String>,
    pub headers: Vec<(String, String)>,
    pub bearer_env: Option<String>,
    pub timeout: Option<String>,
    /// One comment line each: what was left out and why (secrets).
    pub omitted: Vec<String>,
}

/// The JSON Schemas the generated files point their editors at.
pub struct Schemas {
    pub scenario: String,
    pub pack: String,
    pub config: String,
}

/// The whole project. `notes` tell the user what was not generated and why.
pub fn project(
    eras: &[EraSeen],
    target: &TargetConfig,
    schemas: &Schemas,
) -> (Vec<File>, Vec<String>) {
    let mut files = Vec::new();
    let mut notes = Vec::new();
    let server = server_label(eras);
    for (name, text) in [
        ("scenario.schema.json", &schemas.scenario),
        ("pack.schema.json", &schemas.pack),
        ("config.schema.json", &schemas.config),
    ] {
        files.push(File {
            path: Path::new(SCHEMA_DIR).join(name),
            text: format!("{text}\n"),
        });
    }
    files.push(File {
        path: "mcpspec.yaml".into(),
        text: config(eras, target, &server),
    });
    let manifest = Path::new(PACK_DIR).join("pack.yaml");
    files.push(File {
        text: format!(
            "{}{}",
            modeline(&manifest, "pack.schema.json"),
            pack_manifest(eras, &server)
        ),
        path: manifest,
    });
    let all: Vec<&str> = eras.iter().map(|e| e.label.as_str()).collect();
    for kind in KINDS {
        let items = merged(eras, kind);
        let slugs = unique_slugs(items.iter().map(|i| kind.slug_source(&i.def)));
        for (item, slug) in items.iter().zip(slugs) {
            let path = Path::new(PACK_DIR)
                .join(kind.folder)
                .join(format!("{slug}.yaml"));
            let text = match kind.list_key {
                "tools" => tool(item, &slug, &all, eras, &mut notes),
                "prompts" => prompt(item, &slug, &all, eras, &mut notes),
                "resources" => resource(item, &slug, &all, eras, &mut notes),
                _ => template(item, &slug, &all),
            };
            files.push(File {
                path: path.clone(),
                text: format!("{}{text}", modeline(&path, scenario_schema_name())),
            });
        }
    }
    let contract = Path::new(PACK_DIR).join("contract.yaml");
    files.push(File {
        text: format!(
            "{}{}",
            modeline(&contract, scenario_schema_name()),
            contract_scenario(eras)
        ),
        path: contract,
    });
    for era in eras {
        let dir = Path::new(PACK_DIR).join("contract").join(&era.label);
        for (name, text) in era.snapshot.files() {
            files.push(File {
                path: dir.join(name),
                text,
            });
        }
    }
    (files, notes)
}

fn scenario_schema_name() -> &'static str {
    "scenario.schema.json"
}

/// `# yaml-language-server: $schema=…` relative to the file at `path`.
fn modeline(path: &Path, schema: &str) -> String {
    let depth = path.components().count().saturating_sub(1);
    format!(
        "# yaml-language-server: $schema={}{SCHEMA_DIR}/{schema}\n",
        "../".repeat(depth)
    )
}

/// `name version` of the server, from the first era's snapshot.
pub fn server_label(eras: &[EraSeen]) -> String {
    let meta = &eras[0].snapshot.meta;
    let name = meta.pointer("/server/name").and_then(Value::as_str);
    let version = meta.pointer("/server/version").and_then(Value::as_str);
    match (name, version) {
        (Some(n), Some(v)) => format!("{n} {v}"),
        (Some(n), None) => n.to_string(),
        _ => "the server".to_string(),
    }
}

fn config(eras: &[EraSeen], t: &TargetConfig, server: &str) -> String {
    let mut out = modeline(Path::new("mcpspec.yaml"), "config.schema.json");
    out.push_str(&format!(
        "# mcpspec project, written by `mcpspec init` from {server}.\n\
         # `mcpspec run` in this folder runs the pack below against the target in every era.\n"
    ));
    out.push_str(&format!("targets:\n  {TARGET_NAME}:\n"));
    if let Some(cmd) = &t.stdio {
        out.push_str(&format!("    stdio: {}\n", quoted(cmd)));
    }
    if let Some(url) = &t.url {
        out.push_str(&format!("    url: {}\n", quoted(url)));
    }
    let map = |entries: &[(String, String)]| {
        let parts: Vec<String> = entries
            .iter()
            .map(|(k, v)| format!("{}: {}", scalar(k), quoted(v)))
            .collect();
        format!("{{ {} }}", parts.join(", "))
    };
    if !t.env.is_empty() {
        out.push_str(&format!("    env: {}\n", map(&t.env)));
    }
    if let Some(cwd) = &t.cwd {
        out.push_str(&format!("    cwd: {}\n", quoted(cwd)));
    }
    if !t.headers.is_empty() {
        out.push_str(&format!("    headers: {}\n", map(&t.headers)));
    }
    if let Some(var) = &t.bearer_env {
        out.push_str(&format!(
            "    bearerEnv: {}   # the token is read from this variable at run time\n",
            scalar(var)
        ));
    }
    for line in &t.omitted {
        out.push_str(&format!("    # {line}\n"));
    }
    out.push_str(&format!("defaultTarget: {TARGET_NAME}\n"));
    let labels: Vec<String> = eras.iter().map(|e| scalar(&e.label)).collect();
    out.push_str(&format!("eras: [{}]\n", labels.join(", ")));
    out.push_str(&format!("paths: [{PACK_DIR}]\n"));
    if let Some(timeout) = &t.timeout {
        out.push_str(&format!("timeout: {}\n", scalar(timeout)));
    }
    out.push_str("junit: reports/junit.xml\njson: reports/results.json\n");
    out.push_str(
        "# Known failures to tolerate (`mcpspec run --write-baseline FILE` writes one):\n\
         # expectedFailures: expected-failures.yaml\n",
    );
    out
}

fn pack_manifest(eras: &[EraSeen], server: &str) -> String {
    let name = eras[0]
        .snapshot
        .meta
        .pointer("/server/name")
        .and_then(Value::as_str)
        .map(super::yaml::slug)
        .unwrap_or_else(|| "server".into());
    format!(
        "# The pack's manifest. Its scenarios are the YAML files in this folder.\n\
         name: {}\n\
         version: 0.1.0\n\
         description: {}\n",
        scalar(&format!("{name}-tests")),
        quoted(&format!(
            "Starter tests of {server}, written by mcpspec init: every tool, prompt, resource \
             and resource template, and the contract baseline"
        ))
    )
}

/// One list of the snapshot and how its items become scenarios.
struct Kind {
    list_key: &'static str,
    folder: &'static str,
    /// The item's identity in its list (`name`, `uri`, `uriTemplate`).
    id_key: &'static str,
}

impl Kind {
    /// What the file name is made of: the name when there is one, else the identity.
    fn slug_source<'a>(&self, def: &'a Value) -> &'a str {
        ["name", self.id_key]
            .iter()
            .find_map(|k| def.get(*k).and_then(Value::as_str))
            .unwrap_or("item")
    }
}

const KINDS: &[Kind] = &[
    Kind {
        list_key: "tools",
        folder: "tools",
        id_key: "name",
    },
    Kind {
        list_key: "prompts",
        folder: "prompts",
        id_key: "name",
    },
    Kind {
        list_key: "resources",
        folder: "resources",
        id_key: "uri",
    },
    Kind {
        list_key: "resource-templates",
        folder: "resource-templates",
        id_key: "uriTemplate",
    },
];

/// One item across eras: its identity, its definition (from the first era that lists
/// it) and the eras whose lists hold it.
struct Item {
    id: String,
    def: Value,
    eras: Vec<String>,
    /// Its definition in each era that lists it (same order as `eras`).
    defs: Vec<Value>,
}

fn merged(eras: &[EraSeen], kind: &Kind) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    for era in eras {
        for def in era.snapshot.list(kind.list_key) {
            let Some(id) = def.get(kind.id_key).and_then(Value::as_str) else {
                continue;
            };
            match items.iter_mut().find(|i| i.id == id) {
                Some(item) => {
                    item.eras.push(era.label.clone());
                    item.defs.push(def.clone());
                }
                None => items.push(Item {
                    id: id.to_string(),
                    def: def.clone(),
                    eras: vec![era.label.clone()],
                    defs: vec![def.clone()],
                }),
            }
        }
    }
    items.sort_by(|a, b| a.id.cmp(&b.id));
    items
}

/// The scenario's head: id, description, tags, and `eras` when the item is not in every era.
fn head(id: &str, description: &str, tag: &str, item_eras: &[String], all: &[&str]) -> String {
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
fn item_path(list: &str, key: &str, id: &str, tail: &str) -> String {
    quoted(&format!(
        "$.{list}[?@.{key} == {}]{tail}",
        jsonpath_string(id)
    ))
}

fn is_valid_schema(v: Option<&Value>) -> bool {
    v.is_some_and(|s| s.is_object() && jsonschema::meta::validate(s).is_ok())
}

/// The observation of `id` in each era of `item_eras`.
fn observations<'a>(
    eras: &'a [EraSeen],
    item_eras: &[String],
    pick: impl Fn(&'a EraSeen) -> &'a [(String, Observed)],
    id: &str,
) -> Vec<(&'a str, Option<&'a Observed>)> {
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
fn split<'a>(
    seen: &[(&'a str, Option<&'a Observed>)],
) -> (Vec<&'a Value>, Vec<&'a str>, Vec<String>) {
    let mut results = Vec::new();
    let mut ok_eras = Vec::new();
    let mut failed = Vec::new();
    for (era, o) in seen {
        match o {
            Some(Observed::Result(v)) => {
                results.push(v);
                ok_eras.push(*era);
            }
            Some(Observed::Failed(why)) => failed.push(format!("{era}: {why}")),
            None => {}
        }
    }
    (results, ok_eras, failed)
}

/// `    eras: [...]` when a step holds in only some of the item's eras.
fn step_eras(ok: &[&str], item_eras: &[String]) -> String {
    if ok.len() < item_eras.len() {
        let labels: Vec<String> = ok.iter().map(|e| scalar(e)).collect();
        format!("    eras: [{}]\n", labels.join(", "))
    } else {
        String::new()
    }
}

fn comment_block(lines: &[String]) -> String {
    lines.iter().map(|l| format!("  # {l}\n")).collect()
}

fn tool(
    item: &Item,
    slug: &str,
    all: &[&str],
    eras: &[EraSeen],
    notes: &mut Vec<String>,
) -> String {
    let name = &item.id;
    let read_only = is_read_only(&item.def);
    let has_output = item.def.get("outputSchema").is_some();
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
        .all(|d| is_valid_schema(d.get("inputSchema")));
    let outputs_valid = item
        .defs
        .iter()
        .all(|d| is_valid_schema(d.get("outputSchema")));
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
        item_path("tools", "name", name, "")
    ));
    if inputs_valid {
        out.push_str(&format!(
            "      - {{ path: {}, validSchema: true }}\n",
            item_path("tools", "name", name, ".inputSchema")
        ));
    } else {
        out.push_str("      # not asserted: the inputSchema was not a valid JSON Schema 2020-12 when init looked\n");
    }
    if has_output && outputs_valid {
        out.push_str(&format!(
            "      - {{ path: {}, validSchema: true }}\n",
            item_path("tools", "name", name, ".outputSchema")
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
    let Some(arguments) = item.def.get("inputSchema").and_then(argsgen::example) else {
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
        let schema = item.def.get("outputSchema").cloned().unwrap_or(Value::Null);
        let conforms = results.iter().all(|r| {
            r.get("structuredContent")
                .is_some_and(|s| argsgen::accepts(&schema, s))
        });
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
                r.get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c.get("type").and_then(Value::as_str))
                    .map(str::to_string)
            })
            .collect();
        let nonempty = results.iter().all(|r| {
            r.get("content")
                .and_then(Value::as_array)
                .is_some_and(|c| !c.is_empty())
        });
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
fn listed_step(method: &str, list_key: &str, id_key: &str, id: &str) -> String {
    format!(
        "  - name: listed\n    request: {{ method: {method}, paginate: true }}\n    expect:\n      - {{ path: {}, length: 1 }}\n",
        item_path(list_key, id_key, id, "")
    )
}

fn prompt(
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
    out.push_str(&listed_step("prompts/list", "prompts", "name", name));
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

fn resource(
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
    out.push_str(&listed_step("resources/list", "resources", "uri", uri));
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

fn template(item: &Item, slug: &str, all: &[&str]) -> String {
    let uri_template = &item.id;
    let mut out = head(
        &format!("template-{slug}"),
        &format!("Resource template `{uri_template}`: listed"),
        "resource-templates",
        &item.eras,
        all,
    );
    out.push_str(&listed_step(
        "resources/templates/list",
        "resourceTemplates",
        "uriTemplate",
        uri_template,
    ));
    out
}

fn contract_scenario(eras: &[EraSeen]) -> String {
    let mut out = String::from(
        "scenario: contract\n\
         description: \"The contract (tools, prompts, resources, templates, capabilities) has no breaking change since the baseline\"\n\
         tags: [contract]\n\
         # Baselines: contract/<era>/, taken by `mcpspec init` (refresh one with\n\
         # `mcpspec snapshot <target> --era ERA --out contract/ERA`). Accept changes with a rules\n\
         # file: `contract: { baseline: ..., rules: rules.yaml }` (see mcpspec's book, docs/src/contracts.md).\n\
         steps:\n",
    );
    for era in eras {
        out.push_str(&format!(
            "  - name: {}\n    eras: [{}]\n    contract: {{ baseline: {} }}\n",
            quoted(&format!("no breaking change ({})", era.label)),
            scalar(&era.label),
            scalar(&format!("contract/{}", era.label))
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Snapshot;
    use serde_json::json;

    fn era(label: &str, tools: Vec<Value>, calls: Vec<(String, Observed)>) -> EraSeen {
        EraSeen {
            label: label.into(),
            described: label.into(),
            snapshot: Snapshot {
                tools,
                resources: Vec::new(),
                resource_templates: Vec::new(),
                prompts: Vec::new(),
                server: json!({}),
                meta: json!({"server": {"name": "srv", "version": "1"}}),
            },
            calls,
            prompt_gets: Vec::new(),
            reads: Vec::new(),
        }
    }

    /// An item listed in one era only and a call that failed in one era get `eras:`
    /// restrictions and comments; odd names are escaped; the project loads.
    #[test]
    fn per_era_items_and_calls() {
        let look = json!({"name": "look", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}});
        let odd = json!({"name": "new it's {{x}}", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}});
        let text_result = json!({"content": [{"type": "text", "text": "x"}]});
        let eras = [
            era(
                "legacy",
                vec![look.clone()],
                vec![(
                    "look".into(),
                    Observed::Failed("isError: true (nope)".into()),
                )],
            ),
            era(
                "2026-07-28",
                vec![look, odd],
                vec![
                    ("look".into(), Observed::Result(text_result.clone())),
                    ("new it's {{x}}".into(), Observed::Result(text_result)),
                ],
            ),
        ];
        let target = TargetConfig {
            stdio: Some("srv".into()),
            url: None,
            env: Vec::new(),
            cwd: None,
            headers: Vec::new(),
            bearer_env: None,
            timeout: None,
            omitted: Vec::new(),
        };
        let schemas = Schemas {
            scenario: "{}".into(),
            pack: "{}".into(),
            config: "{}".into(),
        };
        let (files, notes) = project(&eras, &target, &schemas);
        let text = |p: &str| {
            files
                .iter()
                .find(|f| f.path == Path::new(p))
                .unwrap_or_else(|| panic!("no {p}"))
                .text
                .clone()
        };
        let look = text("tests/mcp/tools/look.yaml");
        assert!(look.contains("    eras: [2026-07-28]\n"), "{look}");
        assert!(
            look.contains("# With these arguments the call failed in legacy: isError: true (nope)"),
            "{look}"
        );
        assert!(notes.iter().any(|n| n.contains("`look`")), "{notes:?}");
        let odd = text("tests/mcp/tools/new-it-s-x.yaml");
        assert!(odd.contains("eras: [2026-07-28]   #"), "{odd}");
        assert!(
            odd.contains(r#""$.tools[?@.name == 'new it\\'s {{x}}']""#),
            "{odd}"
        );
        assert!(
            odd.contains(r#"name: "{% raw %}new it's {{x}}{% endraw %}""#),
            "{odd}"
        );
        let dir = tempfile::tempdir().unwrap();
        for f in &files {
            let path = dir.path().join(&f.path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, &f.text).unwrap();
        }
        let loaded = crate::dsl::load::load_paths(&[dir.path().join(PACK_DIR)])
            .unwrap_or_else(|e| panic!("{}", e.render()));
        assert_eq!(loaded.len(), 3);
    }
}
