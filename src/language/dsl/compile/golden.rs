//! `snapshot` expectations: the file name, the snapshotted path and the sanitizers, all
//! checked before the run (a bad regex or JSONPath fails the load, not the step).

use std::sync::Arc;

use super::Compiler;
use crate::ground::load_error::{LoadError, LoadErrors, did_you_mean};
use crate::ground::source::{Pos, SourceFile};
use crate::ground::yaml::value::At;
use crate::language::dsl::document::{Expectation, Sanitizer};
use crate::language::dsl::scenario::expect::{Expect, ExpectKind, SanitizerSpec, SnapshotSpec};

/// The built-in sanitizers, by name.
const BUILTINS: &[(&str, SanitizerSpec)] = &[
    ("timestamps", SanitizerSpec::Timestamps),
    ("uuids", SanitizerSpec::Uuids),
    ("jwts", SanitizerSpec::Jwts),
];

impl Compiler {
    /// `sanitize` and `perEra` belong to a `snapshot` expectation.
    pub(super) fn snapshot_keys_placed(&mut self, e: &Expectation, pos: &Pos) -> bool {
        if e.snapshot.is_some() || (e.sanitize.is_none() && e.per_era.is_none()) {
            return true;
        }
        let key = if e.sanitize.is_some() {
            "sanitize"
        } else {
            "perEra"
        };
        self.errors.push(
            LoadError::at(
                pos.clone(),
                format!("`{key}` applies only to a `snapshot` expectation"),
            )
            .with_help("e.g. `- {snapshot: weather, sanitize: [timestamps]}`"),
        );
        false
    }

    pub(super) fn snapshot(&mut self, mut e: Expectation, pos: Pos) -> Option<Expect> {
        let name = e.snapshot.take().expect("kind checked");
        let mut ok = true;
        if !is_file_name(&name) {
            ok = false;
            self.errors.push(
                LoadError::at(
                    self.at(&name),
                    format!("`snapshot: {}` is not a plain file name", *name),
                )
                .with_help("use letters, digits, `-`, `_` and `.` (not first), e.g. `weather-boston`; the file is `__snapshots__/<scenario>/<name>.json`"),
            );
        }
        let path = match &e.path {
            Some(p) => self.jsonpath(p).map(|c| Some((c, p.value.clone()))),
            None => Some(None),
        };
        let mut sanitizers = Vec::new();
        for item in e.sanitize.take().unwrap_or_default() {
            match self.sanitizer(item) {
                Some(s) => sanitizers.push(s),
                None => ok = false,
            }
        }
        let path = path?;
        ok.then(|| Expect {
            pos,
            kind: ExpectKind::Snapshot(Box::new(SnapshotSpec {
                name: name.value,
                path,
                sanitizers,
                per_era: e.per_era.unwrap_or(false),
            })),
        })
    }

    fn sanitizer(&mut self, item: At<Sanitizer>) -> Option<SanitizerSpec> {
        let at = |value: &str| At {
            value: value.to_string(),
            line: item.line,
            col: item.col,
        };
        match &item.value {
            Sanitizer::Builtin(name) => {
                if let Some((_, spec)) = BUILTINS.iter().find(|(n, _)| n == name) {
                    return Some(spec.clone());
                }
                let mut err = LoadError::at(self.at(&item), format!("unknown sanitizer `{name}`"));
                err = match did_you_mean(name, BUILTINS.iter().map(|(n, _)| *n)) {
                    Some(m) => err.with_help(format!("did you mean `{m}`?")),
                    None => err.with_help(
                        "built-ins are `timestamps`, `uuids`, `jwts`; or give `{path: \"$..id\"}` or `{regex: \"…\", replace: \"<id>\"}`",
                    ),
                };
                self.errors.push(err);
                None
            }
            Sanitizer::Path(p) => {
                let path = self.jsonpath(&at(&p.path))?;
                Some(SanitizerSpec::Path(
                    path,
                    p.replace.clone().unwrap_or_else(|| "<path>".into()),
                ))
            }
            Sanitizer::Regex(r) => {
                let re = self.regex(&at(&r.regex))?;
                Some(SanitizerSpec::Regex(
                    re,
                    r.replace.clone().unwrap_or_else(|| "<regex>".into()),
                ))
            }
        }
    }
}

/// Sanitizers written outside a scenario (an eval set's `sanitize`), checked like a
/// snapshot's: the compiled list, or every error with its position in `file`.
pub fn compile_sanitizers(
    file: &Arc<SourceFile>,
    items: Vec<At<Sanitizer>>,
) -> Result<Vec<SanitizerSpec>, LoadErrors> {
    let mut c = Compiler::new(file);
    let compiled: Vec<Option<SanitizerSpec>> = items.into_iter().map(|i| c.sanitizer(i)).collect();
    if c.errors.is_empty() {
        Ok(compiled.into_iter().flatten().collect())
    } else {
        Err(c.errors)
    }
}

/// A name that is one file in one folder, on every OS: no separators, no `..`, no
/// hidden files.
fn is_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}
