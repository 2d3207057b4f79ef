//! One step: its request (or action), captures, retries, and the contract check.

use std::path::Path;

use super::*;
use crate::language::dsl::document::Level;
use crate::protocol::rules::{Rule, RuleLevel};

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
        let step = step.value;
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
        let timeout = step.timeout.as_ref().and_then(|t| {
            match crate::language::dsl::limits::duration(t, &crate::language::dsl::limits::TIMEOUT)
            {
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
        });
        let retry = match &step.retry {
            None => None,
            Some(r) => {
                let interval = match &r.interval {
                    None => Some(std::time::Duration::from_millis(100)),
                    Some(i) => {
                        match crate::language::dsl::limits::duration(
                            i,
                            &crate::language::dsl::limits::RETRY_INTERVAL,
                        ) {
                            Ok(d) => Some(d),
                            Err(e) => {
                                self.errors.push(
                                    LoadError::at(
                                        self.at(i),
                                        format!("invalid interval `{}`: {e}", **i),
                                    )
                                    .with_help("expected a duration such as `200ms` or `1s`"),
                                );
                                None
                            }
                        }
                    }
                };
                if !crate::language::dsl::limits::RETRY_COUNT.contains(&r.count) {
                    self.errors.push(
                        LoadError::at(
                            self.at(r),
                            format!("retry count {} is out of range", r.count),
                        )
                        .with_help(format!(
                            "expected {} extra attempts",
                            crate::language::dsl::limits::describe(
                                &crate::language::dsl::limits::RETRY_COUNT
                            )
                        )),
                    );
                }
                interval.map(|d| (r.count, d))
            }
        };
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
        if given != 1 {
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
            return None;
        }
        let action = if let Some(r) = step.request {
            let r = r.value;
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
        } else if let Some(n) = step.notification {
            let n = n.value;
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
        } else if step.handshake.as_ref().is_some_and(|h| h.value) {
            Action::Handshake
        } else if let Some(c) = step.check {
            if !step.expect.is_empty() {
                return self.takes_no_expect(
                    self.at(&c),
                    "check",
                    "a built-in check decides for itself what passes",
                );
            }
            let c = c.value;
            let wants_feature = *c.kind == document::CheckKind::DeprecatedFeatureUnused;
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
            let wire = c.kind.value == crate::language::dsl::document::CheckKind::WireValid;
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
                    LoadError::at(pos.clone(), format!("`{method}` is not a list method"))
                        .with_help("expected tools/list, prompts/list, resources/list or resources/templates/list"),
                );
                return None;
            }
            if let Some(n) = c
                .count
                .as_ref()
                .filter(|n| !crate::language::dsl::limits::CHECK_COUNT.contains(&n.value))
            {
                let message = if n.value == 0 {
                    "`count` must be at least 1".to_string()
                } else {
                    format!("`count` {} is out of range", n.value)
                };
                self.errors
                    .push(LoadError::at(self.at(n), message).with_help(format!(
                        "expected {}, e.g. `count: 32`",
                        crate::language::dsl::limits::describe(
                            &crate::language::dsl::limits::CHECK_COUNT
                        )
                    )));
                return None;
            }
            Action::Check {
                kind: c.kind.value,
                method,
                options: crate::language::dsl::scenario::CheckOptions {
                    safe_tools: c.safe_tools,
                    count: c.count.map(|n| n.value),
                    feature,
                },
            }
        } else if let Some(r) = step.roots {
            if !step.expect.is_empty() {
                return self.takes_no_expect(
                    self.at(&r),
                    "roots",
                    "judge what the server asks on a later step, e.g. `asked: roots/list`",
                );
            }
            Action::Roots(self.roots(r.value, known))
        } else if let Some(c) = step.contract {
            if !step.expect.is_empty() {
                return self.takes_no_expect(
                    self.at(&c),
                    "contract",
                    "the rules file decides which changes fail (default: breaking changes)",
                );
            }
            self.contract(c.value)?
        } else {
            let raw = step.raw.expect("one action is present").value;
            self.check_templates(&raw.body, known);
            self.check_map_templates(raw.headers.as_ref(), known);
            Action::Raw {
                body: raw.body,
                headers: raw.headers.unwrap_or_default(),
                http_method: raw.http_method.map(|m| m.value.to_uppercase()),
                fresh: raw.fresh,
            }
        };
        let is_notification = matches!(action, Action::Notification { .. });
        let mut expects = Vec::new();
        for e in step.expect {
            let epos = self.at(&e);
            if let Some(compiled) = self.expectation(e.value, epos.clone(), known) {
                let about_notifications = matches!(compiled.kind, ExpectKind::Notifications { .. });
                if is_notification
                    && !about_notifications
                    && !matches!(
                        compiled.kind,
                        ExpectKind::NoResponse(_) | ExpectKind::Http { .. }
                    )
                {
                    self.errors.push(
                        LoadError::at(epos, "a notification has no response to check").with_help(
                            "notifications allow only `noResponse`, `http` and `notifications` expectations",
                        ),
                    );
                    continue;
                }
                if matches!(compiled.kind, ExpectKind::Duration(_))
                    && matches!(action, Action::Handshake)
                {
                    self.errors.push(
                        LoadError::at(epos, "a `handshake` step sends nothing to time")
                            .with_help("check `duration` on a step that sends a request"),
                    );
                    continue;
                }
                if about_notifications && matches!(action, Action::Handshake) {
                    self.errors.push(
                        LoadError::at(epos, "a `handshake` step keeps no notifications")
                            .with_help("check notifications on a step that sends a request"),
                    );
                    continue;
                }
                expects.push(compiled);
            }
        }
        let mut captures = Vec::new();
        for (name, doc) in step.capture {
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

    /// A `kind` step (at `at`) that has `expect`: the error, and no step.
    fn takes_no_expect(&mut self, at: Pos, kind: &str, help: &str) -> Option<Step> {
        self.errors
            .push(LoadError::at(at, format!("a `{kind}` step takes no `expect`")).with_help(help));
        None
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

    pub(super) fn contract(&mut self, c: document::ContractCheck) -> Option<Action> {
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
    pub(super) fn task(&mut self, t: At<document::TaskDoc>, method: &At<String>) -> TaskRun {
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
