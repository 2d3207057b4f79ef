//! Predicates on a value (`equals`, `matches`, lengths, numbers), their templates checked
//! before the run.

use std::collections::BTreeSet;

use crate::ground::load_error::LoadError;
use crate::ground::source::Pos;
use crate::language::dsl::compile::Compiler;
use crate::language::dsl::document;
use crate::language::dsl::document::Expectation;
use crate::language::dsl::scenario::expect::{CompareOp, Predicate};
use crate::language::dsl::template;

impl Compiler {
    /// The predicates of an expectation (taken out of it).
    pub(in crate::language::dsl::compile) fn predicates(
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
            if !matches!(vs.kind, crate::ground::yaml::value::TKind::Seq(_)) && !is_template {
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
    fn number_template<T>(
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
    pub(in crate::language::dsl::compile) fn length_templates(
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
    pub(in crate::language::dsl::compile) fn length_has_bound(
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
}
