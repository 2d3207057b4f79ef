//! Expectations: JSONPaths, predicates, regexes, schemas, durations and notifications,
//! each compiled once and checked for what can be known before the run.

mod patterns;
mod predicates;
mod timing;

use std::collections::BTreeSet;

use super::Compiler;
use crate::ground::load_error::LoadError;
use crate::ground::source::Pos;
use crate::language::dsl::document::Expectation;
use crate::language::dsl::scenario::expect::{Expect, ExpectKind};

impl Compiler {
    pub(super) fn expectation(
        &mut self,
        mut e: Expectation,
        pos: Pos,
        known: &BTreeSet<String>,
    ) -> Option<Expect> {
        let kinds: Vec<&str> = [
            (e.schema.is_some() || e.schema_file.is_some(), "schema"),
            (e.json.is_some(), "json"),
            (e.error.is_some(), "error"),
            (e.is_error.is_some(), "isError"),
            (e.output_schema.is_some(), "outputSchema"),
            (e.http.is_some(), "http"),
            (e.no_response.is_some(), "noResponse"),
            (e.notifications.is_some(), "notifications"),
            (e.asked.is_some(), "asked"),
            (e.rounds.is_some(), "rounds"),
            (e.task_status.is_some(), "taskStatus"),
            (e.duration.is_some(), "duration"),
            (e.snapshot.is_some(), "snapshot"),
        ]
        .into_iter()
        .filter_map(|(present, name)| present.then_some(name))
        .collect();
        let predicates_given = e.equals.is_some()
            || e.not_equals.is_some()
            || e.contains.is_some()
            || e.matches.is_some()
            || e.type_.is_some()
            || e.length.is_some()
            || e.exists.is_some()
            || e.absent.is_some()
            || e.one_of.is_some()
            || e.unique.is_some()
            || e.increasing.is_some()
            || e.valid_schema.is_some()
            || e.min_matches.is_some()
            || e.gt.is_some()
            || e.gte.is_some()
            || e.lt.is_some()
            || e.lte.is_some();
        let schema_with_path =
            (kinds == ["schema"] || kinds == ["json"]) && e.path.is_some() && !predicates_given;
        // `notifications` (and `asked`) take `path` and predicates: they apply to each message.
        let notifications = kinds == ["notifications"] || kinds == ["asked"];
        // `snapshot` takes `path`: the part of the result that is snapshotted.
        let snapshot = kinds == ["snapshot"] && !predicates_given;
        if kinds.len() > 1
            || (kinds.len() == 1 && predicates_given && !notifications)
            || (kinds.len() == 1
                && e.path.is_some()
                && !schema_with_path
                && !notifications
                && !snapshot)
        {
            self.errors.push(
                LoadError::at(pos, "an expectation has one kind; this one mixes several")
                    .with_help("split it into separate list items: `- {path: ..., equals: ...}`, `- error: {...}`, `- isError: true`, ..."),
            );
            return None;
        }
        if !notifications && (e.count.is_some() || e.within.is_some()) {
            let key = if e.count.is_some() { "count" } else { "within" };
            self.errors.push(
                LoadError::at(
                    pos,
                    format!("`{key}` applies only to a `notifications` or `asked` expectation"),
                )
                .with_help("e.g. `- {notifications: notifications/progress, count: {gte: 1}}` or `- {asked: elicitation/create, count: 1}`"),
            );
            return None;
        }
        if !self.snapshot_keys_placed(&e, &pos) {
            return None;
        }
        if snapshot {
            return self.snapshot(e, pos);
        }
        if let Some(spec) = e.task_status.take() {
            return self.task_status(spec, pos);
        }
        if let Some(rounds) = e.rounds.take() {
            if !self.length_has_bound(&rounds, "rounds", &pos)
                || !self.length_templates(&rounds, known, &pos)
            {
                return None;
            }
            return Some(Expect {
                pos,
                kind: ExpectKind::Rounds(rounds),
            });
        }
        if let Some(within) = e.within.as_ref().filter(|_| e.asked.is_some()) {
            self.error(
                self.at(within),
                "`within` applies to `notifications`, not to `asked`",
            );
            return None;
        }
        if notifications {
            return self.notifications(e, pos, known, predicates_given);
        }
        if kinds.is_empty() {
            let Some(path) = e.path.take() else {
                self.errors.push(LoadError::at(pos, "empty expectation").with_help(
                    "use one of `path` (with a predicate), `schema`, `schemaFile`, `error`, `isError`, `outputSchema`, `http`, `noResponse`, `notifications`, `asked`, `rounds`, `duration`, `snapshot`",
                ));
                return None;
            };
            if !predicates_given {
                self.errors.push(LoadError::at(self.at(&path), "`path` needs a predicate").with_help(
                    "add one of `equals`, `notEquals`, `contains`, `matches`, `type`, `length`, `exists`, `absent`, `oneOf`, `minMatches`, `gt`, `gte`, `lt`, `lte`",
                ));
                return None;
            }
            let compiled = self.path_expr(&path, known)?;
            let predicates = self.predicates(&mut e, &pos, known)?;
            return Some(Expect {
                pos,
                kind: ExpectKind::Path {
                    path: compiled,
                    source: path.value,
                    predicates,
                },
            });
        }
        let kind = match kinds[0] {
            "json" => return self.json_text(e, pos, known),
            "schema" => {
                let path = match &e.path {
                    Some(p) => Some((self.jsonpath(p)?, p.value.clone())),
                    None => None,
                };
                let validator = match (e.schema, e.schema_file) {
                    (Some(_), Some(f)) => {
                        self.error(self.at(&f), "give `schema` or `schemaFile`, not both");
                        return None;
                    }
                    (Some(inline), None) => {
                        let spos = self.pos(inline.line, inline.col);
                        self.schema(inline.to_json(), spos, Some(&inline))?
                    }
                    (None, Some(file)) => {
                        let fpos = self.at(&file);
                        let value = self.schema_file(&file, fpos.clone())?;
                        self.schema(value, fpos, None)?
                    }
                    (None, None) => unreachable!("schema kind needs one of the keys"),
                };
                ExpectKind::Schema { path, validator }
            }
            "error" => {
                let err = e.error.expect("kind checked");
                if let Some(d) = &err.data {
                    self.check_templates(d, known);
                }
                let message = match &err.message {
                    Some(m) => Some(self.regex(m)?),
                    None => None,
                };
                ExpectKind::Error {
                    code: err.code,
                    message,
                    data: err.data,
                }
            }
            "isError" => ExpectKind::IsError(e.is_error.expect("kind checked")),
            "outputSchema" => ExpectKind::OutputSchema,
            "http" => {
                let http = e.http.expect("kind checked");
                let mut headers = Vec::new();
                for (name, re) in http.headers {
                    let compiled = match &re {
                        Some(r) => Some(self.regex(r)?),
                        None => None,
                    };
                    headers.push((name.to_ascii_lowercase(), compiled));
                }
                ExpectKind::Http {
                    status: http.status,
                    headers,
                }
            }
            "noResponse" => ExpectKind::NoResponse(e.no_response.expect("kind checked")),
            "duration" => self.duration(e.duration.expect("kind checked"), &pos, known)?,
            other => unreachable!("unknown kind {other}"),
        };
        Some(Expect { pos, kind })
    }

