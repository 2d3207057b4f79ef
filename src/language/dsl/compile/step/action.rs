//! A step's action, one function per kind: what it sends (`request`, `notification`,
//! `raw`), or does instead (`handshake`, `roots`, `contract`, `check`).

use std::collections::BTreeSet;
use std::path::Path;

use crate::ground::load_error::LoadError;
use crate::ground::source::Pos;
use crate::ground::yaml::value::At;
use crate::language::dsl::compile::Compiler;
use crate::language::dsl::scenario::{Action, TaskRun};
use crate::language::dsl::{document, template};

impl Compiler {
    /// The step's one action (taken out of `step`), or the error and none.
    pub(super) fn action(
        &mut self,
        step: &mut document::StepDoc,
        pos: &Pos,
        known: &BTreeSet<String>,
    ) -> Option<Action> {
        if !self.one_action(step, pos) {
            return None;
        }
        let has_expect = !step.expect.is_empty();
        if let Some(r) = step.request.take() {
            Some(self.request(r.value, known))
        } else if let Some(n) = step.notification.take() {
            Some(self.notification(n.value, known))
        } else if step.handshake.as_ref().is_some_and(|h| h.value) {
            Some(Action::Handshake)
        } else if let Some(c) = step.check.take() {
            if has_expect {
                return self.takes_no_expect(
                    self.at(&c),
                    "check",
                    "a built-in check decides for itself what passes",
                );
            }
            self.builtin_check(c.value, pos)
        } else if let Some(r) = step.roots.take() {
            if has_expect {
                return self.takes_no_expect(
                    self.at(&r),
                    "roots",
                    "judge what the server asks on a later step, e.g. `asked: roots/list`",
                );
            }
            Some(Action::Roots(self.roots(r.value, known)))
        } else if let Some(c) = step.contract.take() {
            if has_expect {
                return self.takes_no_expect(
                    self.at(&c),
                    "contract",
                    "the rules file decides which changes fail (default: breaking changes)",
                );
            }
            self.contract(c.value)
        } else {
            let raw = step.raw.take().expect("one action is present").value;
            Some(self.raw(raw, known))
        }
    }

    /// Whether the step gives exactly one action (the error when not).
    fn one_action(&mut self, step: &document::StepDoc, pos: &Pos) -> bool {
        let kinds = [
            step.request.as_ref().map(|r| (r.line, r.col)),
            step.notification.as_ref().map(|r| (r.line, r.col)),
            step.raw.as_ref().map(|r| (r.line, r.col)),
            step.contract.as_ref().map(|r| (r.line, r.col)),
            step.check.as_ref().map(|r| (r.line, r.col)),
            step.roots.as_ref().map(|r| (r.line, r.col)),
            step.handshake
                .as_ref()
                .filter(|h| h.value)
                .map(|r| (r.line, r.col)),
        ];
        let given = kinds.iter().flatten().count();
        if given == 1 {
            return true;
        }
        let msg = if given == 0 {
            "step has nothing to send"
        } else {
            "step has more than one of `request`, `notification`, `raw`, `contract`, `check`, `roots`, `handshake`"
        };
        self.errors.push(
            LoadError::at(pos.clone(), msg).with_help(
                "give exactly one of `request`, `notification`, `raw`, `contract`, `check`, `roots` or `handshake: true`",
            ),
        );
        false
    }

    /// A `kind` step (at `at`) that has `expect`: the error, and no step.
    fn takes_no_expect(&mut self, at: Pos, kind: &str, help: &str) -> Option<Action> {
        self.errors
            .push(LoadError::at(at, format!("a `{kind}` step takes no `expect`")).with_help(help));
        None
    }

