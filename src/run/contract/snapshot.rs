//! Taking a contract snapshot from a live server, and storing/loading it.
//!
//! Files (pretty, key-sorted JSON so a review diff reads well): `tools.json`,
//! `resources.json`, `resource-templates.json`, `prompts.json`, `server.json`, and a
//! small `snapshot.json` describing where it came from.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::ground::json::sort_keys;
use crate::protocol::era::EraKind;
use crate::protocol::{ListKind, fields};
use crate::run::client::Connection;

/// The compared fields of a tool (the reference's contract table).
const TOOL_FIELDS: &[&str] = &[
    "name",
    "title",
    "description",
    fields::INPUT_SCHEMA,
    fields::OUTPUT_SCHEMA,
    "annotations",
    // `taskSupport` (2025-11-25): whether a plain call or a task-augmented one works.
    "execution",
];

/// How many full traversals may disagree before a list is declared unstable.
const MAX_TRAVERSALS: usize = 4;

/// A normalized contract.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub tools: Vec<Value>,
    pub resources: Vec<Value>,
    pub resource_templates: Vec<Value>,
    pub prompts: Vec<Value>,
    /// `supportedVersions`, `capabilities`, `instructions`.
    pub server: Value,
    /// Provenance: server name/version, era, revision, profile, mcpspec version, time.
    pub meta: Value,
}

impl Snapshot {
    pub fn list(&self, kind: ListKind) -> &[Value] {
        match kind {
            ListKind::Tools => &self.tools,
            ListKind::Resources => &self.resources,
            ListKind::ResourceTemplates => &self.resource_templates,
            ListKind::Prompts => &self.prompts,
        }
    }

    /// The server as `name version` (either alone when the other is unknown): what a
    /// snapshot was taken of.
    pub fn server_label(&self, fallback: &str) -> String {
        let version = self.meta.pointer("/server/version").and_then(Value::as_str);
        let name = self.meta.pointer("/server/name").and_then(Value::as_str);
        match (name, version) {
            (Some(n), Some(v)) => format!("{n} {v}"),
            (Some(one), None) | (None, Some(one)) => one.to_string(),
            (None, None) => fallback.to_string(),
        }
    }

    /// A label for reports: the server's version, else its name, else the folder.
    pub fn label(&self, fallback: &str) -> String {
        let version = self.meta.pointer("/server/version").and_then(Value::as_str);
        let name = self.meta.pointer("/server/name").and_then(Value::as_str);
        match (name, version) {
            (_, Some(v)) => v.to_string(),
            (Some(n), None) => n.to_string(),
            _ => fallback.to_string(),
        }
    }

    /// Mask known secrets and secret-shaped values in every string of the snapshot.
    pub fn redact(&mut self, redactor: &crate::ground::redact::Redactor) {
        for value in self.values_mut() {
            redactor.redact_json(value);
        }
    }

    /// How many masks the snapshot holds (to say that something was redacted).
    pub fn masks(&self) -> usize {
        self.files()
            .iter()
            .map(|(_, text)| crate::ground::redact::count_masks(text))
            .sum()
    }

    fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.tools
            .iter_mut()
            .chain(self.resources.iter_mut())
            .chain(self.resource_templates.iter_mut())
            .chain(self.prompts.iter_mut())
            .chain([&mut self.server, &mut self.meta])
    }

    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for (file, text) in self.files() {
            std::fs::write(dir.join(file), text)?;
        }
        Ok(())
    }

    /// The snapshot's files and their contents, in a fixed order (`mcpspec init` lays them
    /// out with the rest of a project before writing anything).
    pub fn files(&self) -> Vec<(&'static str, String)> {
        let mut out: Vec<(&'static str, String)> = ListKind::ALL
            .into_iter()
            .map(|kind| {
                let items = Value::Array(self.list(kind).to_vec());
                (kind.snapshot_file(), json_text(&items))
            })
            .collect();
        out.push(("server.json", json_text(&self.server)));
        out.push(("snapshot.json", json_text(&self.meta)));
        out
    }

    /// Load a snapshot folder; errors name the file and what is wrong.
    pub fn read(dir: &Path) -> Result<Snapshot, String> {
        if !dir.is_dir() {
            return Err(format!(
                "{}: not a snapshot folder (it does not exist or is not a folder)",
                dir.display()
            ));
        }
        let read = |file: &str| -> Result<Value, String> {
            let path = dir.join(file);
            let text = crate::ground::source::read_text(&path)
                .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
            serde_json::from_str(&text)
                .map_err(|e| format!("{}: not valid JSON: {e}", path.display()))
        };
        let list = |file: &str| -> Result<Vec<Value>, String> {
            match read(file)? {
                Value::Array(items) => {
                    if let Some(bad) = items.iter().position(|i| !i.is_object()) {
                        return Err(format!(
                            "{}: item {bad} is not an object",
                            dir.join(file).display()
                        ));
                    }
                    Ok(items)
                }
                _ => Err(format!(
                    "{}: expected a JSON array",
                    dir.join(file).display()
                )),
            }
        };
        let server = read("server.json")?;
        if !server.is_object() {
            return Err(format!(
                "{}: expected a JSON object",
                dir.join("server.json").display()
            ));
        }
        Ok(Snapshot {
            tools: list(ListKind::Tools.snapshot_file())?,
            resources: list(ListKind::Resources.snapshot_file())?,
            resource_templates: list(ListKind::ResourceTemplates.snapshot_file())?,
            prompts: list(ListKind::Prompts.snapshot_file())?,
            server,
            meta: read("snapshot.json").unwrap_or(Value::Null),
        })
    }
}

fn json_text(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("JSON serializes");
    text.push('\n');
    text
}

/// Take a snapshot over an open connection.
pub async fn take_snapshot(
    conn: &mut Connection,
    profile: Option<&str>,
) -> Result<Snapshot, String> {
    let caps = conn.negotiated.capabilities.clone();
    let mut lists = Vec::with_capacity(ListKind::ALL.len());
    for kind in ListKind::ALL {
        let declared = caps.get(kind.capability()).is_some_and(|v| !v.is_null());
        lists.push(if declared {
            stable_list(conn, kind.method(), kind.result_key()).await?
        } else {
            Vec::new()
        });
    }
    let [tools, resources, resource_templates, prompts]: [Vec<Value>; 4] =
        lists.try_into().expect("one list per kind");
    let n = &conn.negotiated;
    let mut server = Map::new();
    match n.kind {
        EraKind::Modern => {
            let mut versions = n.supported_versions.clone();
            versions.sort();
            server.insert(fields::SUPPORTED_VERSIONS.into(), json!(versions));
        }
        EraKind::Legacy => {
            server.insert("protocolVersion".into(), json!(n.revision));
        }
    }
    server.insert("capabilities".into(), sort_keys(caps));
    if let Some(instructions) = &n.instructions {
        server.insert("instructions".into(), json!(instructions));
    }
    let server_info = n.server_info.clone().unwrap_or(Value::Null);
    let meta = json!({
        "server": {
            "name": server_info.get("name").cloned().unwrap_or(Value::Null),
            "version": server_info.get("version").cloned().unwrap_or(Value::Null),
        },
        "era": n.kind.as_str(),
        "eraRequested": n.requested,
        "revision": n.revision,
        "profile": profile,
        "clientCapabilities": {},
        "mcpspecVersion": env!("CARGO_PKG_VERSION"),
        "takenAt": taken_at(),
    });
    let mut snapshot = Snapshot {
        tools: normalize(tools, ListKind::Tools.item_id(), TOOL_FIELDS),
        resources: normalize(
            resources,
            ListKind::Resources.item_id(),
            &["uri", "name", "title", "description", "mimeType"],
        ),
        resource_templates: normalize(
            resource_templates,
            ListKind::ResourceTemplates.item_id(),
            &["uriTemplate", "name", "title", "description", "mimeType"],
        ),
        prompts: normalize_prompts(prompts),
        server: sort_keys(Value::Object(server)),
        meta: sort_keys(meta),
    };
    // Snapshot files are committed: a token the server echoes (in a description, in its
    // instructions) is masked like in reports. Live snapshots compared with a stored one
    // are masked the same way, so the masks compare equal.
    snapshot.redact(&crate::ground::redact::known());
    Ok(snapshot)
}

