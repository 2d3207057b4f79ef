//! `--affected-by DIFF.json`: the tasks a contract diff (`mcpspec diff --format json`)
//! puts at risk. A task is kept when it involves a tool whose change the diff marks
//! `affectsModels` (`true` or `"possibly"`) — by an expected tool name or a tag equal to
//! the tool's name — and every `noToolCall` task is kept when a tool was added or the
//! server's instructions changed (a new or reworded tool may now be called where none is
//! needed).
//!
//! A model picks a tool by comparing all the descriptions it is shown: a reworded
//! description can pull prompts meant for *another* tool. So when the wording the model
//! reads changed (a tool's description or title, a tool added, removed or renamed, the
//! instructions), the default scope ([`AffectedScope::Wide`]) keeps every tool-calling task and
//! every `noToolCall` task; [`AffectedScope::Direct`] narrows to the tasks that name a changed tool.

use std::path::Path;

use serde_json::Value;

use super::set::Task;

/// What the diff says, reduced to what selection needs.
#[derive(Debug, Default)]
pub struct Affected {
    /// Tools with a change that affects models.
    pub tools: Vec<String>,
    /// A tool was added.
    pub tool_added: bool,
    /// The server's `instructions` changed.
    pub instructions_changed: bool,
    /// What changed in the wording a model chooses tools by, if anything (for the reason).
    pub wording_changed: Option<String>,
}

/// How far `--affected-by` reaches (`--affected-scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum AffectedScope {
    /// Every tool-calling and `noToolCall` task when the wording a model reads changed.
    #[default]
    Wide,
    /// Only the tasks that expect or are tagged with a changed tool (and `noToolCall`
    /// tasks when a tool was added or the instructions changed).
    Direct,
}

impl Affected {
    pub fn read(path: &Path) -> Result<Affected, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("--affected-by {}: {e}", path.display()))?;
        let doc: Value = serde_json::from_str(&text).map_err(|e| {
            format!(
                "--affected-by {}: not JSON ({e}); expected the output of `mcpspec diff --format json`",
                path.display()
            )
        })?;
        Affected::from_diff(&doc).map_err(|e| format!("--affected-by {}: {e}", path.display()))
    }

    pub fn from_diff(doc: &Value) -> Result<Affected, String> {
        let changes = doc
            .get("changes")
            .and_then(Value::as_array)
            .ok_or("no `changes` list; expected the output of `mcpspec diff --format json`")?;
        let mut out = Affected::default();
        for c in changes {
            let field = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
            let (list, name, kind) = (field("list"), field("name"), field("kind"));
            let affects = match c.get("affectsModels") {
                Some(Value::Bool(b)) => *b,
                Some(Value::String(s)) => s == "possibly",
                _ => false,
            };
            if list == "tools" {
                if affects && !out.tools.iter().any(|t| t == name) {
                    out.tools.push(name.to_string());
                }
                // A rename: the new name is the one a task now expects.
                if kind == "renamed"
                    && affects
                    && let Some(new) = c.get("after").and_then(Value::as_str)
                    && !out.tools.iter().any(|t| t == new)
                {
                    out.tools.push(new.to_string());
                }
                if kind == "added" {
                    out.tool_added = true;
                }
                if matches!(
                    kind,
                    "added" | "removed" | "renamed" | "description_changed" | "title_changed"
                ) && out.wording_changed.is_none()
                {
                    out.wording_changed = Some(format!("tool `{name}` {}", kind.replace('_', " ")));
                }
            }
            if kind == "instructions_changed" {
                out.instructions_changed = true;
                out.wording_changed
                    .get_or_insert_with(|| "the server's instructions changed".into());
            }
        }
        Ok(out)
    }

    /// Why `task` is at risk, or `None` when the diff leaves it alone.
    pub fn reason(&self, task: &Task, scope: AffectedScope) -> Option<String> {
        let expected = task.expected_tools();
        if let Some(t) = self.tools.iter().find(|t| expected.contains(t)) {
            return Some(format!(
                "expects tool `{t}`, changed in a way that affects models"
            ));
        }
        if let Some(t) = self.tools.iter().find(|t| task.tags.contains(t)) {
            return Some(format!(
                "tagged `{t}`, a tool changed in a way that affects models"
            ));
        }
        if scope == AffectedScope::Wide
            && let Some(what) = &self.wording_changed
        {
            if !task.expected_tools().is_empty() {
                return Some(format!(
                    "calls a tool, and {what}: a reworded tool can take prompts meant for another"
                ));
            }
            if task.no_tool_call() {
                return Some(format!("a noToolCall task, and {what}"));
            }
        }
        if task.no_tool_call() {
            if self.tool_added {
                return Some("a noToolCall task, and a tool was added".into());
            }
            if self.instructions_changed {
                return Some("a noToolCall task, and the instructions changed".into());
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_diff_marks() {
        let doc = json!({"changes": [
            {"list": "tools", "name": "echo", "kind": "description_changed", "affectsModels": true},
            {"list": "tools", "name": "add", "kind": "optional_parameter_added", "affectsModels": false},
            {"list": "tools", "name": "multiply", "kind": "added", "affectsModels": true},
            {"list": "server", "name": "server", "kind": "instructions_changed", "affectsModels": "possibly"},
        ]});
        let a = Affected::from_diff(&doc).expect("reads");
        assert_eq!(a.tools, ["echo", "multiply"]);
        assert!(a.tool_added && a.instructions_changed);
        assert_eq!(
            a.wording_changed.as_deref(),
            Some("tool `echo` description changed")
        );
        let doc = json!({"changes": [
            {"list": "tools", "name": "add", "kind": "optional_parameter_added", "affectsModels": false},
        ]});
        assert_eq!(Affected::from_diff(&doc).unwrap().wording_changed, None);
        assert!(Affected::from_diff(&json!({"x": 1})).is_err());
    }

    #[test]
    fn a_renamed_tool_counts_like_a_description_change() {
        // A rename changes the wording every model reads: the wide scope keeps every
        // tool-calling task, and both names count as changed tools.
        let doc = json!({"changes": [
            {"list": "tools", "name": "echo", "kind": "renamed", "path": "name",
             "before": "echo", "after": "repeat", "affectsModels": true},
        ]});
        let a = Affected::from_diff(&doc).expect("reads");
        assert_eq!(a.tools, ["echo", "repeat"]);
        assert_eq!(a.wording_changed.as_deref(), Some("tool `echo` renamed"));
    }
}
