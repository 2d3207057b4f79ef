//! The starter project's files as text: `mcpspec.yaml`, the pack (one scenario per tool,
//! prompt, resource and resource template, plus `contract.yaml`), and the baseline
//! snapshots. Expectations are only those that held when init looked, so the project
//! passes against the server it was generated from and fails when that server changes.

mod scenarios;

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::probe::EraSeen;
use super::yaml::unique_slugs;
use crate::ground::yaml::write::{quoted, scalar};
use crate::protocol::ListKind;

use scenarios::{prompt, resource, template, tool};

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
    /// The OAuth sign-in (`auth:`), its secret named, never written.
    pub auth: Option<AuthConfig>,
    pub timeout: Option<String>,
    /// `--sandbox` was given (a stdio target: `sandbox: true`; without it the setting is
    /// written commented out, to be turned on).
    pub sandbox: bool,
    /// One comment line each: what was left out and why (secrets).
    pub omitted: Vec<String>,
}

/// A target's `auth:` block (`client_credentials`): where the secret is read, not the secret.
pub struct AuthConfig {
    pub client_id: String,
    /// `clientSecretEnv`, else `clientSecretFile`.
    pub secret: AuthSecret,
    pub scope: Option<String>,
}

pub enum AuthSecret {
    Env(String),
    File(String),
}

impl AuthConfig {
    /// The block, indented for a target of `mcpspec.yaml`.
    pub fn yaml(&self) -> String {
        let mut out = format!(
            "    auth:\n      grant: client_credentials\n      clientId: {}\n",
            quoted(&self.client_id)
        );
        match &self.secret {
            AuthSecret::Env(var) => out.push_str(&format!(
                "      clientSecretEnv: {}   # the client secret is read from this variable at run time\n",
                scalar(var)
            )),
            AuthSecret::File(path) => out.push_str(&format!(
                "      clientSecretFile: {}   # the client secret is read from this file at run time\n",
                quoted(path)
            )),
        }
        if let Some(scope) = &self.scope {
            out.push_str(&format!("      scope: {}\n", quoted(scope)));
        }
        out
    }
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
        let slugs = unique_slugs(items.iter().map(|i| slug_source(kind, &i.def)));
        for (item, slug) in items.iter().zip(slugs) {
            let path = Path::new(PACK_DIR)
                .join(kind.snapshot_name())
                .join(format!("{slug}.yaml"));
            let text = match kind {
                ListKind::Tools => tool(item, &slug, &all, eras, &mut notes),
                ListKind::Prompts => prompt(item, &slug, &all, eras, &mut notes),
                ListKind::Resources => resource(item, &slug, &all, eras, &mut notes),
                ListKind::ResourceTemplates => template(item, &slug, &all),
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

pub(super) fn scenario_schema_name() -> &'static str {
    "scenario.schema.json"
}

/// `# yaml-language-server: $schema=…` relative to the file at `path`.
pub(super) fn modeline(path: &Path, schema: &str) -> String {
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
    if t.stdio.is_some() {
        out.push_str(if t.sandbox {
            "    sandbox: true   # as --sandbox: the server has no route out of the machine and a private HOME\n"
        } else {
            "    # sandbox: true   # as --sandbox (Linux): no route out of the machine, a private HOME\n"
        });
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
    if let Some(auth) = &t.auth {
        out.push_str(&auth.yaml());
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

/// What the file name of an item is made of: its name when it has one, else its identity.
pub(super) fn slug_source(kind: ListKind, def: &Value) -> &str {
    ["name", kind.item_id()]
        .iter()
        .find_map(|k| def.get(*k).and_then(Value::as_str))
        .unwrap_or("item")
}

/// The lists whose items become scenarios (each in the folder named like its snapshot
/// list), in the order `init` writes them.
const KINDS: [ListKind; 4] = [
    ListKind::Tools,
    ListKind::Prompts,
    ListKind::Resources,
    ListKind::ResourceTemplates,
];

/// One item across eras: its identity, its definition (from the first era that lists
/// it) and the eras whose lists hold it.
pub(super) struct Item {
    id: String,
    def: Value,
    eras: Vec<String>,
    /// Its definition in each era that lists it (same order as `eras`).
    defs: Vec<Value>,
}

pub(super) fn merged(eras: &[EraSeen], kind: ListKind) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    for era in eras {
        for def in era.snapshot.list(kind) {
            let Some(id) = kind.id_of(def) else {
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
    use crate::face::app::init::probe::ProbedAnswer;
    use crate::run::contract::Snapshot;
    use serde_json::json;

    fn era(label: &str, tools: Vec<Value>, calls: Vec<(String, ProbedAnswer)>) -> EraSeen {
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
                    ProbedAnswer::Failed("isError: true (nope)".into()),
                )],
            ),
            era(
                "2026-07-28",
                vec![look, odd],
                vec![
                    ("look".into(), ProbedAnswer::Result(text_result.clone())),
                    ("new it's {{x}}".into(), ProbedAnswer::Result(text_result)),
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
            auth: None,
            timeout: None,
            sandbox: false,
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
            odd.contains(r#""$.tools[?@.name == {% raw %}'new it\\'s {{x}}'{% endraw %}]""#),
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
        let loaded = crate::language::dsl::load::load_paths(&[dir.path().join(PACK_DIR)])
            .unwrap_or_else(|e| panic!("{}", e.render()));
        assert_eq!(loaded.len(), 3);
    }
}
