//! One step: its name, timeout, retries, expectations and captures; its action (what it
//! sends) compiled by kind in `step/action.rs` (a built-in check in `step/check.rs`).

mod action;
mod check;

use indexmap::IndexMap;
use std::collections::BTreeSet;

use super::{Compiler, required_parameters};
use crate::ground::load_error::LoadError;
use crate::ground::yaml::value::At;
use crate::language::dsl::document;
use crate::language::dsl::scenario::expect::{Expect, ExpectKind};
use crate::language::dsl::scenario::{Action, Capture, Phase, Step};
use crate::protocol::rules::{Rule, RuleLevel};
use crate::results::outcome::Level;

impl Compiler {
    /// Compile one step; `prefix` is the name of the group call it comes from.
    pub(super) fn step(
        &mut self,
        step: At<document::StepDoc>,
        known: &BTreeSet<String>,
        prefix: Option<&str>,
    ) -> Option<Step> {
        self.uses.clear();
        let step_pos = self.at(&step);
        let mut step = step.value;
        // Likewise the parameters this step requires (copying the known names only then:
        // per step, that copy was a noticeable part of loading a long scenario).
        let guarded;
        let known = if required_parameters(step.requires.as_deref())
            .next()
            .is_some()
        {
            let mut names = known.clone();
            names.extend(required_parameters(step.requires.as_deref()));
            guarded = names;
            &guarded
        } else {
            known
        };
        let Some(name) = &step.name else {
            self.errors.push(
                LoadError::at(step_pos, "missing required key `name`")
                    .with_help("every step has a `name` (its check id); a group call has `use:`"),
            );
            return None;
        };
        let pos = self.at(name);
        let full_name = match prefix {
            Some(p) => format!("{p}/{}", name.value),
            None => name.value.clone(),
        };
        if let Some(w) = &step.with {
            self.errors.push(
                LoadError::at(self.at(w), "`with` belongs to a group call")
                    .with_help("add `use: GROUP` to call a step group, or remove `with`"),
            );
        }
        let eras = step.eras.as_ref().map(|e| self.eras(e));
        let timeout = step.timeout.as_ref().and_then(|t| self.step_timeout(t));
        let retry = step.retry.as_deref().and_then(|r| self.retry(r));
        let action = self.action(&mut step, &pos, known)?;
        let expects = self.step_expects(step.expect, &action, known);
        let captures = self.captures(step.capture, known);
        let rule = self.rule(step.rule.as_ref(), step.level.is_some());
        Some(Step {
            name: full_name,
            description: step.description,
            pos,
            eras,
            transport: step.transport,
            requires: self.requires(step.requires.map(|r| *r), known),
            // With a rule: its newest level (what a listing shows); a run takes the level of
            // the revision it negotiated (`engine::failure::level_of`).
            level: match (rule.and_then(|r| r.newest_level()), step.level) {
                (Some(RuleLevel::Should), _) | (None, Some(document::StepLevel::Should)) => {
                    Level::Should
                }
                _ => Level::Must,
            },
            rule,
            timeout,
            retry,
            action,
            expects,
            captures,
            uses: std::mem::take(&mut self.uses),
            call: None,
            each: None,
            phase: Phase::Main,
        })
    }

    /// A step's `timeout`, or the error (none then).
    fn step_timeout(&mut self, t: &At<String>) -> Option<std::time::Duration> {
        match crate::language::dsl::limits::duration(t, &crate::language::dsl::limits::TIMEOUT) {
            Ok(d) => Some(d),
            Err(e) => {
                let error = if humantime::parse_duration(t).is_ok_and(|d| d.is_zero()) {
                    LoadError::at(self.at(t), "a timeout of zero can never be met")
                        .with_help("expected a positive duration such as `500ms` or `10s`")
                } else {
                    LoadError::at(self.at(t), format!("invalid timeout `{}`: {e}", **t))
                        .with_help("expected a duration such as `500ms`, `10s` or `1m`")
                };
                self.errors.push(error);
                None
            }
        }
    }

    /// A step's `retry`: the extra attempts and the pause between them (none when the
    /// interval is invalid; a count out of range is an error, the retry kept).
    fn retry(&mut self, r: &At<document::RetryDoc>) -> Option<(u32, std::time::Duration)> {
        use crate::language::dsl::limits;
        let interval = match &r.interval {
            None => Some(std::time::Duration::from_millis(100)),
            Some(i) => match limits::duration(i, &limits::RETRY_INTERVAL) {
                Ok(d) => Some(d),
                Err(e) => {
                    self.errors.push(
                        LoadError::at(self.at(i), format!("invalid interval `{}`: {e}", **i))
                            .with_help("expected a duration such as `200ms` or `1s`"),
                    );
                    None
                }
            },
        };
        if !limits::RETRY_COUNT.contains(&r.count) {
            self.errors.push(
                LoadError::at(
                    self.at(r),
                    format!("retry count {} is out of range", r.count),
                )
                .with_help(format!(
                    "expected {} extra attempts",
                    limits::describe(&limits::RETRY_COUNT)
                )),
            );
        }
        interval.map(|d| (r.count, d))
    }

