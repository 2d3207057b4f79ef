//! Changes of the server entry: protocol versions, capabilities, extensions, instructions.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::Builder;
use crate::language::contract_rules::change_kind::ChangeKind;
use crate::protocol::fields::{self, SUPPORTED_VERSIONS};
use crate::run::contract::schema_diff::{Breaks, Models};

pub(super) fn server(b: &mut Builder, before: &Value, after: &Value) {
    let list = "server";
    let versions = |v: &Value| -> BTreeSet<String> {
        fields::supported_versions(v)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (x, y) = (versions(before), versions(after));
    if before.get(SUPPORTED_VERSIONS).is_some() && after.get(SUPPORTED_VERSIONS).is_some() {
        for v in x.difference(&y) {
            b.push(
                list,
                v,
                ChangeKind::ProtocolVersionDropped,
                Some(SUPPORTED_VERSIONS.into()),
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
                Some(SUPPORTED_VERSIONS.into()),
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
pub(super) fn capabilities(
    b: &mut Builder,
    path: &str,
    x: &Map<String, Value>,
    y: &Map<String, Value>,
) {
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
pub(super) fn cap_name(path: &str) -> String {
    let rest = path.strip_prefix("capabilities.").unwrap_or(path);
    rest.strip_prefix("extensions.").unwrap_or(rest).to_string()
}
