//! Expectations: JSONPaths, predicates, regexes, schemas, durations and notifications,
//! each compiled once and checked for what can be known before the run.

use std::path::Path;

use regex::Regex;

use super::*;
use crate::language::dsl::document::Expectation;

/// Longest `within` of a `notifications` expectation.
const MAX_WITHIN: std::time::Duration = std::time::Duration::from_secs(60);

/// The node at a schema path (`/properties/a/pattern`) of a positioned value.
fn value_at<'v>(
    v: &'v crate::language::dsl::value::TValue,
    at: &str,
) -> Option<&'v crate::language::dsl::value::TValue> {
    use crate::language::dsl::value::TKind;
    at.split('/')
        .skip(1)
        .try_fold(v, |node, part| match &node.kind {
            TKind::Map(_) => node.get(part),
            TKind::Seq(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        })
}

impl Compiler {
    /// A path that may be a template (an expectation's `path`, a capture): its variables
    /// must be defined and its filters known; it is parsed once rendered.
    pub(super) fn path_expr(
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

    pub(super) fn jsonpath(&mut self, path: &At<String>) -> Option<CompiledPath> {
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

    pub(super) fn regex(&mut self, re: &At<String>) -> Option<Regex> {
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
    pub(super) fn schema(
        &mut self,
        schema: serde_json::Value,
        pos: Pos,
        inline: Option<&crate::language::dsl::value::TValue>,
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

    /// The predicates of an expectation (taken out of it).
    pub(super) fn predicates(
        &mut self,
        e: &mut Expectation,
        pos: &Pos,
        known: &BTreeSet<String>,
    ) -> Option<Vec<Predicate>> {
        let mut predicates = Vec::new();
        for v in [&e.equals, &e.not_equals, &e.contains]
            .into_iter()
            .flatten()
        {
            self.check_templates(v, known);
        }
        if let Some(v) = e.equals.take() {
            predicates.push(Predicate::Equals(v));
        }
        if let Some(v) = e.not_equals.take() {
            predicates.push(Predicate::NotEquals(v));
        }
        if let Some(v) = e.contains.take() {
            predicates.push(Predicate::Contains(v));
        }
        if let Some(re) = &e.matches {
            predicates.push(Predicate::Matches(self.regex(re)?));
        }
        if let Some(t) = &e.type_ {
            predicates.push(Predicate::Type(t.value));
        }
        if let Some(l) = e.length.take() {
            if !self.length_has_bound(&l, "length", pos) || !self.length_templates(&l, known, pos) {
                return None;
            }
            predicates.push(Predicate::Length(l));
        }
        if let Some(x) = e.exists {
            predicates.push(Predicate::Exists(x));
        }
        if let Some(a) = e.absent {
            predicates.push(Predicate::Exists(!a));
        }
        if let Some(vs) = e.one_of.take() {
            self.check_templates(&vs, known);
            let is_template = vs.as_str().is_some_and(template::is_template);
            if !matches!(vs.kind, crate::language::dsl::value::TKind::Seq(_)) && !is_template {
                self.errors.push(
                    LoadError::at(self.pos(vs.line, vs.col), "`oneOf` needs a list").with_help(
                        "give a list such as `[a, b]`, or a template that renders to a list",
                    ),
                );
                return None;
            }
            predicates.push(Predicate::OneOf(vs));
        }
        if let Some(u) = e.unique {
            predicates.push(Predicate::Unique(u));
        }
        if let Some(i) = e.increasing {
            predicates.push(Predicate::Increasing(i));
        }
        if let Some(v) = e.valid_schema {
            predicates.push(Predicate::ValidSchema(v));
        }
        if let Some(m) = &e.min_matches {
            if m.value == 0 {
                self.errors.push(
                    LoadError::at(self.at(m), "`minMatches: 0` demands nothing")
                        .with_help("give 1 or more; without `minMatches` a path that matched nothing passes, with a note"),
                );
                return None;
            }
            predicates.push(Predicate::MinMatches(m.value));
        }
        for (op, bound) in [
            (CompareOp::Gt, e.gt.take()),
            (CompareOp::Gte, e.gte.take()),
            (CompareOp::Lt, e.lt.take()),
            (CompareOp::Lte, e.lte.take()),
        ] {
            if let Some(b) = bound {
                if !self.number_template(&b, known, pos) {
                    return None;
                }
                if let document::Num::Value(v) = b
                    && !v.is_finite()
                {
                    self.errors.push(
                        LoadError::at(
                            pos.clone(),
                            format!("`{}` needs a finite number", op.name()),
                        )
                        .with_help("NaN and infinity compare with nothing"),
                    );
                    return None;
                }
                predicates.push(Predicate::Compare(op, b));
            }
        }
        Some(predicates)
    }

    /// A templated number (`"{{ min_tools }}"`): a template, whose variables are defined.
    /// A plain string is no number.
    /// `near`: where to point when the value has no position of its own (read inside
    /// `length: {...}`, a comparison whose form is decided by its keys).
    pub(super) fn number_template<T>(
        &mut self,
        n: &document::Num<T>,
        known: &BTreeSet<String>,
        near: &Pos,
    ) -> bool {
        let document::Num::Template(t) = n else {
            return true;
        };
        let at = if t.line == 0 {
            near.clone()
        } else {
            self.at(t)
        };
        if !template::is_template(t) {
            self.errors.push(
                LoadError::at(at, format!("`{}` is not a number", **t)).with_help(
                    "give a number, or a template that renders to one: `\"{{ min_tools }}\"`",
                ),
            );
            return false;
        }
        let before = self.errors.0.len();
        self.check_template_str(t, at, known);
        self.errors.0.len() == before
    }

    /// The templated bounds of a `length`, `count` or `rounds`.
    pub(super) fn length_templates(
        &mut self,
        l: &document::LengthSpec,
        known: &BTreeSet<String>,
        near: &Pos,
    ) -> bool {
        match l {
            document::LengthSpec::Exact(n) => self.number_template(n, known, near),
            document::LengthSpec::Compare(c) => {
                // Every bound is checked, so that all their mistakes are told at once.
                let mut ok = true;
                for n in [&c.gt, &c.gte, &c.lt, &c.lte].into_iter().flatten() {
                    ok &= self.number_template(n, known, near);
                }
                ok
            }
        }
    }

    /// A `length` or `count` comparison names at least one bound.
    pub(super) fn length_has_bound(
        &mut self,
        l: &document::LengthSpec,
        key: &str,
        pos: &Pos,
    ) -> bool {
        if let document::LengthSpec::Compare(c) = l
            && c.gt.is_none()
            && c.gte.is_none()
            && c.lt.is_none()
            && c.lte.is_none()
        {
            self.errors.push(
                LoadError::at(pos.clone(), format!("`{key}` comparison without a bound"))
                    .with_help(format!(
                        "give a number or at least one of `gt`, `gte`, `lt`, `lte`, e.g. `{key}: {{gte: 1}}`"
                    )),
            );
            return false;
        }
        true
    }

    /// A `duration` expectation: each bound parsed (and range-checked) as a timeout is.
    pub(super) fn duration(
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
    pub(super) fn notifications(
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

    pub(super) fn schema_file(&mut self, file: &At<String>, pos: Pos) -> Option<serde_json::Value> {
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

impl Compiler {
    /// `taskStatus`: each status one of the spec's `TaskStatus` values.
    fn task_status(&mut self, spec: At<document::TaskStatusSpec>, pos: Pos) -> Option<Expect> {
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