    /// The step's expectations, each compiled, less those its action cannot have.
    fn step_expects(
        &mut self,
        docs: Vec<At<document::Expectation>>,
        action: &Action,
        known: &BTreeSet<String>,
    ) -> Vec<Expect> {
        let is_notification = matches!(action, Action::Notification { .. });
        let mut expects = Vec::new();
        for e in docs {
            let epos = self.at(&e);
            let Some(compiled) = self.expectation(e.value, epos.clone(), known) else {
                continue;
            };
            let about_notifications = matches!(compiled.kind, ExpectKind::Notifications { .. });
            let refused = if is_notification
                && !about_notifications
                && !matches!(
                    compiled.kind,
                    ExpectKind::NoResponse(_) | ExpectKind::Http { .. }
                ) {
                Some((
                    "a notification has no response to check",
                    "notifications allow only `noResponse`, `http` and `notifications` expectations",
                ))
            } else if matches!(compiled.kind, ExpectKind::Duration(_))
                && matches!(action, Action::Handshake)
            {
                Some((
                    "a `handshake` step sends nothing to time",
                    "check `duration` on a step that sends a request",
                ))
            } else if about_notifications && matches!(action, Action::Handshake) {
                Some((
                    "a `handshake` step keeps no notifications",
                    "check notifications on a step that sends a request",
                ))
            } else {
                None
            };
            match refused {
                Some((message, help)) => {
                    self.errors
                        .push(LoadError::at(epos, message).with_help(help));
                }
                None => expects.push(compiled),
            }
        }
        expects
    }

    /// The step's captures: a response path, or a path into what the server asked.
    fn captures(
        &mut self,
        docs: IndexMap<String, At<document::CaptureDoc>>,
        known: &BTreeSet<String>,
    ) -> Vec<Capture> {
        let mut captures = Vec::new();
        for (name, doc) in docs {
            let (path, asked) = match doc.value {
                document::CaptureDoc::Response(path) => (
                    At {
                        value: path,
                        line: doc.line,
                        col: doc.col,
                    },
                    None,
                ),
                document::CaptureDoc::Asked(document::CaptureAsked { asked, path }) => {
                    let method = asked.value.trim();
                    if !method.contains('*')
                        && crate::protocol::methods::client_capability_for(method).is_none()
                    {
                        self.errors.push(
                            LoadError::at(self.at(&asked), format!("capture `{name}`: the server asks no `{}` of a client", crate::ground::redact::excerpt(method)))
                                .with_help("`asked:` names `elicitation/create`, `sampling/createMessage`, `roots/list`, or `*` for any (a pattern such as `sampling/*` too)"),
                        );
                        continue;
                    }
                    (path, Some((method != "*").then(|| method.to_string())))
                }
            };
            let pos = self.at(&path);
            if let Some(compiled) = self.path_expr(&path, known) {
                captures.push(Capture {
                    name,
                    path: compiled,
                    source: path.value,
                    pos,
                    asked,
                });
            }
        }
        captures
    }

    /// The row of the rule table a step names (`rule: ID`), which then decides its level.
    fn rule(&mut self, rule: Option<&At<String>>, has_level: bool) -> Option<&'static Rule> {
        let id = rule?;
        if has_level {
            self.errors.push(
                LoadError::at(self.at(id), "a step with `rule` takes no `level`").with_help(
                    "the rule table gives the level for each protocol revision; remove `level`",
                ),
            );
        }
        let found = crate::protocol::rules::find(id);
        if found.is_none() {
            let known: Vec<&str> = crate::protocol::rules::all().iter().map(|r| r.id).collect();
            let mut error = LoadError::at(self.at(id), format!("unknown rule `{}`", **id));
            if let Some(near) = crate::ground::load_error::did_you_mean(id, known.iter().copied()) {
                error = error.with_help(format!("did you mean `{near}`?"));
            } else {
                error = error
                    .with_help("`mcpspec list conformance` lists the rules (a step's check id)");
            }
            self.errors.push(error);
        }
        found
    }
}
