//! JSONPaths, regexes and JSON Schemas of expectations, each compiled once within the run's
//! budget for patterns.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use regex::Regex;

use crate::ground::json::path::CompiledPath;
use crate::ground::load_error::LoadError;
use crate::ground::source::Pos;
use crate::ground::yaml::value::At;
use crate::language::dsl::compile::Compiler;
use crate::language::dsl::scenario::PathExpr;
use crate::language::dsl::template;

impl Compiler {
    /// A path that may be a template (an expectation's `path`, a capture): its variables
    /// must be defined and its filters known; it is parsed once rendered.
    pub(in crate::language::dsl::compile) fn path_expr(
        &mut self,
        path: &At<String>,
        known: &BTreeSet<String>,
    ) -> Option<PathExpr> {
        if !template::is_template(path) {
            return self.jsonpath(path).map(PathExpr::Fixed);
        }
        let before = self.errors.0.len();
        self.check_template_str(path, self.at(path), known);
        (self.errors.0.len() == before).then(|| PathExpr::Template(path.value.clone()))
    }

    pub(in crate::language::dsl::compile) fn jsonpath(
        &mut self,
        path: &At<String>,
    ) -> Option<CompiledPath> {
        if template::is_template(path) {
            self.errors.push(
                LoadError::at(self.at(path), "templates are not rendered in this path")
                    .with_help("`{{ }}` is rendered in an expectation's `path` with predicates and in `capture`; write this path out"),
            );
            return None;
        }
        // Scenarios repeat their paths (`$.content[0].text` in every step): parse each once.
        if let Some(parsed) = self.jsonpaths.get(path.as_str()) {
            return Some(parsed.clone());
        }
        match CompiledPath::parse(path) {
            Ok(p) => {
                self.jsonpaths.insert(path.value.clone(), p.clone());
                Some(p)
            }
            Err(e) => {
                let message = format!(
                    "invalid JSONPath `{}`: {}",
                    crate::ground::redact::excerpt(path),
                    crate::ground::redact::excerpt(&e.to_string())
                );
                self.errors
                    .push(LoadError::at(self.at(path), message).with_help(
                        "JSONPath follows RFC 9535, e.g. `$.tools[*].name` or `$.content[0].text`",
                    ));
                None
            }
        }
    }

    /// Charge `count` patterns of `bytes` to the file's budget: `false` past it (said once,
    /// at the first pattern past it).
    fn spend_patterns(&mut self, count: usize, bytes: usize, pos: Pos) -> bool {
        match self.patterns.spend(count, bytes) {
            Ok(()) => true,
            Err(why) => {
                if let Some(why) = why {
                    self.errors.push(
                        LoadError::at(pos, format!("too many regular expressions: {why}"))
                            .with_help("split the scenario into several files"),
                    );
                }
                false
            }
        }
    }

    pub(in crate::language::dsl::compile) fn regex(&mut self, re: &At<String>) -> Option<Regex> {
        if !self.spend_patterns(1, re.len(), self.at(re)) {
            return None;
        }
        match crate::ground::bounds::regex_at(re, self.at(re)) {
            Ok(r) => Some(r),
            Err(e) => {
                self.errors.push(e);
                None
            }
        }
    }

    /// A validator for a scenario's schema (`inline`: the YAML it came from, so a pattern
    /// past the bounds is shown where it is written).
    pub(in crate::language::dsl::compile) fn schema(
        &mut self,
        schema: serde_json::Value,
        pos: Pos,
        inline: Option<&crate::ground::yaml::value::TValue>,
    ) -> Option<Arc<jsonschema::Validator>> {
        if let Some((at, why)) = crate::ground::bounds::schema_pattern_too_long(&schema) {
            let pos = inline
                .and_then(|v| value_at(v, &at))
                .map_or(pos, |v| self.pos(v.line, v.col));
            self.errors.push(
                LoadError::at(pos, format!("JSON Schema pattern at {at}: {why}")).with_help(
                    "match long text with a short pattern (`^.{1000,}$`, not 1000 dots)",
                ),
            );
            return None;
        }
        let (count, bytes) = crate::ground::bounds::schema_pattern_cost(&schema);
        if !self.spend_patterns(count, bytes, pos.clone()) {
            return None;
        }
        if let Err(e) = jsonschema::meta::validate(&schema) {
            self.errors.push(
                LoadError::at(
                    pos,
                    format!(
                        "invalid JSON Schema: {}",
                        crate::ground::redact::excerpt(&e.to_string())
                    ),
                )
                .with_help("schemas follow JSON Schema 2020-12"),
            );
            return None;
        }
        match crate::ground::bounds::validator(&schema) {
            Ok(v) => Some(Arc::new(v)),
            Err(why) => {
                self.errors
                    .push(LoadError::at(pos, format!("invalid JSON Schema: {why}")));
                None
            }
        }
    }

    pub(in crate::language::dsl::compile) fn schema_file(
        &mut self,
        file: &At<String>,
        pos: Pos,
    ) -> Option<serde_json::Value> {
        let base = Path::new(&self.file.name)
            .parent()
            .unwrap_or(Path::new("."));
        let path = base.join(&file.value);
        let text = match crate::ground::source::read_text(&path) {
            Ok(t) => t,
            Err(e) => {
                self.error(
                    pos,
                    format!("cannot read schema file `{}`: {e}", path.display()),
                );
                return None;
            }
        };
        let parsed = if path.extension().is_some_and(|e| e == "json") {
            serde_json::from_str::<serde_json::Value>(&text).map_err(|e| e.to_string())
        } else {
            crate::ground::yaml::from_str::<serde_json::Value>(&text).map_err(|e| e.to_string())
        };
        match parsed {
            Ok(v) => Some(v),
            Err(e) => {
                self.error(
                    pos,
                    format!(
                        "schema file `{}` is not valid JSON/YAML: {e}",
                        path.display()
                    ),
                );
                None
            }
        }
    }
}

/// The node at a schema path (`/properties/a/pattern`) of a positioned value.
fn value_at<'v>(
    v: &'v crate::ground::yaml::value::TValue,
    at: &str,
) -> Option<&'v crate::ground::yaml::value::TValue> {
    use crate::ground::yaml::value::TKind;
    at.split('/')
        .skip(1)
        .try_fold(v, |node, part| match &node.kind {
            TKind::Map(_) => node.get(part),
            TKind::Seq(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        })
}