    fn request(&mut self, r: document::Request, known: &BTreeSet<String>) -> Action {
        for v in r.params.iter().chain(r.id.iter()) {
            self.check_templates(v, known);
        }
        self.check_map_templates(r.meta.as_ref(), known);
        self.check_map_templates(r.headers.as_ref(), known);
        let task = r.task.map(|t| self.task(t, &r.method));
        Action::Request {
            method: r.method.value,
            fixed_params: r.params.as_ref().and_then(template::fixed_json),
            params: r.params,
            id: r.id,
            meta: r.meta.unwrap_or_default(),
            headers: r.headers.unwrap_or_default(),
            paginate: r.paginate,
            task,
        }
    }

    fn notification(&mut self, n: document::Notification, known: &BTreeSet<String>) -> Action {
        if let Some(p) = &n.params {
            self.check_templates(p, known);
        }
        self.check_map_templates(n.meta.as_ref(), known);
        self.check_map_templates(n.headers.as_ref(), known);
        Action::Notification {
            method: n.method.value,
            fixed_params: n.params.as_ref().and_then(template::fixed_json),
            params: n.params,
            meta: n.meta.unwrap_or_default(),
            headers: n.headers.unwrap_or_default(),
        }
    }

    fn raw(&mut self, raw: document::Raw, known: &BTreeSet<String>) -> Action {
        self.check_templates(&raw.body, known);
        self.check_map_templates(raw.headers.as_ref(), known);
        Action::Raw {
            body: raw.body,
            headers: raw.headers.unwrap_or_default(),
            http_method: raw.http_method.map(|m| m.value.to_uppercase()),
            fresh: raw.fresh,
        }
    }

    fn contract(&mut self, c: document::ContractCheck) -> Option<Action> {
        let base = Path::new(&self.file.name)
            .parent()
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let baseline = base.join(&c.baseline.value);
        if !baseline.join("tools.json").is_file() {
            self.errors.push(
                LoadError::at(self.at(&c.baseline), format!("`{}` is not a snapshot folder", baseline.display()))
                    .with_help("create it with `mcpspec snapshot <target> --out DIR`; the path is relative to the scenario file"),
            );
            return None;
        }
        let rules = match &c.rules {
            None => crate::language::contract_rules::Rules::default(),
            Some(r) => match crate::language::contract_rules::Rules::load(&base.join(&r.value)) {
                Ok(rules) => rules,
                Err(errors) => {
                    let at = self.at(r);
                    for e in errors.0 {
                        self.errors.push(e.referenced_at(at.clone(), "rules file"));
                    }
                    return None;
                }
            },
        };
        Some(Action::Contract { baseline, rules })
    }

    /// `task:` of a request: only on `tools/call` (the one request type a server's
    /// `tasks.requests` names in 2025-11-25), its bounds within range.
    fn task(&mut self, t: At<document::RequestTaskDoc>, method: &At<String>) -> TaskRun {
        use crate::language::dsl::limits;
        let at = self.at(&t);
        let doc = t.value;
        if method.value != crate::protocol::methods::TOOLS_CALL {
            self.errors.push(
                LoadError::at(at, format!("`task` applies to `tools/call`, not `{}`", method.value))
                    .with_help("2025-11-25 servers declare task support for `tools/call` only (`capabilities.tasks.requests.tools.call`)"),
            );
        }
        let mut run = TaskRun {
            ttl: doc.ttl,
            cancel: doc.cancel,
            ..TaskRun::default()
        };
        if let Some(p) = &doc.poll_interval {
            match limits::duration(p, &limits::TASK_POLL_INTERVAL) {
                Ok(d) => run.poll_interval = d,
                Err(e) => self.errors.push(
                    LoadError::at(self.at(p), format!("invalid pollInterval `{}`: {e}", **p))
                        .with_help("expected a duration such as `50ms` or `1s`"),
                ),
            }
        }
        if let Some(n) = &doc.max_polls {
            if limits::TASK_POLLS.contains(&n.value) {
                run.max_polls = n.value;
            } else {
                let range = limits::describe(&limits::TASK_POLLS);
                self.errors
                    .push(LoadError::at(self.at(n), format!("`maxPolls` is {range}")));
            }
        }
        run
    }
}
