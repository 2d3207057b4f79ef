//! MCP tool names ↔ model-side names. Both model APIs accept only `^[a-zA-Z0-9_-]{1,64}$`;
//! an MCP name outside that (dots, slashes, longer names) gets a reversible stand-in: the
//! allowed characters kept, the rest `_`, cut, plus a short hash of the original so two
//! names never map to one.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

const MAX: usize = 64;

fn allowed(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The mapping of one run's tool list.
#[derive(Debug, Default, Clone)]
pub struct Names {
    to_model: HashMap<String, String>,
    to_mcp: HashMap<String, String>,
}

impl Names {
    pub fn new<'a>(mcp_names: impl IntoIterator<Item = &'a str>) -> Names {
        let mut names = Names::default();
        let all: Vec<&str> = mcp_names.into_iter().collect();
        // Names that are already allowed keep themselves (and are taken first).
        for n in all.iter().filter(|n| allowed(n)) {
            names.insert(n, n.to_string());
        }
        for n in all.iter().filter(|n| !allowed(n)) {
            let hash = hex(&Sha256::digest(n.as_bytes()))[..8].to_string();
            let mut stem: String = n
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(MAX - 9)
                .collect();
            stem.push('_');
            stem.push_str(&hash);
            names.insert(n, stem);
        }
        names
    }

    fn insert(&mut self, mcp: &str, model: String) {
        if self.to_mcp.contains_key(&model) {
            return;
        }
        self.to_model.insert(mcp.to_string(), model.clone());
        self.to_mcp.insert(model, mcp.to_string());
    }

    pub fn to_model<'a>(&'a self, mcp: &'a str) -> &'a str {
        self.to_model.get(mcp).map_or(mcp, String::as_str)
    }

    /// The MCP name of a model-side name, if it is one of the run's tools.
    pub fn to_mcp(&self, model: &str) -> Option<&str> {
        self.to_mcp.get(model).map(String::as_str)
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_names_map_reversibly() {
        let long = "x".repeat(80);
        let names = Names::new(["get_weather", "files.read", "files/read", long.as_str()]);
        assert_eq!(names.to_model("get_weather"), "get_weather");
        let a = names.to_model("files.read").to_string();
        let b = names.to_model("files/read").to_string();
        assert_ne!(a, b);
        for m in [&a, &b, &names.to_model(&long).to_string()] {
            assert!(allowed(m), "{m}");
        }
        assert_eq!(names.to_mcp(&a), Some("files.read"));
        assert_eq!(names.to_mcp("nope"), None);
    }
}