/// Time of the snapshot; `SOURCE_DATE_EPOCH` makes it reproducible.
fn taken_at() -> String {
    let time = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .and_then(|secs| chrono::DateTime::from_timestamp(secs, 0))
        .unwrap_or_else(chrono::Utc::now);
    time.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Pages carry no consistency guarantee: traverse from the start until two full
/// traversals agree.
async fn stable_list(conn: &mut Connection, method: &str, key: &str) -> Result<Vec<Value>, String> {
    let mut previous = conn
        .list_all(method, key)
        .await
        .map_err(|e| format!("{method}: {e}"))?;
    for _ in 1..MAX_TRAVERSALS {
        let current = conn
            .list_all(method, key)
            .await
            .map_err(|e| format!("{method}: {e}"))?;
        if same_items(&previous, &current) {
            return Ok(current);
        }
        previous = current;
    }
    Err(format!(
        "{method}: {MAX_TRAVERSALS} full traversals all disagreed; the list never stabilized"
    ))
}

/// Same set of items whatever the page order.
fn same_items(a: &[Value], b: &[Value]) -> bool {
    let key = |v: &Value| sort_keys(v.clone()).to_string();
    let mut x: Vec<String> = a.iter().map(key).collect();
    let mut y: Vec<String> = b.iter().map(key).collect();
    x.sort();
    y.sort();
    x == y
}

/// Keep only the compared fields, sort keys, sort the list by its stable key.
fn normalize(items: Vec<Value>, key: &str, fields: &[&str]) -> Vec<Value> {
    let mut out: Vec<Value> = items
        .into_iter()
        .map(|item| {
            let mut kept = Map::new();
            for f in fields {
                if let Some(v) = item.get(*f).filter(|v| !v.is_null()) {
                    kept.insert(f.to_string(), v.clone());
                }
            }
            sort_keys(Value::Object(kept))
        })
        .collect();
    out.sort_by_key(|a| sort_key(a, key));
    out
}

fn normalize_prompts(items: Vec<Value>) -> Vec<Value> {
    let mut prompts = normalize(
        items,
        "name",
        &["name", "title", "description", "arguments"],
    );
    for p in &mut prompts {
        if let Some(Value::Array(args)) = p.get_mut("arguments") {
            for a in args.iter_mut() {
                let mut kept = Map::new();
                for f in ["name", "title", "description", "required"] {
                    if let Some(v) = a.get(f).filter(|v| !v.is_null()) {
                        kept.insert(f.into(), v.clone());
                    }
                }
                *a = sort_keys(Value::Object(kept));
            }
            args.sort_by_key(|a| sort_key(a, "name"));
        }
    }
    prompts
}

fn sort_key(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_drops_delivery_fields_and_sorts() {
        let tools = vec![
            json!({"name": "b", "inputSchema": {"type": "object"}, "_meta": {"x": 1}, "icons": []}),
            json!({"name": "a", "description": "A", "inputSchema": {"type": "object", "properties": {"z": {}, "y": {}}}}),
        ];
        let n = normalize(tools, "name", TOOL_FIELDS);
        assert_eq!(n[0]["name"], "a");
        assert!(n[1].get("_meta").is_none() && n[1].get("icons").is_none());
        let keys: Vec<&String> = n[0]["inputSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(keys, ["y", "z"]);
    }

    #[test]
    fn items_compare_as_sets() {
        assert!(same_items(
            &[json!({"a": 1}), json!({"b": 2})],
            &[json!({"b": 2}), json!({"a": 1})]
        ));
        assert!(!same_items(&[json!({"a": 1})], &[json!({"a": 2})]));
    }
}
