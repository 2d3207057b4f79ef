//! A step's or a scenario's preconditions (`requires:`), and how a connection meets them:
//! capabilities, transport, versions, handshake headers, parameters.

use crate::protocol::era::EraSelector;

/// Preconditions (empty: none).
#[derive(Debug, Default, Clone)]
pub struct Requires {
    pub capabilities: Vec<String>,
    pub capabilities_absent: Vec<String>,
    pub transport: Option<crate::language::dsl::document::TransportKind>,
    /// `--set` parameters that must be set.
    pub parameters: Vec<String>,
    /// The endpoint must refuse unauthenticated requests (probed by the engine).
    pub auth_required: bool,
    /// The HTTP target must be on a loopback host.
    pub loopback: bool,
    /// Each matches some version `server/discover` lists.
    pub versions_include: Vec<EraSelector>,
    /// None matches a version `server/discover` lists.
    pub versions_exclude: Vec<EraSelector>,
    /// HTTP headers the handshake response carried.
    pub handshake_headers: Vec<String>,
    /// Whether a legacy `initialize` handshake must complete (probed by the engine).
    pub legacy_handshake: Option<bool>,
    /// Methods the server must serve (probed by the engine: -32601 is unmet).
    pub served: Vec<String>,
    /// `(expression, reason)`: template expressions that must have a value (checked by
    /// the engine against the variables when the step's turn comes).
    pub defined: Vec<(String, String)>,
}

impl Requires {
    /// Why the transport does not meet these preconditions, if it does not.
    pub fn transport_unmet(&self, is_http: bool) -> Option<String> {
        use crate::language::dsl::document::TransportKind;
        match (self.transport, is_http) {
            (Some(TransportKind::Http), false) => Some("needs the HTTP transport".into()),
            (Some(TransportKind::Stdio), true) => Some("needs the stdio transport".into()),
            _ => None,
        }
    }

    /// The first required parameter that is not set, if any.
    pub fn unset_parameter(
        &self,
        params: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<&str> {
        self.parameters
            .iter()
            .find(|p| !params.contains_key(p.as_str()))
            .map(String::as_str)
    }

    /// Why a connection does not meet these preconditions, if it does not.
    pub fn unmet(&self, n: &crate::protocol::era::Negotiated, is_http: bool) -> Option<String> {
        if let Some(why) = self.transport_unmet(is_http) {
            return Some(why);
        }
        if let Some(why) = self.versions_unmet(n) {
            return Some(why);
        }
        for name in &self.handshake_headers {
            let Some(headers) = &n.handshake_headers else {
                return Some(format!(
                    "needs the `{name}` header of an HTTP handshake; this transport has none"
                ));
            };
            if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name)) {
                return Some(format!("the handshake response carried no `{name}` header"));
            }
        }
        let capabilities = &n.capabilities;
        for cap in &self.capabilities {
            if !capability_declared(capabilities, cap) {
                return Some(format!(
                    "the server does not declare the `{cap}` capability"
                ));
            }
        }
        for cap in &self.capabilities_absent {
            if capability_declared(capabilities, cap) {
                return Some(format!("the server declares the `{cap}` capability"));
            }
        }
        None
    }
}

impl Requires {
    /// `supportedVersions` conditions: only a modern connection has a discover result.
    fn versions_unmet(&self, n: &crate::protocol::era::Negotiated) -> Option<String> {
        use crate::protocol::era::EraKind;
        if self.versions_include.is_empty() && self.versions_exclude.is_empty() {
            return None;
        }
        if n.kind != EraKind::Modern {
            return Some(
                "needs the supportedVersions of server/discover, which a legacy connection does not call".into(),
            );
        }
        let listed = |sel: &EraSelector| {
            n.supported_versions
                .iter()
                .filter(|v| sel.matches_negotiated(EraKind::of_revision(v), v))
                .cloned()
                .collect::<Vec<_>>()
        };
        for sel in &self.versions_include {
            if listed(sel).is_empty() {
                return Some(format!(
                    "server/discover lists no {} version (supportedVersions {:?})",
                    sel.label(),
                    n.supported_versions
                ));
            }
        }
        for sel in &self.versions_exclude {
            let found = listed(sel);
            if !found.is_empty() {
                return Some(format!(
                    "server/discover lists {} version(s) {found:?}: the rule applies only without them",
                    sel.label()
                ));
            }
        }
        None
    }
}

/// Whether a dotted capability path (`resources.subscribe`, `extensions.io.x/y`) is declared
/// (present, not `null`, not `false`).
pub fn capability_declared(capabilities: &serde_json::Value, path: &str) -> bool {
    let mut node = capabilities;
    let mut rest = path;
    while !rest.is_empty() {
        // Extension ids contain dots: under `extensions`, the rest is one key.
        let (key, tail) = if node.as_object().is_some_and(|o| o.contains_key(rest)) {
            (rest, "")
        } else {
            rest.split_once('.').unwrap_or((rest, ""))
        };
        match node.get(key) {
            Some(v) if !v.is_null() && v != &serde_json::Value::Bool(false) => node = v,
            _ => return false,
        }
        rest = tail;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::era::EraKind;
    use crate::protocol::era::Negotiated;

    fn negotiated(kind: EraKind, versions: &[&str], headers: Option<&[&str]>) -> Negotiated {
        Negotiated {
            requested: String::new(),
            kind,
            revision: String::new(),
            note: None,
            server_info: None,
            capabilities: serde_json::json!({}),
            supported_versions: versions.iter().map(|v| v.to_string()).collect(),
            instructions: None,
            handshake: None,
            handshake_headers: headers
                .map(|h| h.iter().map(|k| (k.to_string(), "x".to_string())).collect()),
        }
    }

    #[test]
    fn supported_versions_conditions() {
        let modern_only = Requires {
            versions_exclude: vec![EraSelector::Legacy],
            ..Requires::default()
        };
        let dual = negotiated(EraKind::Modern, &["2025-11-25", "2026-07-28"], None);
        let only = negotiated(EraKind::Modern, &["2026-07-28"], None);
        let legacy = negotiated(EraKind::Legacy, &[], None);
        assert!(
            modern_only
                .unmet(&dual, false)
                .is_some_and(|why| why.contains("2025-11-25"))
        );
        assert_eq!(modern_only.unmet(&only, false), None);
        assert!(
            modern_only
                .unmet(&legacy, false)
                .is_some_and(|why| why.contains("legacy connection"))
        );
        let wants_revision = Requires {
            versions_include: vec![EraSelector::Revision("2025-11-25".into())],
            ..Requires::default()
        };
        assert_eq!(wants_revision.unmet(&dual, false), None);
        assert!(wants_revision.unmet(&only, false).is_some());
    }

    #[test]
    fn handshake_headers_conditions() {
        let sessions = Requires {
            handshake_headers: vec!["Mcp-Session-Id".into()],
            ..Requires::default()
        };
        let with = negotiated(EraKind::Legacy, &[], Some(&["mcp-session-id"]));
        let without = negotiated(EraKind::Legacy, &[], Some(&["content-type"]));
        let stdio = negotiated(EraKind::Legacy, &[], None);
        assert_eq!(sessions.unmet(&with, true), None);
        assert!(sessions.unmet(&without, true).is_some());
        assert!(sessions.unmet(&stdio, false).is_some());
    }
}
