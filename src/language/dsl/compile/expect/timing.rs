//! Expectations over time: a step's duration, the notifications within a window, a task's status.

use std::collections::BTreeSet;

use crate::ground::load_error::LoadError;
use crate::ground::source::Pos;
use crate::ground::yaml::value::At;
use crate::language::dsl::compile::Compiler;
use crate::language::dsl::document;
use crate::language::dsl::document::Expectation;
use crate::language::dsl::scenario::expect::{CompareOp, DurationBound, Expect, ExpectKind};
use crate::language::dsl::template;

impl Compiler {
    /// A `duration` expectation: each bound parsed (and range-checked) as a timeout is.
    pub(in crate::language::dsl::compile) fn duration(
        &mut self,
        d: At<document::DurationCompare>,
        pos: &Pos,
        known: &BTreeSet<String>,
    ) -> Option<ExpectKind> {
        let mut bounds = Vec::new();
        let mut ok = true;
        for (op, text) in [
            (CompareOp::Gt, &d.gt),
            (CompareOp::Gte, &d.gte),
            (CompareOp::Lt, &d.lt),
            (CompareOp::Lte, &d.lte),
        ] {
            let Some(text) = text else { continue };
            if template::is_template(text) {
                let before = self.errors.0.len();
                self.check_template_str(text, self.at(text), known);
                ok &= self.errors.0.len() == before;
                bounds.push((op, DurationBound::Template(text.value.clone())));
                continue;
            }
            match crate::language::dsl::limits::duration(
                text,
                &crate::language::dsl::limits::TIMEOUT,
            ) {
                Ok(bound) => bounds.push((op, DurationBound::Fixed(bound))),
                Err(err) => {
                    ok = false;
                    self.errors.push(
                        LoadError::at(
                            self.at(text),
                            format!("`duration: {{{}: {}}}`: {err}", op.name(), **text),
                        )
                        .with_help("expected a duration such as `200ms` or `1.5s`"),
                    );
                }
            }
        }
        if ok && bounds.is_empty() {
            self.errors.push(
                LoadError::at(pos.clone(), "`duration` comparison without a bound").with_help(
                    "give at least one of `gt`, `gte`, `lt`, `lte`, e.g. `duration: {lt: 200ms}`",
                ),
            );
            return None;
        }
        ok.then_some(ExpectKind::Duration(bounds))
    }

    /// A `notifications` expectation: the method, `count`, `within`, and `path` with
    /// predicates over each received notification.
    pub(in crate::language::dsl::compile) fn notifications(
        &mut self,
        mut e: Expectation,
        pos: Pos,
        known: &BTreeSet<String>,
        predicates_given: bool,
    ) -> Option<Expect> {
        let asked = e.asked.is_some();
        let key = if asked { "asked" } else { "notifications" };
        let method = e
            .asked
            .take()
            .or_else(|| e.notifications.take())
            .expect("kind checked");
        if method.trim().is_empty() {
            self.errors.push(
                LoadError::at(self.at(&method), format!("`{key}` needs a method name"))
                    .with_help("e.g. `notifications/progress`, or `*` for any notification"),
            );
            return None;
        }
        let path = match e.path.take() {
            Some(p) => {
                if !predicates_given {
                    self.errors.push(
                        LoadError::at(self.at(&p), "`path` needs a predicate").with_help(
                            "add one of `equals`, `contains`, `matches`, `type`, `length`, `exists`, `oneOf`, `minMatches`, `gt`, `gte`, `lt`, `lte`",
                        ),
                    );
                    return None;
                }
                Some((self.jsonpath(&p)?, p.value))
            }
            None if predicates_given => {
                self.errors.push(
                    LoadError::at(pos, format!("predicates of `{key}` need a `path`"))
                        .with_help("e.g. `path: \"$.params.level\"`: evaluated on each message"),
                );
                return None;
            }
            None => None,
        };
        let predicates = self.predicates(&mut e, &pos, known)?;
        if let Some(c) = &e.count
            && (!self.length_has_bound(c, "count", &pos) || !self.length_templates(c, known, &pos))
        {
            return None;
        }
        let within = match &e.within {
            None => None,
            Some(w) => match humantime::parse_duration(w) {
                Ok(d) if d <= MAX_WITHIN => Some(d),
                Ok(_) => {
                    self.errors.push(
                        LoadError::at(self.at(w), format!("`within: {}` is too long", **w))
                            .with_help("notifications that arrive later than 1 minute after the response are not waited for"),
                    );
                    return None;
                }
                Err(err) => {
                    self.errors.push(
                        LoadError::at(self.at(w), format!("invalid duration `{}`: {err}", **w))
                            .with_help("expected a duration such as `200ms` or `1s`"),
                    );
                    return None;
                }
            },
        };
        Some(Expect {
            pos,
            kind: ExpectKind::Notifications {
                // `*` alone: any method, without a pattern to match.
                method: (method.value != "*").then_some(method.value),
                count: e.count,
                path,
                predicates,
                within,
                asked,
            },
        })
    }

    /// `taskStatus`: each status one of the spec's `TaskStatus` values.
    pub(super) fn task_status(
        &mut self,
        spec: At<document::TaskStatusSpec>,
        pos: Pos,
    ) -> Option<Expect> {
        use crate::protocol::tasks::STATUSES;
        let (statuses, last) = match spec.value {
            document::TaskStatusSpec::Last(s) => (vec![s], true),
            document::TaskStatusSpec::Sequence(v) => (v, false),
        };
        if statuses.is_empty() {
            self.errors.push(
                LoadError::at(pos, "`taskStatus` lists no status").with_help(
                    "e.g. `taskStatus: [working, completed]` or `taskStatus: completed`",
                ),
            );
            return None;
        }
        if let Some(bad) = statuses.iter().find(|s| !STATUSES.contains(&s.as_str())) {
            self.errors.push(
                LoadError::at(pos, format!("`{bad}` is not a task status"))
                    .with_help(format!("a task status is one of {}", STATUSES.join(", "))),
            );
            return None;
        }
        Some(Expect {
            pos,
            kind: ExpectKind::TaskStatus { statuses, last },
        })
    }
}

/// Longest `within` of a `notifications` expectation.
const MAX_WITHIN: std::time::Duration = std::time::Duration::from_secs(60);
