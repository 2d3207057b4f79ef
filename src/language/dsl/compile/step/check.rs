//! A `check` step: a built-in check, its list method and options within range.

use crate::ground::load_error::LoadError;
use crate::ground::source::Pos;
use crate::language::dsl::compile::Compiler;
use crate::language::dsl::document;
use crate::language::dsl::scenario::Action;

impl Compiler {
    /// A built-in check's action (the step at `pos`), or the error and none.
    pub(super) fn builtin_check(&mut self, c: document::check::Check, pos: &Pos) -> Option<Action> {
        use crate::language::dsl::limits;
        let wants_feature = *c.kind == document::check::CheckKind::DeprecatedFeatureUnused;
        match (&c.feature, wants_feature) {
            (None, true) => {
                self.errors.push(
                    LoadError::at(pos.clone(), "`deprecated_feature_unused` needs a `feature`")
                        .with_help("one of sampling, roots, include_context, http_sse, dynamic_client_registration"),
                );
                return None;
            }
            (Some(f), false) => {
                self.error(
                    self.at(f),
                    "`feature` applies only to `kind: deprecated_feature_unused`",
                );
                return None;
            }
            _ => {}
        }
        let feature = c.feature.map(|f| f.value);
        let wire = c.kind.value == document::check::CheckKind::WireValid;
        // `wire_valid` sends its method (any; none: it only judges what came before).
        let default = if wire { "" } else { "tools/list" };
        let method = c.method.map(|m| m.value).unwrap_or_else(|| default.into());
        if !wire
            && !matches!(
                method.as_str(),
                "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list"
            )
        {
            self.errors.push(
                LoadError::at(pos.clone(), format!("`{method}` is not a list method")).with_help(
                    "expected tools/list, prompts/list, resources/list or resources/templates/list",
                ),
            );
            return None;
        }
        if let Some(n) = c
            .count
            .as_ref()
            .filter(|n| !limits::CHECK_COUNT.contains(&n.value))
        {
            let message = if n.value == 0 {
                "`count` must be at least 1".to_string()
            } else {
                format!("`count` {} is out of range", n.value)
            };
            self.errors
                .push(LoadError::at(self.at(n), message).with_help(format!(
                    "expected {}, e.g. `count: 32`",
                    limits::describe(&limits::CHECK_COUNT)
                )));
            return None;
        }
        Some(Action::Check {
            kind: c.kind.value,
            method,
            options: crate::language::dsl::scenario::CheckOptions {
                safe_tools: c.safe_tools,
                count: c.count.map(|n| n.value),
                feature,
            },
        })
    }
}