    /// `json`: the text at `path` decoded, judged by the nested expectation.
    fn json_text(
        &mut self,
        mut e: Expectation,
        pos: Pos,
        known: &BTreeSet<String>,
    ) -> Option<Expect> {
        let inner = e.json.take().expect("kind checked");
        let Some(path) = e.path.take() else {
            self.errors.push(
                LoadError::at(pos, "`json` needs a `path` to the text that holds the JSON")
                    .with_help("e.g. `{path: \"$.content[0].text\", json: {path: \"$.items[0].id\", equals: 3}}`"),
            );
            return None;
        };
        let compiled = self.path_expr(&path, known)?;
        let ipos = self.at(&inner);
        let inner = self.expectation(inner.value, ipos.clone(), known)?;
        if !matches!(
            inner.kind,
            ExpectKind::Path { .. } | ExpectKind::Schema { .. } | ExpectKind::Json { .. }
        ) {
            self.errors.push(
                LoadError::at(
                    ipos,
                    format!(
                        "`json` holds an expectation about the decoded value, not `{}`",
                        inner.kind.name()
                    ),
                )
                .with_help("inside `json` use `path` with predicates, `schema`, or `json` again"),
            );
            return None;
        }
        Some(Expect {
            pos,
            kind: ExpectKind::Json {
                path: compiled,
                source: path.value,
                inner: Box::new(inner),
            },
        })
    }
}
